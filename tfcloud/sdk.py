"""The SDK: one front door for every caller. ``run()`` (tfcloud.api) wraps it; each CLI command calls it.

- :func:`plan`: what a submission would do (the dry run): no credentials, TensorFlow or network.
- :func:`submit`: every stage, then the target's backend; returns a :class:`Job`.
- :func:`build`: the image only (``tfcloud build``).
- :func:`attach` / :func:`attached`: a job again by id; :func:`list_jobs`: a target's jobs as :class:`JobInfo`.
- :func:`follow`, :func:`watch`: stream a job's logs to the terminal until it ends (the CLI and
  ``run(stream_logs=True)``); while the job waits for resources a status line says so, and at the end one
  line says how long each stage took.
- :func:`create_cluster`, :func:`list_clusters`, :func:`delete_cluster`: Vertex AI persistent resources
  (``tfcloud cluster``).
- :func:`timeline`: how long each stage of a job took (:mod:`tfcloud.timeline`; ``tfcloud status --timeline``).

Options are ``run()``'s keyword names (:class:`JobOptions`); settings (``target``, ``project``, ``region``,
endpoints) resolve as flag > ``TFCLOUD_*`` > pyproject.toml > default, and :func:`tfcloud.validate.build_spec`
stays the one gate every option passes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from tfcloud.backends.base import JobInfo, LogLine, failure
from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from tfcloud.artifacts import ImageRef
    from tfcloud.backends.base import Backend, JobHandle
    from tfcloud.errors import JobFailedError
    from tfcloud.plan import Plan
    from tfcloud.settings import Settings
    from tfcloud.spec import JobSpec
    from tfcloud.states import JobState
    from tfcloud.study import StudyHandle, StudyInfo, TrialInfo
    from tfcloud.targets.vertex.clusters import ClusterInfo, ClusterService
    from tfcloud.timeline import Timeline

__all__ = [
    "Job",
    "JobOptions",
    "attach",
    "attached",
    "build",
    "create_cluster",
    "delete_cluster",
    "failure",
    "follow",
    "interrupted",
    "list_clusters",
    "list_jobs",
    "log_window",
    "make_spec",
    "plan",
    "submit",
    "timeline",
    "tune",
    "watch",
]

#: Options that are settings (resolved with env vars and pyproject.toml) rather than spec fields.
SETTINGS_OPTIONS = ("target", "project", "region", "emulator_host", "image_repository", "staging_bucket",
                    "ray_address", "ray_cpus")
#: Job ids that name their target by a prefix; any other id is a Vertex AI job.
_ID_PREFIXES = {"local-": "local", "ray-": "ray"}


class JobOptions(TypedDict, total=False):
    """The options of a job, by ``run()``'s keyword names (tensorflow-cloud's, then tfcloud's)."""

    requirements_txt: str | os.PathLike[str] | None
    docker_config: Any  # a tfcloud.DockerConfig or "auto"
    distribution_strategy: str | None
    chief_config: Any  # a tfcloud.MachineConfig, a name from COMMON_MACHINE_CONFIGS, or "auto"
    worker_config: Any
    worker_count: int
    entry_point_args: Sequence[str] | None
    job_labels: Mapping[str, str] | None
    service_account: str | None
    ps_config: Any
    ps_count: int
    evaluator_config: Any
    evaluator_count: int
    target: str | None
    project: str | None
    region: str | None
    display_name: str | None
    env: Mapping[str, str] | None
    emulator_host: str | None
    image_repository: str | None
    staging_bucket: str | None
    ray_address: str | None
    ray_cpus: str | None
    timeout: int | None
    restart_on_worker_restart: bool
    spot: bool
    max_restarts: int | None
    container: bool
    network: str | None
    base_output_dir: str | None
    scheduling: str | None
    max_wait: str | int | None
    reservation: str | None
    disable_retries: bool
    persistent_resource: str | None
    tensorboard: str | None
    experiment: str | None
    experiment_run: str | None
    context_dir: str | os.PathLike[str] | None


