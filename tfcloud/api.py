"""The SDK's face: ``tfcloud.run()``, compatible with tensorflow-cloud's ``run()``, over :mod:`tfcloud.sdk`.

tensorflow-cloud users switch by changing the import: the same positional arguments, its deprecated
``docker_base_image=``/``docker_image_bucket_name=``, and a result that answers ``result["job_id"]`` and
``result["docker_image"]``. Where tfcloud deliberately differs, docs/compat.md says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, overload

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.machines import MachineConfig
    from tfcloud.plan import Plan
    from tfcloud.sdk import Job, JobOptions
    from tfcloud.spec import DockerConfig

__all__ = ["NEW_OPTIONS", "remote", "run"]

#: Keyword arguments tfcloud adds to tensorflow-cloud's ``run()``.
NEW_OPTIONS = (
    "ps_config",
    "ps_count",
    "evaluator_config",
    "evaluator_count",
    "target",
    "project",
    "region",
    "dry_run",
    "display_name",
    "env",
    "emulator_host",
    "image_repository",
    "staging_bucket",
    "timeout",
    "restart_on_worker_restart",
    "spot",
    "max_restarts",
    "network",
    "base_output_dir",
    "scheduling",
    "max_wait",
    "reservation",
    "disable_retries",
    "persistent_resource",
    "tensorboard",
    "experiment",
    "experiment_run",
    "context_dir",
    "ray_address",
    "ray_cpus",
)


def remote() -> bool:
    """True inside a job that tfcloud launched (locally or in the cloud), False on the user's machine."""
    return os.environ.get("TFCLOUD_REMOTE") == "1"


@overload
def run(
    entry_point: str | os.PathLike[str] | None = None,
    requirements_txt: str | os.PathLike[str] | None = None,
    docker_config: DockerConfig | str = "auto",
    distribution_strategy: str | None = "auto",
    chief_config: MachineConfig | str = "auto",
    worker_config: MachineConfig | str | None = "auto",
    worker_count: int = 0,
    entry_point_args: Sequence[str] | None = None,
    stream_logs: bool = False,
    job_labels: Mapping[str, str] | None = None,
    service_account: str | None = None,
    *,
    docker_base_image: str | None = None,
    docker_image_bucket_name: str | None = None,
    ps_config: MachineConfig | str | None = "auto",
    ps_count: int = 0,
    evaluator_config: MachineConfig | str | None = "auto",
    evaluator_count: int = 0,
    target: str | None = None,
    project: str | None = None,
    region: str | None = None,
    dry_run: Literal[True],
    display_name: str | None = None,
    env: Mapping[str, str] | None = None,
    emulator_host: str | None = None,
    image_repository: str | None = None,
    staging_bucket: str | None = None,
    timeout: int | None = None,
    restart_on_worker_restart: bool = False,
    spot: bool = False,
    max_restarts: int | None = None,
    network: str | None = None,
    base_output_dir: str | None = None,
    scheduling: str | None = None,
    max_wait: str | int | None = None,
    reservation: str | None = None,
    disable_retries: bool = False,
    persistent_resource: str | None = None,
    tensorboard: str | None = None,
    experiment: str | None = None,
    experiment_run: str | None = None,
    context_dir: str | os.PathLike[str] | None = None,
    ray_address: str | None = None,
    ray_cpus: float | None = None,
) -> Plan: ...


@overload
def run(
    entry_point: str | os.PathLike[str] | None = None,
    requirements_txt: str | os.PathLike[str] | None = None,
    docker_config: DockerConfig | str = "auto",
    distribution_strategy: str | None = "auto",
    chief_config: MachineConfig | str = "auto",
    worker_config: MachineConfig | str | None = "auto",
    worker_count: int = 0,
    entry_point_args: Sequence[str] | None = None,
    stream_logs: bool = False,
    job_labels: Mapping[str, str] | None = None,
    service_account: str | None = None,
    *,
    docker_base_image: str | None = None,
    docker_image_bucket_name: str | None = None,
    ps_config: MachineConfig | str | None = "auto",
    ps_count: int = 0,
    evaluator_config: MachineConfig | str | None = "auto",
    evaluator_count: int = 0,
    target: str | None = None,
    project: str | None = None,
    region: str | None = None,
    dry_run: Literal[False] = False,
    display_name: str | None = None,
    env: Mapping[str, str] | None = None,
    emulator_host: str | None = None,
    image_repository: str | None = None,
    staging_bucket: str | None = None,
    timeout: int | None = None,
    restart_on_worker_restart: bool = False,
    spot: bool = False,
    max_restarts: int | None = None,
    network: str | None = None,
    base_output_dir: str | None = None,
    scheduling: str | None = None,
    max_wait: str | int | None = None,
    reservation: str | None = None,
    disable_retries: bool = False,
    persistent_resource: str | None = None,
    tensorboard: str | None = None,
    experiment: str | None = None,
    experiment_run: str | None = None,
    context_dir: str | os.PathLike[str] | None = None,
    ray_address: str | None = None,
    ray_cpus: float | None = None,
) -> Job | None: ...


