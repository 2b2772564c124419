"""The SDK's face: ``tfcloud.run()``, compatible with tensorflow-cloud's ``run()``, over :mod:`tfcloud.sdk`.

tensorflow-cloud users switch by changing the import: the same positional arguments, its deprecated
``docker_base_image=``/``docker_image_bucket_name=``, and a result that answers ``result["job_id"]`` and
``result["docker_image"]``. Where tfcloud deliberately differs, ``tfcloud docs compat``
says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.flow.plan import Plan
    from tfcloud.google.catalog.machines import MachineConfig
    from tfcloud.job.spec import DockerConfig
    from tfcloud.sdk import Job, JobOptions

__all__ = ["NEW_OPTIONS", "known_options", "remote", "run"]

#: The job's own keyword arguments tfcloud adds to tensorflow-cloud's ``run()``; a target's options (``spot``,
#: ``ray_address``, ...) are declared by the target (:mod:`tfcloud.targets`), and ``run()`` takes those too.
NEW_OPTIONS = (
    "ps_config",
    "ps_count",
    "evaluator_config",
    "evaluator_count",
    "target",
    "dry_run",
    "display_name",
    "env",
    "secrets",
    "data",
    "image_repository",
    "context_dir",
    "target_options",
)


def known_options(target: object = None) -> list[str]:
    """Every keyword ``run()`` takes besides tensorflow-cloud's: :data:`NEW_OPTIONS` and every built-in target's
    options (and, when ``target`` names a plug-in, that target's)."""
    import tfcloud.targets as targets

    classes = targets.builtin_targets()
    if isinstance(target, str) and target not in targets.BUILTIN:
        classes.append(targets.get(target))
    elif isinstance(target, targets.Target):
        classes.append(type(target))
    names = [*NEW_OPTIONS]
    for cls in classes:
        names += [o.name for o in cls.options if o.name not in names]
    return names


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
    dry_run: Literal[True],
    **options: Any,
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
    dry_run: Literal[False] = False,
    **options: Any,
) -> Job | None: ...


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
    dry_run: bool = False,
    **options: Any,
) -> Job | Plan | None:
    """Run ``entry_point`` (a .py script or .ipynb notebook) as a distributed TensorFlow job.

    The positional arguments are tensorflow-cloud's; ``docker_base_image`` and ``docker_image_bucket_name``
    (tensorflow-cloud's deprecated spellings) fill ``docker_config.parent_image`` and
    ``docker_config.image_build_bucket`` when those are unset. tfcloud adds more worker pools (``ps_*``,
    ``evaluator_*``), the ``target`` (``"local"``, the default, ``"vertex"`` or ``"ray"``) and its options (``project``,
    ``region``, ``network``, ``spot``, ``timeout``, ``restart_on_worker_restart``, ``base_output_dir``; for Ray
    ``ray_address``, ``ray_cpus``: see ``tfcloud docs ray``), ``max_restarts`` for every target
    (``tfcloud docs recovery``), ``display_name``, ``env``, ``secrets`` and ``data``
    (``tfcloud docs data``), ``context_dir`` and the endpoint settings; ``dry_run`` and
    ``stream_logs`` are options of this call.

    - Inside a launched job (:func:`tfcloud.remote` is True) it returns ``None`` at once and does nothing.
    - ``dry_run=True`` returns the :class:`~tfcloud.flow.plan.Plan` without submitting anything.
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
    known = known_options(options.get("target"))
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValidationError("run() keyword argument", "one of tensorflow-cloud's arguments or "
                              + ", ".join(known), unknown[0])
    for name, value in (("stream_logs", stream_logs), ("dry_run", dry_run)):
        if not isinstance(value, bool):
            raise ValidationError(name, "a bool", value)
    from tfcloud import sdk

    exit_after = False
    if entry_point is None:
        from tfcloud.entry.discovery import current_entry_point

        found, in_notebook = current_entry_point()
        entry_point, exit_after = found, not in_notebook
    given: JobOptions = {
        "requirements_txt": requirements_txt,
        "docker_config": _docker_config(docker_config, docker_base_image, docker_image_bucket_name),
        "distribution_strategy": distribution_strategy, "chief_config": chief_config,
        "worker_config": worker_config, "worker_count": worker_count, "entry_point_args": entry_point_args,
        "job_labels": job_labels,
    }
    if service_account is not None:  # tensorflow-cloud's argument; a Vertex AI target option here
        given["service_account"] = service_account
    options = {**given, **options}
    if dry_run:
        return sdk.plan(entry_point, **options)
    job = sdk.submit(entry_point, **options)
    code = 0
    if stream_logs:
        try:
            code = sdk.follow(job.handle, stages=True)  # as `tfcloud submit`: ends with the stage durations
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

    from tfcloud.job.spec import DockerConfig

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