class Job:
    """A submitted job: its backend's handle (``info()``, ``logs()``, ``wait()``, ``cancel()``) and the image
    it runs. Like tensorflow-cloud's result, ``job["job_id"]`` and ``job["docker_image"]`` work too.
    ``close()`` (or ``with job:``) releases the backend's clients; a later call reopens what it needs."""

    def __init__(self, handle: JobHandle, *, image: ImageRef | None = None, backend: Backend | None = None) -> None:
        self.handle = handle
        self.image = image
        self._backend = backend

    def __enter__(self) -> Job:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __repr__(self) -> str:
        return f"Job({self.job_id!r})"

    @property
    def job_id(self) -> str:
        return self.handle.job_id

    def info(self) -> JobInfo:
        return self.handle.info()

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        return self.handle.logs(follow=follow, replica=replica, tail=tail, since=since)

    def timeline(self) -> Timeline:
        """How long each stage took so far (:func:`timeline`)."""
        return timeline(self.handle)

    def wait(self, timeout: float | None = None) -> JobInfo:
        return self.handle.wait(timeout)

    def cancel(self) -> None:
        self.handle.cancel()

    def failure(self, n: int = 20) -> JobFailedError | None:
        """Why the job did not succeed (with the failing replica's last ``n`` lines), or None."""
        return failure(self.handle, n)

    # tensorflow-cloud's run() returned {"job_id": ..., "docker_image": ...}
    def __getitem__(self, key: str) -> str | None:
        if key == "job_id":
            return self.job_id
        if key == "docker_image":
            return self.image.uri if self.image is not None else None
        raise KeyError(key)

    def keys(self) -> tuple[str, ...]:
        return ("job_id", "docker_image")


def make_spec(entry_point: str | os.PathLike[str], *, intent: str = "submit",
              **options: Unpack[JobOptions]) -> tuple[JobSpec, Settings]:
    """Resolve the settings and check every option and setting (:func:`~tfcloud.validate.build_spec`, for
    ``intent`` plan, build or submit): the spec and the settings to reach its target with."""
    import dataclasses

    from tfcloud.settings import JOB_DEFAULTS, resolve_job_defaults, resolve_settings
    from tfcloud.validate import build_spec

    given: dict[str, Any] = dict(options)
    settings = resolve_settings({k: given.pop(k, None) for k in SETTINGS_OPTIONS})
    defaults, sources = resolve_job_defaults(given)  # the options left out, from TFCLOUD_* and config files
    given.update(defaults)
    by_key = {key: defaults[option] for key, (option, _) in JOB_DEFAULTS.items() if key in sources}
    settings = dataclasses.replace(settings, sources={**settings.sources, **sources}, job_defaults=by_key)
    _require_extras(entry_point, given, target=settings.target, intent=intent)
    spec = build_spec(entry_point=entry_point, target=settings.target, project=settings.project,
                      region=settings.region, settings=settings, intent=intent, **given)
    return spec, settings


def _require_extras(entry_point: object, options: Mapping[str, Any], *, target: str, intent: str) -> None:
    """Every optional extra this call will import, checked before anything else happens (tfcloud.extras)."""
    from tfcloud.extras import require_extras

    bucket = getattr(options.get("docker_config"), "image_build_bucket", None)
    if intent == "build":
        require_extras(entry_point=entry_point, build=True, image_build_bucket=bucket)
        return
    container = bool(options.get("container")) if target == "local" else None
    require_extras(target=target, entry_point=entry_point, strategy=options.get("distribution_strategy", "auto"),
                   build=container, image_build_bucket=bucket, dry_run=intent == "plan")