@overload
def run(
    entry_point: str | os.PathLike[str] | None = None,
    requirements_txt: str | os.PathLike[str] | None = None,
    docker_config: DockerConfig | str = "auto",
    distribution_strategy: str | None = "auto",
    chief_config: MachineConfig | str = "auto",
    worker_config: MachineConfig | str | None = "auto",
    worker_count: int = 0,
    entry_point_args: Sequence[str] | None = None,
    stream_logs: bool = False,
    job_labels: Mapping[str, str] | None = None,
    service_account: str | None = None,
    *,
    docker_base_image: str | None = None,
    docker_image_bucket_name: str | None = None,
    ps_config: MachineConfig | str | None = "auto",
    ps_count: int = 0,
    evaluator_config: MachineConfig | str | None = "auto",
    evaluator_count: int = 0,
    target: str | None = None,
    project: str | None = None,
    region: str | None = None,
    dry_run: bool = False,
    display_name: str | None = None,
    env: Mapping[str, str] | None = None,
    emulator_host: str | None = None,
    image_repository: str | None = None,
    staging_bucket: str | None = None,
    timeout: int | None = None,
    restart_on_worker_restart: bool = False,
    spot: bool = False,
    max_restarts: int | None = None,
    network: str | None = None,
    base_output_dir: str | None = None,
    scheduling: str | None = None,
    max_wait: str | int | None = None,
    reservation: str | None = None,
    disable_retries: bool = False,
    persistent_resource: str | None = None,
    tensorboard: str | None = None,
    experiment: str | None = None,
    experiment_run: str | None = None,
    context_dir: str | os.PathLike[str] | None = None,
    ray_address: str | None = None,
    ray_cpus: float | None = None,
) -> Job | Plan | None: ...


