"""Google's documented rules, enforced before anything is uploaded or built: the job's CustomJob is built (a pure
function, :func:`tfcloud.google.vertex.customjob.custom_job_body`, which the request is made by) and checked against
:mod:`tfcloud.google.rules` (the table the emulator checks too), each :class:`~tfcloud.google.rules.Violation`
becoming a :class:`~tfcloud.errors.ValidationError` that names tfcloud's option, what Google expects, what was
received, the fix, and the rule with its source."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.google.rules import Violation
    from tfcloud.google.vertex.place import VertexSetup
    from tfcloud.job.spec import JobSpec

__all__ = ["check_google_rules", "check_persistent_resource_request", "option_for", "to_error", "violations"]

_POOL = re.compile(r"^job_spec\.worker_pool_specs\[(\d+)\](.*)$")
_CLUSTER_POOL = re.compile(r"^resource_pools\[\d+\].*$")
_FIELDS = {"location": "region", "display_name": "display_name", "job_spec.tensorboard": "tensorboard",
           "job_spec.service_account": "service_account", "job_spec.experiment": "experiment",
           "job_spec.scheduling.timeout": "timeout", "job_spec.scheduling.max_wait_duration": "max_wait"}


def option_for(field: str, *, tpu_first: bool = False) -> str:
    """Google's field path as the tfcloud option that sets it (a pool's machine: ``chief_config``,
    ``worker_config``...; a reservation: ``reservation``). ``tpu_first``: pool 0 is a TPU, which came from
    ``worker_config`` (a TPU worker is the job's one pool)."""
    from tfcloud.google.vertex.customjob import POOL_ORDER

    match = _POOL.match(field)
    if match:
        index, rest = int(match[1]), match[2]
        role = POOL_ORDER[index].value if index < len(POOL_ORDER) else f"pool{index}"
        if index == 0 and tpu_first:
            role = "worker"
        return "reservation" if ".reservation_affinity" in rest else f"{role}_config"
    if field.startswith("labels"):
        return "job_labels"
    return _FIELDS.get(field, field)


def to_error(violation: Violation, *, tpu_first: bool = False) -> ValidationError:
    """A violation as the error the CLI prints (exit 2)."""
    return ValidationError(option_for(violation.field, tpu_first=tpu_first), violation.expected,
                           f"<{violation.received}>",
                           hint=f"{violation.hint} (Google's rule {violation.rule}, on {violation.field}: "
                                f"{violation.source}.)")


def violations(spec: JobSpec, target: VertexSetup, *, region: str,
               today: datetime.date | None = None) -> list[Violation]:
    """Every documented rule the CustomJob of ``spec`` on ``target`` (its Vertex AI target's value) breaks in
    ``region`` on ``today`` (None: the day of the run)."""
    from tfcloud.google.rules import check_custom_job, check_framework, check_image_architecture, check_sdk_rules
    from tfcloud.google.vertex.customjob import custom_job_body
    from tfcloud.job.spec import Strategy

    request: dict[str, Any] = custom_job_body(spec, target, image_uri="IMAGE", submission_id="check",
                                              region=region, parent=f"projects/PROJECT/locations/{region}")
    pools = request["job_spec"]["worker_pool_specs"]
    found = check_custom_job(request, location=region, today=today)
    found += check_sdk_rules(request)
    if spec.strategy is not Strategy.NONE:  # the launcher runs a TensorFlow strategy
        found += check_framework(pools, "tensorflow")
        if not spec.docker_config.parent_image:  # the image tfcloud writes: on a TPU Pod, the pod base and CMD
            from tfcloud.google.rules import check_tpu_pod_image
            from tfcloud.image.dockerfile import TPU_BASE_IMAGE, tpu_pod_base

            pod = tpu_pod_base(spec)
            found += check_tpu_pod_image(pools, base_image=pod.value if pod else TPU_BASE_IMAGE,
                                         runs_as_cmd=pod is not None)
    from tfcloud.google.catalog.machines import IMAGE_ARCHITECTURES

    found += check_image_architecture(pools, IMAGE_ARCHITECTURES)
    return found


def check_google_rules(spec: JobSpec, target: VertexSetup, *, region: str, today: datetime.date | None = None) -> None:
    """Raise the first violation as a :class:`ValidationError` (exit 2): first a machine no job can run on yet
    (:func:`tfcloud.google.catalog.machines.not_yet_runnable`, the reason ``tfcloud machines`` shows), then Google's
    rules."""
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS, not_yet_runnable

    for pool in spec.pools:
        reason = not_yet_runnable(pool.machine)
        if reason is not None:
            name = next((n for n, c in COMMON_MACHINE_CONFIGS.items() if c == pool.machine), pool.machine.machine_type)
            raise ValidationError(f"{pool.role.value}_config", "a machine a job can run on", name,
                                  hint=f"{name} is {reason}.")
    found = violations(spec, target, region=region, today=today)
    if found:
        raise to_error(found[0], tpu_first=spec.chief.machine.is_tpu)


def check_persistent_resource_request(resource: Mapping[str, Any], *, region: str,
                                      today: datetime.date | None = None) -> None:
    """A PersistentResource request (``tfcloud cluster create``) against Google's rules: each resource pool's
    machine, accelerator, region and boot disk, as a job's pools are checked. Raises the first violation (exit 2)."""
    from tfcloud.google.rules import check_persistent_resource

    found = check_persistent_resource(resource, location=region, today=today)
    if found:
        first = found[0]
        raise ValidationError("machine" if _CLUSTER_POOL.match(first.field)
                              else option_for(first.field), first.expected, f"<{first.received}>",
                              hint=f"{first.hint} (Google's rule {first.rule}, on {first.field}: {first.source}.)")