def plan(entry_point: str | os.PathLike[str], **options: Unpack[JobOptions]) -> Plan:
    """What :func:`submit` would do, submitting nothing."""
    import dataclasses

    from tfcloud.plan import make_plan

    spec, settings = make_spec(entry_point, intent="plan", **options)
    values = {**{name: getattr(settings, name) for name in settings.sources if hasattr(settings, name)},
              **settings.job_defaults}
    sources = {name: {"value": values.get(name), "from": origin} for name, origin in settings.sources.items()}
    return dataclasses.replace(make_plan(spec, settings=settings), sources=sources)


def submit(entry_point: str | os.PathLike[str], *, build_logs: bool = False, **options: Unpack[JobOptions]) -> Job:
    """Run every stage and submit the job to its target; build progress, the job's id and its console link go
    to the console (stderr). ``build_logs``: print the image build's log as it comes."""
    from tfcloud.backends import get_backend
    from tfcloud.console import get_console
    from tfcloud.pipeline import submit as submit_stages
    from tfcloud.timeline import Recorder

    spec, settings = make_spec(entry_point, **options)
    console = get_console()
    backend = get_backend(spec.target, settings=settings)
    recorder = Recorder()
    try:
        handle, image = submit_stages(spec, settings, backend, console=console, build_logs=build_logs,
                                      recorder=recorder)
    except BaseException:
        backend.close()
        raise
    _keep_stages(settings, handle.job_id, recorder)
    console.print(f"Submitted job [bold]{handle.job_id}[/bold].")
    url = handle.info().console_url
    if url:  # the emulator has no web console: its address instead (grpc://HOST:PORT/projects/...)
        console.print(f"{'Emulator' if url.startswith('grpc://') else 'Console'}: {url}", markup=False)
    return Job(handle, image=image, backend=backend)


def build(entry_point: str | os.PathLike[str], *, push: bool = True, build_logs: bool = False,
          **options: Unpack[JobOptions]) -> ImageRef:
    """Build (or find) the job's image for a container target (default ``vertex``) and return its reference;
    submit nothing."""
    from tfcloud.console import get_console
    from tfcloud.pipeline import build_image, prepare

    options.setdefault("target", "vertex")
    spec, settings = make_spec(entry_point, intent="build", **options)
    if not spec.target.container:
        raise ValidationError("target", "a target that runs images (vertex)", spec.target.name)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
        job, _ = prepare(spec, Path(tmp))
        return build_image(job, settings, console=get_console(), push=push, build_logs=build_logs)


def _backend(target: str | None, job_id: str | None = None, *, ray_address: str | None = None) -> Backend:
    from tfcloud.backends import get_backend
    from tfcloud.jobids import validate_job_id
    from tfcloud.settings import resolve_settings

    if job_id is not None:
        validate_job_id(job_id)
    if target is None and job_id is not None:
        target = next((name for prefix, name in _ID_PREFIXES.items() if job_id.startswith(prefix)), "vertex")
    settings = resolve_settings({"target": target, "ray_address": ray_address})
    from tfcloud.extras import require_extras

    require_extras(target=settings.target, build=False)
    return get_backend(settings.target, settings=settings)


def attach(job_id: str, *, target: str | None = None, ray_address: str | None = None) -> JobHandle:
    """The handle of an existing job (``target``: by default, from the id: ``local-...``, ``ray-...`` or
    Vertex AI)."""
    return _backend(target, job_id, ray_address=ray_address).attach(job_id)


@contextlib.contextmanager
def attached(job_id: str, *, target: str | None = None, ray_address: str | None = None) -> Iterator[JobHandle]:
    """:func:`attach` for one block; the backend's clients are closed after it."""
    backend = _backend(target, job_id, ray_address=ray_address)
    try:
        yield backend.attach(job_id)
    finally:
        backend.close()