def run(
    entry_point: str | os.PathLike[str] | None = None,
    requirements_txt: str | os.PathLike[str] | None = None,
    docker_config: DockerConfig | str = "auto",
    distribution_strategy: str | None = "auto",
    chief_config: MachineConfig | str = "auto",
    worker_config: MachineConfig | str | None = "auto",
    worker_count: int = 0,
    entry_point_args: Sequence[str] | None = None,
    stream_logs: bool = False,
    job_labels: Mapping[str, str] | None = None,
    service_account: str | None = None,
    *,
    docker_base_image: str | None = None,
    docker_image_bucket_name: str | None = None,
    ps_config: MachineConfig | str | None = "auto",
    ps_count: int = 0,
    evaluator_config: MachineConfig | str | None = "auto",
    evaluator_count: int = 0,
    target: str | None = None,
    project: str | None = None,
    region: str | None = None,
    dry_run: bool = False,
    display_name: str | None = None,
    env: Mapping[str, str] | None = None,
    emulator_host: str | None = None,
    image_repository: str | None = None,
    staging_bucket: str | None = None,
    timeout: int | None = None,
    restart_on_worker_restart: bool = False,
    spot: bool = False,
    max_restarts: int | None = None,
    network: str | None = None,
    base_output_dir: str | None = None,
    scheduling: str | None = None,
    max_wait: str | int | None = None,
    reservation: str | None = None,
    disable_retries: bool = False,
    persistent_resource: str | None = None,
    tensorboard: str | None = None,
    experiment: str | None = None,
    experiment_run: str | None = None,
    context_dir: str | os.PathLike[str] | None = None,
    ray_address: str | None = None,
    ray_cpus: float | None = None,
    **unknown: object,
) -> Job | Plan | None:
    """Run ``entry_point`` (a .py script or .ipynb notebook) as a distributed TensorFlow job.

    The positional arguments are tensorflow-cloud's; ``docker_base_image`` and ``docker_image_bucket_name``
    (tensorflow-cloud's deprecated spellings) fill ``docker_config.parent_image`` and
    ``docker_config.image_build_bucket`` when those are unset. tfcloud adds more worker pools (``ps_*``,
    ``evaluator_*``), the ``target`` (``"local"``, the default, ``"vertex"`` or ``"ray"``) and its options (``project``,
    ``region``, ``network``, ``spot``, ``timeout``, ``restart_on_worker_restart``, ``base_output_dir``, the capacity
    options ``scheduling``, ``max_wait``, ``reservation``, ``disable_retries``, ``persistent_resource``, and
    ``tensorboard``, ``experiment``, ``experiment_run``: see docs/vertex.md; for Ray
    ``ray_address``, ``ray_cpus``: see docs/ray.md), ``max_restarts`` for every target (docs/recovery.md),
    ``display_name``, ``env``, ``context_dir`` and the endpoint settings; ``dry_run`` and ``stream_logs`` are
    options of this call.

    - Inside a launched job (:func:`tfcloud.remote` is True) it returns ``None`` at once and does nothing.
    - ``dry_run=True`` returns the :class:`~tfcloud.plan.Plan` without submitting anything.
    - Otherwise it returns the :class:`~tfcloud.sdk.Job` (``info()``, ``logs()``, ``wait()``, ``cancel()``;
      ``job["job_id"]``, ``job["docker_image"]``). With ``stream_logs=True`` it first follows the logs until
      the job ends, prints how long each stage took (``Stages: context … · run …``, as ``tfcloud submit``), and
      raises :class:`~tfcloud.errors.JobFailedError` when the job did not succeed.
    - With ``entry_point=None`` from a script, the script itself is submitted and, as in tensorflow-cloud,
      the local process exits afterwards (with the job's exit code when logs were streamed). In a
      notebook the running notebook is submitted and the job is returned; the kernel keeps running.
    """
    if remote():
        return None
    if unknown:
        raise ValidationError("run() keyword argument",
                              "one of tensorflow-cloud's arguments or " + ", ".join(NEW_OPTIONS), sorted(unknown)[0])
    for name, value in (("stream_logs", stream_logs), ("dry_run", dry_run)):
        if not isinstance(value, bool):
            raise ValidationError(name, "a bool", value)
    from tfcloud import sdk

    exit_after = False
    if entry_point is None:
        from tfcloud.discovery import current_entry_point

        found, in_notebook = current_entry_point()
        entry_point, exit_after = found, not in_notebook
    options: JobOptions = {
        "requirements_txt": requirements_txt,
        "docker_config": _docker_config(docker_config, docker_base_image, docker_image_bucket_name),
        "distribution_strategy": distribution_strategy, "chief_config": chief_config,
        "worker_config": worker_config, "worker_count": worker_count, "entry_point_args": entry_point_args,
        "job_labels": job_labels, "service_account": service_account, "ps_config": ps_config,
        "ps_count": ps_count, "evaluator_config": evaluator_config, "evaluator_count": evaluator_count,
        "target": target, "project": project, "region": region, "display_name": display_name, "env": env,
        "emulator_host": emulator_host, "image_repository": image_repository, "staging_bucket": staging_bucket,
        "timeout": timeout, "restart_on_worker_restart": restart_on_worker_restart, "spot": spot,
        "max_restarts": max_restarts, "network": network, "base_output_dir": base_output_dir,
        "scheduling": scheduling, "max_wait": max_wait, "reservation": reservation,
        "disable_retries": disable_retries, "persistent_resource": persistent_resource, "tensorboard": tensorboard,
        "experiment": experiment, "experiment_run": experiment_run, "context_dir": context_dir,
        "ray_address": ray_address, "ray_cpus": None if ray_cpus is None else str(ray_cpus),
    }
    if dry_run:
        return sdk.plan(entry_point, **options)
    job = sdk.submit(entry_point, **options)
    code = 0
    if stream_logs:
        try:
            code = sdk.follow(job, stages=True)  # as `tfcloud submit`: ends with the stage durations
        except KeyboardInterrupt:
            sdk.interrupted(job, cancel=sdk.cancels_on_interrupt(job))
            raise
    if exit_after:
        sys.exit(code)
    error = job.failure() if code else None
    if error is not None:
        raise error
    return job


def _docker_config(value: object, base_image: str | None, bucket: str | None) -> object:
    """tensorflow-cloud's deprecated ``docker_base_image``/``docker_image_bucket_name`` fill the DockerConfig's
    ``parent_image``/``image_build_bucket`` when those are unset (its own values win)."""
    from dataclasses import replace

    from tfcloud.spec import DockerConfig

    for name, given in (("docker_base_image", base_image), ("docker_image_bucket_name", bucket)):
        if given is not None and (not isinstance(given, str) or not given):
            raise ValidationError(name, "a non-empty string", given)
    if base_image is None and bucket is None:
        return value
    if isinstance(value, str) and value.lower() == "auto":
        value = DockerConfig()
    if not isinstance(value, DockerConfig):
        return value  # build_spec names the problem
    return replace(value, parent_image=value.parent_image or base_image,
                   image_build_bucket=value.image_build_bucket or bucket)
