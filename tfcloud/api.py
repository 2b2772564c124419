"""The SDK facade: ``tfcloud.run()``, compatible with tensorflow-cloud's ``run()``.

tensorflow-cloud users switch by changing the import. Where tfcloud deliberately differs, docs/compat.md
says so.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError
from tfcloud.spec import Target

if TYPE_CHECKING:
    from tfcloud.backends.base import JobHandle
    from tfcloud.plan import Plan
    from tfcloud.settings import Settings
    from tfcloud.spec import JobSpec

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
    "context_dir",
)
_SETTINGS_OPTIONS = ("target", "project", "region", "emulator_host", "image_repository", "staging_bucket")


def remote() -> bool:
    """True inside a job that tfcloud launched (locally or in the cloud), False on the user's machine."""
    return os.environ.get("TFCLOUD_REMOTE") == "1"


def run(
    entry_point: str | os.PathLike[str] | None = None,
    requirements_txt: str | os.PathLike[str] | None = None,
    docker_config: Any = "auto",
    distribution_strategy: Any = "auto",
    chief_config: Any = "auto",
    worker_config: Any = "auto",
    worker_count: int = 0,
    entry_point_args: list[str] | None = None,
    stream_logs: bool = False,
    job_labels: dict[str, str] | None = None,
    service_account: str | None = None,
    **new_options: Any,
) -> JobHandle | Plan | None:
    """Run ``entry_point`` (a .py script or .ipynb notebook) as a distributed TensorFlow job.

    Same arguments as tensorflow-cloud's ``run()``, plus ``ps_config``, ``ps_count``, ``evaluator_config``,
    ``evaluator_count``, ``target`` (``"local"`` or ``"vertex"``), ``project``, ``region``, ``dry_run``,
    ``display_name``, ``env`` and the endpoint settings.

    - Inside a launched job (:func:`tfcloud.remote` is True) it returns ``None`` at once and does nothing.
    - ``dry_run=True`` returns the :class:`~tfcloud.plan.Plan` without submitting anything.
    - Otherwise it returns the job's handle (``status()``, ``logs()``, ``wait()``, ``cancel()``); with
      ``stream_logs=True`` it first follows the logs until the job ends.
    - With ``entry_point=None`` from a script, the script itself is submitted and, as in tensorflow-cloud,
      the local process exits afterwards (with the job's exit code when logs were streamed). In a
      notebook the running notebook is submitted and the handle is returned; the kernel keeps running.
    """
    if remote():
        return None
    unknown = sorted(set(new_options) - set(NEW_OPTIONS))
    if unknown:
        raise ValidationError(
            "run() keyword argument",
            "one of tensorflow-cloud's arguments or " + ", ".join(NEW_OPTIONS),
            unknown[0],
        )
    from tfcloud.settings import resolve_settings
    from tfcloud.validate import build_spec

    in_notebook = False
    exit_after = False
    if entry_point is None:
        from tfcloud.discovery import current_entry_point

        found, in_notebook = current_entry_point()
        entry_point = found
        exit_after = not in_notebook
    settings = resolve_settings({k: new_options.get(k) for k in _SETTINGS_OPTIONS})
    spec_options = {k: v for k, v in new_options.items() if k not in _SETTINGS_OPTIONS}
    spec = build_spec(
        entry_point=entry_point,
        requirements_txt=requirements_txt,
        docker_config=docker_config,
        distribution_strategy=distribution_strategy,
        chief_config=chief_config,
        worker_config=worker_config,
        worker_count=worker_count,
        entry_point_args=entry_point_args,
        stream_logs=stream_logs,
        job_labels=job_labels,
        service_account=service_account,
        target=settings.target,
        project=settings.project,
        region=settings.region,
        **spec_options,
    )
    if spec.dry_run:
        from tfcloud.plan import make_plan

        return make_plan(spec)
    handle = submit_spec(spec, settings)
    code = 0
    if spec.stream_logs:
        try:
            code = follow(handle)
        except KeyboardInterrupt:
            interrupted(handle, cancel=spec.target is Target.LOCAL)
            raise
    if exit_after:
        sys.exit(code)
    return handle


def submit_spec(spec: JobSpec, settings: Settings, *, build_logs: bool = False,
                container: bool = False) -> JobHandle:
    """Submit a validated spec through every stage (the CLI's ``submit`` calls this too); build progress and
    the job's id go to the console."""
    from tfcloud.console import get_console
    from tfcloud.pipeline import submit

    console = get_console()
    handle = submit(spec, settings, console=console, build_logs=build_logs, container=container)
    console.print(f"Submitted job [bold]{handle.job_id}[/bold].")
    url = handle.info().console_url
    if url:
        console.print(f"Console: {url}", markup=False)
    return handle


def interrupted(handle: JobHandle, *, cancel: bool) -> None:
    """What Ctrl-C while following does: cancel the job (always for local jobs), or detach from it and say how
    to follow or cancel it later (the default for Vertex AI jobs, which keep running and keep costing)."""
    from tfcloud.console import get_console

    console = get_console()
    if cancel:
        console.print(f"Interrupted: cancelling {handle.job_id}.", markup=False)
        handle.cancel()
        handle.wait(timeout=60)
    else:
        console.print(f"Detached: {handle.job_id} keeps running.\n"
                      f"  Follow it again: tfcloud logs {handle.job_id} -f\n"
                      f"  Cancel it:       tfcloud cancel {handle.job_id}", markup=False)


def follow(handle: JobHandle, *, replica: str | None = None) -> int:
    """Stream the job's logs to the terminal (stdout, one prefix per replica) until it ends and its last lines
    are in; on failure say why on stderr. Returns 0 when the job succeeded, 1 otherwise. Ctrl-C propagates
    as KeyboardInterrupt to the caller, who decides whether to cancel or detach."""
    from tfcloud.backends.base import failure
    from tfcloud.console import get_console
    from tfcloud.logview import LogPrinter
    from tfcloud.states import JobState

    printer = LogPrinter()
    for line in handle.logs(follow=True, replica=replica):
        printer.print(line)
    info = handle.wait()
    console = get_console()
    if info.state is JobState.SUCCEEDED:
        console.print(f"Job {handle.job_id} succeeded.", style="green", markup=False)
        return 0
    error = failure(handle)
    if error is None:
        console.print(f"Job {handle.job_id} {info.state.value}.", style="red", markup=False)
    else:
        console.print(error.summary, style="bold red", markup=False)
        if error.log_tail:
            console.print(error.log_tail, markup=False, highlight=False)
    return 1