def list_jobs(*, target: str | None = None, state: JobState | str | None = None,
              labels: Mapping[str, str] | None = None, limit: int = 50,
              ray_address: str | None = None) -> list[JobInfo]:
    """A target's jobs (default: the ``target`` setting), newest first, by state and labels."""
    from tfcloud.states import JobState
    from tfcloud.validate import validate_limit

    validate_limit(limit)
    if isinstance(state, str):
        try:
            state = JobState(state.lower())
        except ValueError:
            raise ValidationError("--state", "one of " + ", ".join(s.value for s in JobState), state) from None
    wanted = dict(labels or {})
    backend = _backend(target, ray_address=ray_address)
    try:
        found = backend.list(state=state, limit=None if wanted else limit)
    finally:
        backend.close()
    return [info for info in found if wanted.items() <= dict(info.labels).items()][:limit]


def _clusters(project: str | None, region: str | None, emulator_host: str | None) -> ClusterService:
    """The persistent resources' client for the settings (flag > TFCLOUD_* > config > default), checked."""
    from tfcloud.settings import resolve_settings
    from tfcloud.targets.vertex.clusters import ClusterService
    from tfcloud.validate import check_credentials, check_settings

    settings = resolve_settings({"target": "vertex", "project": project, "region": region,
                                 "emulator_host": emulator_host})
    check_settings(settings)
    if not settings.project:
        raise ValidationError("project", "a Google Cloud project id for Vertex AI", None,
                              hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
    check_credentials(settings)
    return ClusterService(settings=settings)


def create_cluster(cluster_id: str, *, chief_config: Any = "auto", worker_config: Any = "auto", worker_count: int = 0,
                   ps_config: Any = "CPU", ps_count: int = 0, evaluator_count: int = 0,
                   display_name: str | None = None, labels: Mapping[str, str] | None = None,
                   network: str | None = None, project: str | None = None, region: str | None = None,
                   emulator_host: str | None = None, wait: bool = True) -> ClusterInfo:
    """Create a Vertex AI persistent resource (``tfcloud cluster create``) whose resource pools hold the machines
    a job of this shape asks for; jobs then run on it with ``persistent_resource=`` (docs/vertex.md). With
    ``wait``, returns once it is RUNNING. Everything is checked before anything is created."""
    from tfcloud.targets.vertex.clusters import check_cluster_id, cluster_pools, persistent_resource_request
    from tfcloud.validate import validate_labels

    request = persistent_resource_request(
        cluster_pools(chief_config=chief_config, worker_config=worker_config, worker_count=worker_count,
                      ps_config=ps_config, ps_count=ps_count, evaluator_count=evaluator_count),
        display_name=display_name or check_cluster_id(cluster_id), labels=dict(validate_labels(labels)),
        network=network)
    service = _clusters(project, region, emulator_host)
    try:
        return service.create(check_cluster_id(cluster_id), request, wait=wait)
    finally:
        service.close()


def list_clusters(*, project: str | None = None, region: str | None = None,
                  emulator_host: str | None = None) -> list[ClusterInfo]:
    """The persistent resources in the project and region (``tfcloud cluster list``)."""
    service = _clusters(project, region, emulator_host)
    try:
        return service.list()
    finally:
        service.close()


def delete_cluster(cluster_id: str, *, project: str | None = None, region: str | None = None,
                   emulator_host: str | None = None, wait: bool = True) -> None:
    """Delete a persistent resource (``tfcloud cluster delete``); with ``wait``, until it is gone."""
    service = _clusters(project, region, emulator_host)
    try:
        service.delete(cluster_id, wait=wait)
    finally:
        service.close()


def log_window(*, tail: object = None, since: object = None) -> tuple[int | None, float | None]:
    """``tfcloud logs --tail N --since WHEN`` checked: the number of lines and the time (epoch seconds) to pass
    to :meth:`JobHandle.logs` (a :class:`ValidationError` naming the option otherwise)."""
    from tfcloud.validate import parse_since, validate_tail

    return (None if tail is None else validate_tail(tail), None if since is None else parse_since(since))


def follow(handle: JobHandle, *, replica: str | None = None, tail: int | None = None, since: float | None = None,
           timestamps: bool = False, json_lines: bool = False, stages: bool = False) -> int:
    """Stream the job's logs to the terminal (stdout, one prefix per replica) until it ends and its last lines
    are in; on failure say why on stderr. While a cloud job waits for resources, a status line on a terminal
    says so ("Queued for 1m20s (waiting for resources)"); with ``stages``, one line at the end says how long
    each stage took.
    Returns 0 when the job succeeded, 1 otherwise. Ctrl-C propagates as KeyboardInterrupt to the caller, who
    decides whether to cancel or detach (:func:`interrupted`). ``tail``, ``since``: start from those lines
    (:meth:`JobHandle.logs`); ``timestamps``, ``json_lines``: how lines print (:class:`LogPrinter`);
    ``stages``: end with the line of stage durations (after a submission)."""
    from tfcloud.console import get_console, get_error_console, verbosity
    from tfcloud.logview import LogPrinter, format_tail
    from tfcloud.states import JobState

    first = handle.info()
    names = [r.name for r in first.replicas if replica is None or r.name == replica]
    printer = LogPrinter(replicas=names, show_noise=verbosity() > 0, timestamps=timestamps, json_lines=json_lines)
    waiting = _Waiting(get_console(), enabled=first.target != "local")  # local replicas start at once
    waiting.update(first.state, since=first.created)
    try:
        for line in handle.logs(follow=True, replica=replica, tail=tail, since=since):
            if waiting.active:
                if line.replica == "job":  # a state change: Vertex AI's follower says "ID is queued" as the job's
                    said = _said_state(line.text, handle.job_id)
                    if said is not None:
                        waiting.update(said)
                else:
                    waiting.stop()
            printer.print(line)
    finally:
        waiting.stop()
    info = handle.wait()
    console = get_error_console()
    if stages:
        _print_stages(handle, info)
    if info.state is JobState.SUCCEEDED:
        get_console().print(f"Job {handle.job_id} succeeded.", style="green", markup=False)
        return 0
    error = failure(handle)
    if error is None:
        console.print(f"Job {handle.job_id} {info.state.value}.", style="red", markup=False)
    else:
        console.print(error.summary, style="bold red", markup=False)
        # Repeat the failed replica's last lines only when they are not what was just streamed above (another
        # replica was followed, some were start-up noise left off, or they could not be read).
        failed = info.failed_replica
        shown = printer.shown_tail(failed) if failed else []
        if error.log_tail and not (failed and shown and error.log_tail == format_tail(failed, shown)):
            console.print(error.log_tail, markup=False, highlight=False)
    return 1


class _Waiting:
    """The status line while a job waits for resources: a spinner and ``Queued for 1m20s (waiting for
    resources)``, redrawn as the time passes (rich re-renders :meth:`__rich__`). Only on a terminal."""

    _SAY: ClassVar[dict[str, tuple[str, str]]] = {
        "queued": ("Queued", "waiting for resources"),
        "provisioning": ("Provisioning", "starting the replicas' machines"),
    }

    def __init__(self, console: Any, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal and not console.quiet
        self.state: str | None = None
        self.since = 0.0
        self._status: Any = None

    @property
    def active(self) -> bool:
        return self.state is not None

    def update(self, state: JobState, *, since: float | None = None) -> None:
        import time

        if not self.enabled or state.value not in self._SAY:
            self.stop()
            return
        if state.value != self.state:
            self.state = state.value
            self.since = since if since is not None else time.time()
        if self._status is None and self.enabled:
            self._status = self.console.status(self, spinner="dots")
            self._status.start()

    def __rich__(self) -> Any:
        import time

        from rich.text import Text

        from tfcloud.timeline import format_duration

        label, reason = self._SAY.get(self.state or "", ("Waiting", "waiting"))
        return Text(f"{label} for {format_duration(max(0.0, time.time() - self.since))} ({reason})")

    def stop(self) -> None:
        self.state = None
        if self._status is not None:
            self._status.stop()
            self._status = None


def _said_state(text: str, job_id: str) -> JobState | None:
    """The state a ``job`` line announces (``ID is provisioning``), or None."""
    from tfcloud.states import JobState

    prefix = f"{job_id} is "
    if not text.startswith(prefix):
        return None
    try:
        return JobState(text[len(prefix):])
    except ValueError:
        return None


def _print_stages(handle: JobHandle, info: JobInfo) -> None:
    """One line with how long each stage took (on the progress console: ``-q`` hides it)."""
    from tfcloud.console import get_console

    stages = timeline(handle, info=info)
    if stages.stages:
        get_console().print(f"Stages: {stages.summary()}", markup=False, highlight=False, style="dim")


def _state_dir(settings: Settings | None = None) -> Path:
    from tfcloud.settings import resolve_settings
    from tfcloud.targets.local.backend import default_state_dir

    settings = settings if settings is not None else resolve_settings({})
    return Path(settings.state_dir).expanduser() if settings.state_dir else default_state_dir()


def _keep_stages(settings: Settings, job_id: str, recorder: Any) -> None:
    """Keep the stages the pipeline measured, for ``tfcloud status --timeline`` later (a nicety: a failure to
    write them is logged, never fatal)."""
    import logging

    from tfcloud.timeline import record_path, save

    try:
        save(record_path(_state_dir(settings), job_id), recorder.stages)
    except (OSError, ValueError) as exc:
        logging.getLogger("tfcloud").info("the stage timings of %s could not be kept: %s", job_id, exc)


def timeline(handle: JobHandle, *, info: JobInfo | None = None) -> Timeline:
    """How long each stage of the job took: those this machine measured when it submitted the job (context,
    build, push, submit; kept in the state dir), then queued and run from the job's own times (``info``: the
    job's info, when the caller has it)."""
    from tfcloud.timeline import job_timeline, load, record_path

    info = info if info is not None else handle.info()
    try:
        recorded = load(record_path(_state_dir(), handle.job_id))
    except (OSError, ValueError):
        recorded = ()
    return job_timeline(recorded, created=info.created, started=info.started, ended=info.ended,
                        running=not info.state.is_final)


def interrupted(handle: JobHandle, *, cancel: bool) -> None:
    """What Ctrl-C while following does: cancel the job, or detach from it and say how to follow or cancel it
    later (the default for Vertex AI jobs, which keep running and keep costing)."""
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


def cancels_on_interrupt(handle: JobHandle) -> bool:
    """Whether Ctrl-C cancels the job by default: local jobs die with the terminal; cloud jobs detach."""
    return handle.info().target == "local"


def watch(handle: JobHandle, *, cancel_on_interrupt: bool = False) -> int:
    """:func:`follow`, and on Ctrl-C :func:`interrupted` (cancel when ``cancel_on_interrupt`` or a local job):
    the exit code, 130 when interrupted."""
    try:
        return follow(handle, stages=True)
    except KeyboardInterrupt:
        interrupted(handle, cancel=cancel_on_interrupt or cancels_on_interrupt(handle))
        return 130


# --- tuning (docs/tuning.md) ----------------------------------------------------------------------------------
class Study:
    """A tuning study on its target: its handle's ``info()``, ``wait()``, ``cancel()`` (a
    :class:`tfcloud.study.StudyHandle`), the best trial so far, and the command that reruns a trial.
    ``close()`` (or ``with study:``) releases the target's clients."""

    def __init__(self, handle: StudyHandle, *, entry_point: str, args: Sequence[str] = (),
                 flags: Sequence[str] = (), closer: Any = None) -> None:
        self.handle = handle
        self.entry_point = entry_point
        self.args = tuple(args)
        self.flags = tuple(flags)
        self._closer = closer

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closer is not None:
            self._closer.close()

    def __repr__(self) -> str:
        return f"Study({self.study_id!r})"

    @property
    def study_id(self) -> str:
        return self.handle.study_id

    def info(self) -> StudyInfo:
        return self.handle.info()

    def wait(self, timeout: float | None = None) -> StudyInfo:
        return self.handle.wait(timeout)

    def cancel(self) -> None:
        self.handle.cancel()

    @property
    def best_trial(self) -> TrialInfo | None:
        """The succeeded trial with the best metric so far (None before one succeeded)."""
        return self.info().best_trial

    def rerun_command(self, trial: TrialInfo | None = None) -> str | None:
        """``tfcloud submit ENTRY_POINT [the study's job flags] -- ARGS --NAME=VALUE...`` for ``trial`` (default:
        the best), shell-quoted; None when there is no such trial."""
        from tfcloud.tuneview import rerun_command

        info = self.info()
        trial = trial or info.best_trial
        if trial is None:
            return None
        return rerun_command(self.entry_point, trial, info, flags=self.flags, args=self.args)

    @property
    def plot_paths(self) -> tuple[Path, Path] | None:
        """Where the tuner wrote the PNG and HTML plots (local studies)."""
        paths = getattr(self.handle, "plot_paths", None)
        return paths if isinstance(paths, tuple) else None


def tune(entry_point: str | os.PathLike[str], *, params: Any, metric: str, goal: str = "maximize",
         max_trials: int = 10, parallel_trials: int = 1, algorithm: str = "default", build_logs: bool = False,
         early_stopping: bool = False, **options: Unpack[JobOptions]) -> Study:
    """Start a hyperparameter tuning study of ``entry_point``: ``params`` as ``["lr=double:1e-4:1e-1:log",
    "units=int:32:512"]`` (or :class:`tfcloud.study.ParamSpec` values, or a dict name → spec text), the
    ``metric`` the script reports (``tfcloud.report``, or Keras ``fit``'s epoch logs) and its ``goal``; at most
    ``max_trials`` trials, ``parallel_trials`` at a time. Each trial is a job with the options of
    :func:`submit` (any cluster shape) whose script gets ``--NAME=VALUE`` after its own arguments.

    ``target`` local (optuna on this machine) or vertex (a Vertex AI HyperparameterTuningJob). Returns at
    once; ``study.wait()`` blocks until the study ends. The study is checked before anything starts.

    ``early_stopping=True`` stops running trials by the median rule (optuna's MedianPruner locally, Vertex AI's
    median automated stopping): a trial whose measurements so far are worse than the median of the finished
    trials' at the same step ends early (docs/tuning.md, "Early stopping")."""
    from tfcloud.extras import require_tune_extra
    from tfcloud.study import METRIC_ENV, make_study

    study = make_study(params, metric=metric, goal=goal, max_trials=max_trials, parallel_trials=parallel_trials,
                       algorithm=algorithm, early_stopping=early_stopping)
    require_tune_extra(search=options.get("target") != "vertex")
    env = options.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise ValidationError("env", "a mapping of NAME to value", env)
    flags = _rerun_flags(options)
    options["env"] = {**(env or {}), METRIC_ENV: study.metric}
    spec, settings = make_spec(entry_point, **options)
    args = [str(a) for a in spec.entry_point_args]
    if spec.target.name == "local":
        from tfcloud.tuning import start_local_study

        local = start_local_study(study, spec, settings, rerun_flags=flags)
        return Study(local, entry_point=str(entry_point), args=args, flags=flags)
    if spec.target.name != "vertex":
        raise ValidationError("target", "local or vertex for a tuning study", spec.target.name)
    import tempfile
    from dataclasses import replace

    from tfcloud.console import get_console
    from tfcloud.pipeline import build_image, prepare
    from tfcloud.targets.vertex.tuning import VertexStudies  # type: ignore[import-untyped,import-not-found,unused-ignore]

    with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
        job, _ = prepare(spec, Path(tmp))
        job = replace(job, image=build_image(job, settings, console=get_console(), build_logs=build_logs))
        studies = VertexStudies(settings)
        try:
            handle = studies.submit(job, study)
        except BaseException:
            studies.close()
            raise
    from tfcloud.targets.vertex.tuning import Rerun, save_rerun  # type: ignore[import-untyped,import-not-found,unused-ignore]

    # The job does not hold the script's path: keep it, for `tfcloud status ID --study` later.
    save_rerun(_state_dir(settings), handle.name, Rerun(entry_point=str(spec.entry_point), args=tuple(args),
                                                        flags=tuple(flags)))
    get_console().print(f"Submitted study [bold]{handle.study_id}[/bold].")
    return Study(handle, entry_point=str(entry_point), args=args, flags=["--vertex", *flags], closer=studies)


def attach_study(study_id: str, *, target: str | None = None) -> Study:
    """A study again by id: ``study-...`` a local one; any other id a Vertex AI HyperparameterTuningJob."""
    from tfcloud.settings import resolve_settings

    if target is None:
        target = "local" if study_id.startswith("study-") else "vertex"
    settings = resolve_settings({"target": target})
    if settings.target == "local":
        from tfcloud.tuning import attach_local_study

        local = attach_local_study(study_id, settings)
        record = local.record()
        return Study(local, entry_point=str(record.get("entry_point", "")),
                     args=[str(a) for a in record.get("entry_point_args") or ()],
                     flags=[str(f) for f in record.get("rerun_flags") or ()])
    from tfcloud.extras import require_extras

    require_extras(target="vertex", build=False)
    from tfcloud.targets.vertex.tuning import VertexStudies  # type: ignore[import-untyped,import-not-found,unused-ignore]

    studies = VertexStudies(settings)
    try:
        handle = studies.attach(study_id)
    except BaseException:
        studies.close()
        raise
    from tfcloud.targets.vertex.tuning import rerun_of  # type: ignore[import-untyped,import-not-found,unused-ignore]

    rerun = rerun_of(_state_dir(settings), handle.job)  # kept at submit time, else what the job holds
    return Study(handle, entry_point=rerun.entry_point, args=rerun.args, flags=["--vertex", *rerun.flags],
                 closer=studies)


def _rerun_flags(options: Mapping[str, Any]) -> list[str]:
    """The ``tfcloud submit`` flags that give a trial's job shape (for the command that reruns a trial)."""
    from tfcloud.machines import COMMON_MACHINE_CONFIGS

    flags: list[str] = []
    for key, flag in (("worker_count", "--worker-count"), ("ps_count", "--ps-count")):
        if options.get(key):
            flags += [flag, str(options[key])]
    if options.get("evaluator_count"):
        flags.append("--evaluator")
    for key in ("chief_config", "worker_config", "ps_config"):
        value = options.get(key)
        name = next((n for n, m in COMMON_MACHINE_CONFIGS.items() if m == value), value)
        if isinstance(name, str) and name.lower() != "auto":
            flags += ["--" + key.replace("_", "-"), name]
    if "distribution_strategy" in options:
        strategy = options["distribution_strategy"]
        if strategy is None or (isinstance(strategy, str) and strategy != "auto"):
            flags += ["--strategy", strategy or "none"]
    if options.get("requirements_txt"):
        flags += ["-r", str(options["requirements_txt"])]
    for key, flag in (("env", "--env"), ("job_labels", "--label")):
        value = options.get(key)
        if isinstance(value, Mapping):
            for name, text in value.items():
                flags += [flag, f"{name}={text}"]
    for key in ("project", "region"):
        if options.get(key):
            flags += ["--" + key, str(options[key])]
    return flags
