"""The SDK: one front door for every caller. ``run()`` (tfcloud.api) wraps it; each CLI command calls it.

- :func:`plan`: what a submission would do (the dry run): no credentials, TensorFlow or network.
- :func:`submit`: every stage, then the target's backend; returns a :class:`Job`.
- :func:`build`: the image only (``tfcloud build``).
- :func:`attach` / :func:`attached`: a job again by id; :func:`list_jobs`: a target's jobs as :class:`JobInfo`.
- :func:`follow`, :func:`watch`: stream a job's logs to the terminal until it ends (the CLI and
  ``run(stream_logs=True)``); while the job waits for resources a status line says so, and at the end one
  line says how long each stage took.
- :func:`cost` / :func:`cost_of` / :meth:`Job.cost`: what a job cost by how Google bills it (``tfcloud cost``).
- :func:`timeline`: how long each stage of a job took (:mod:`tfcloud.records.timeline`; ``tfcloud status --timeline``).
- :func:`tune`, :func:`attach_study`, :func:`list_studies`: hyperparameter tuning studies
  (``tfcloud docs tuning``).

Options are ``run()``'s keyword names (:class:`JobOptions`); settings (``target``, ``project``, ``region``,
endpoints) resolve as flag > ``TFCLOUD_*`` > pyproject.toml > default, and :func:`tfcloud.flow.validate.build_spec`
stays the one gate every option passes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypedDict, TypeVar

from tfcloud.backends.base import JobInfo, LogLine
from tfcloud.errors import UnsupportedOptionError, ValidationError
from tfcloud.view.following import (
    TrialLogs,
    cancels_on_interrupt,
    check_replica,
    debugging,
    follow,
    interrupted,
    keep_stages,
    keep_submission,
    latest_job,
    prefix_names,
    state_dir,
    submitted_plan,
    target_of,
    timeline,
    trial_job,
    watch,
)
from tfcloud.view.outcome import failure, last_said

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

    from tfcloud.backends.base import Backend, JobHandle
    from tfcloud.errors import JobFailedError
    from tfcloud.flow.plan import Plan
    from tfcloud.flow.settings import Settings
    from tfcloud.flow.where import Resolved
    from tfcloud.google.catalog.costs import JobCost
    from tfcloud.job.artifacts import ImageRef
    from tfcloud.job.spec import JobSpec
    from tfcloud.job.states import JobState
    from tfcloud.job.study import StudyHandle, StudyInfo, TrialInfo
    from tfcloud.records.timeline import Timeline
    from tfcloud.targets._base import SubmitTrial, Target, Tuner

__all__ = ["Job", "JobOptions", "TrialLogs", "attach", "attached", "build", "cancels_on_interrupt", "check_replica",
           "cost", "cost_of", "debugging", "failure", "follow", "interrupted", "last_said", "latest_job", "list_jobs",
           "list_studies", "log_window", "make_spec", "notices", "plan", "prefix_names", "stacks", "state_dir",
           "submit", "submitted_plan", "timeline", "trial_job", "tune", "watch"]

#: Job options that are also settings (resolved with env vars and pyproject.toml). A target's own options with a
#: setting key (project, region, ray_address...) are declared by the target (tfcloud.targets).
SETTINGS_OPTIONS = ("image_repository",)


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
    target: Any  # a target's name or value (tfcloud.targets)
    project: str | None
    region: str | None
    display_name: str | None
    env: Mapping[str, str] | None
    secrets: Mapping[str, str] | None  # NAME -> a reference (tfcloud.job.secretrefs)
    data: Any  # "DIR", "NAME=DIR", a list of them, or {NAME: DIR} (tfcloud.job.datasets)
    emulator_host: str | None
    image_repository: str | None
    staging_bucket: str | None
    ray_address: str | None
    ray_cpus: str | None
    timeout: int | None
    restart_on_worker_restart: bool
    spot: bool
    max_restarts: int | None
    liveness_timeout: int | None
    container: bool
    network: str | None
    base_output_dir: str | None
    scheduling: str | None
    max_wait: str | int | None
    fallback: Sequence[Mapping[str, object] | str] | str | None  # alternatives (tfcloud.google.vertex.fallback)
    fallback_after: str | int | None
    reservation: str | None
    disable_retries: bool
    web_access: bool
    persistent_resource: str | None
    tensorboard: str | None
    experiment: str | None
    experiment_run: str | None
    context_dir: str | os.PathLike[str] | None
    build: bool
    target_options: Mapping[str, object] | None  # the target's options by name, as -o KEY=VALUE gives them


_InfoT = TypeVar("_InfoT", covariant=True)


class _Handle(Protocol[_InfoT]):
    """What a job's and a study's handles both have (:class:`JobHandle`, :class:`~tfcloud.job.study.StudyHandle`)."""

    def info(self) -> _InfoT: ...

    def wait(self, timeout: float | None = None) -> _InfoT: ...

    def cancel(self) -> None: ...


class _Wrapper(Generic[_InfoT]):
    """What a :class:`Job` and a :class:`Study` share: ``info()``, ``wait()`` and ``cancel()`` of their handle, and
    ``close()`` (or ``with``), which releases the clients of the backend or tuner they came from (``_closer``;
    None: nothing to release)."""

    def __init__(self, handle: _Handle[_InfoT], *, closer: Any, key: str) -> None:
        self.handle = handle
        self._closer = closer
        self._key = key  # what repr() shows: the job's or the study's id

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closer is not None:
            self._closer.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._key!r})"

    def info(self) -> _InfoT:
        return self.handle.info()

    def wait(self, timeout: float | None = None) -> _InfoT:
        return self.handle.wait(timeout)

    def cancel(self) -> None:
        self.handle.cancel()


class Job(_Wrapper[JobInfo]):
    """A submitted job: its backend's handle (``info()``, ``logs()``, ``wait()``, ``cancel()``) and the image
    it runs. Like tensorflow-cloud's result, ``job["job_id"]`` and ``job["docker_image"]`` work too.
    ``close()`` (or ``with job:``) releases the backend's clients; a later call reopens what it needs."""

    handle: JobHandle

    def __init__(self, handle: JobHandle, *, image: ImageRef | None = None, backend: Backend | None = None) -> None:
        super().__init__(handle, closer=backend, key=handle.job_id)
        self.image = image

    def _repr_html_(self) -> str:  # a notebook shows the job: state, outcome, replicas, times, links
        from tfcloud.view.statusview import status_html

        return status_html(self.info())

    @property
    def job_id(self) -> str:
        return self.handle.job_id

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        return self.handle.logs(follow=follow, replica=replica, tail=tail, since=since)

    def timeline(self) -> Timeline:
        """How long each stage took so far (:func:`timeline`)."""
        return timeline(self.handle)

    def cost(self) -> JobCost:
        """What the job cost so far (:func:`cost_of`)."""
        return cost_of(self.info())

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
              **options: Unpack[JobOptions]) -> tuple[JobSpec, Target, Settings]:
    """Resolve the settings and check every option and setting (:func:`~tfcloud.flow.validate.build_spec`, for
    ``intent`` plan, build or submit): the spec, the target it runs on (with the target's options) and the
    settings to reach that target with.

    The order a user meets the checks in: the entry point first (a missing or broken script is named before
    anything else), then the options the target does not take, then the extras the call needs, then the rest."""
    from tfcloud.flow.validate import build_spec, check_entry_point
    from tfcloud.flow.where import resolve

    given: dict[str, Any] = dict(options)
    target = given.pop("target", None)
    check_entry_point(entry_point)
    found = resolve(target, given, job_keys=frozenset(JobOptions.__annotations__),
                    flags={k: given.get(k) for k in SETTINGS_OPTIONS})
    builds = found.target.pushes_image or found.target.packaged
    rest = _with_build_bucket(found.rest, found.settings, pushes_image=builds)
    _require_extras(entry_point, rest, target=found.target, intent=intent)
    spec = build_spec(entry_point=entry_point, target=found.target, settings=found.settings, intent=intent, **rest)
    return spec, found.target, found.settings


def _with_build_bucket(options: dict[str, Any], settings: Settings, *, pushes_image: bool) -> dict[str, Any]:
    """The ``image_build_bucket`` setting (Cloud Build builds) for a job whose image is pushed (its own, or a
    ``--no-build`` job's base image) and whose ``docker_config`` names no bucket of its own."""
    from tfcloud.job.spec import DockerConfig

    docker = options.get("docker_config", "auto")
    docker = DockerConfig() if docker is None or docker == "auto" else docker
    if not settings.image_build_bucket or not pushes_image or not isinstance(docker, DockerConfig) or \
            docker.image_build_bucket:
        return options
    return {**options, "docker_config": DockerConfig(docker.image, docker.parent_image, docker.cache_from,
                                                     settings.image_build_bucket)}


def _require_extras(entry_point: object, options: Mapping[str, Any], *, target: Any, intent: str) -> None:
    """Every optional extra this call will import, checked before anything else happens (tfcloud.config.extras)."""
    from tfcloud.config.extras import require_extras

    bucket = getattr(options.get("docker_config"), "image_build_bucket", None)
    if intent == "build":
        require_extras(entry_point=entry_point, build=True, image_build_bucket=bucket)
        return
    require_extras(target=target, entry_point=entry_point, strategy=options.get("distribution_strategy", "auto"),
                   image_build_bucket=bucket, dry_run=intent == "plan")


def plan(entry_point: str | os.PathLike[str], **options: Unpack[JobOptions]) -> Plan:
    """What :func:`submit` would do, submitting nothing."""
    import dataclasses

    from tfcloud.flow.plan import make_plan
    from tfcloud.flow.where import sources

    spec, target, settings = make_spec(entry_point, intent="plan", **options)
    return dataclasses.replace(make_plan(spec, target, settings=settings), sources=sources(target, settings))


def submit(entry_point: str | os.PathLike[str], *, build_logs: bool = False, yes: bool = False,
           **options: Unpack[JobOptions]) -> Job:
    """Run every stage and submit the job to its target; progress, id and console link go to stderr. ``build_logs``:
    print the build's log; ``yes``: never ask before a paid job (:func:`~tfcloud.view.printers.confirm_launch`)."""
    from tfcloud.flow.pipeline import submit as submit_stages
    from tfcloud.records.timeline import Recorder
    from tfcloud.targets import get_backend
    from tfcloud.view.console import get_console
    from tfcloud.view.printers import confirm_launch, print_price

    spec, target, settings = make_spec(entry_point, **options)
    if build_logs and not (target.container or target.packaged):  # nothing is built: no build log
        raise UnsupportedOptionError("build_logs", True, target=target.name,
                                     takers=["a target that builds an image (vertex, local with container)"])
    console = get_console()
    print_price(spec, target, settings)  # what it costs, before it starts
    confirm_launch(spec, target, settings, yes=yes)
    backend = get_backend(target, settings=settings)
    recorder = Recorder()
    try:
        handle, image = submit_stages(spec, target, settings, backend, console=console, build_logs=build_logs,
                                      recorder=recorder)
    except BaseException:
        backend.close()
        raise
    keep_stages(settings, handle.job_id, recorder)
    keep_submission(settings, spec, target, handle.job_id, image)
    console.print(f"Submitted job [bold]{handle.job_id}[/bold].")
    url = handle.info().console_url
    if url:  # the emulator has no web console: its address instead (grpc://HOST:PORT/projects/...)
        console.print(f"{'Emulator' if url.startswith('grpc://') else 'Console'}: {url}", markup=False)
    notices(target, settings)
    return Job(handle, image=image, backend=backend)


def build(entry_point: str | os.PathLike[str], *, push: bool = True, build_logs: bool = False,
          **options: Unpack[JobOptions]) -> ImageRef:
    """Build (or find) the job's image for a container target (default ``vertex``) and return its reference;
    submit nothing."""
    from tfcloud.flow.pipeline import build_image, prepare
    from tfcloud.view.console import get_console

    options.setdefault("target", "vertex")
    spec, target, settings = make_spec(entry_point, intent="build", **options)
    if not target.container:
        raise ValidationError("target", "a target that runs images (vertex)", target.name)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        return build_image(job, target, settings, console=get_console(), push=push, build_logs=build_logs)


def notices(target: Target, settings: Settings) -> None:
    """Say the target's notices (:attr:`tfcloud.targets.Target.notices`: Vertex AI's idle clusters) on the
    progress console, after a verb that talked to it; a notice that cannot be made says nothing."""
    import logging

    from tfcloud.errors import TfcloudError
    from tfcloud.targets import load
    from tfcloud.view.console import get_console

    if target.notices is None:
        return
    try:
        lines = load(target.notices)(target, settings)
    except (TfcloudError, OSError) as exc:
        logging.getLogger("tfcloud").debug("no notices from %s: %s", target.name, exc)
        return
    for line in lines:
        get_console().print(line, markup=False, highlight=False)


def _backend(target: object, job_id: str | None, options: Mapping[str, Any]) -> Backend:
    """The backend of the target a verb talks to (:func:`tfcloud.flow.where.resolve_for_job`: by default the target
    whose job ids look like ``job_id``, else the ``target`` setting), its extras checked first."""
    return _found_backend(target, job_id, options)[0]


def _found_backend(target: object, job_id: str | None, options: Mapping[str, Any]) -> tuple[Backend, Resolved]:
    """:func:`_backend`, and the resolved target (``.target``, ``.settings``) for its :func:`notices`."""
    from tfcloud.config.extras import require_extras
    from tfcloud.flow.where import resolve_for_job
    from tfcloud.targets import get_backend

    found = resolve_for_job(job_id, target, options)
    require_extras(target=found.target, build=False)
    return get_backend(found.target, settings=found.settings), found


def attach(job_id: str, *, target: object = None, **options: Any) -> JobHandle:
    """The handle of an existing job. ``target`` (a name or a :class:`~tfcloud.targets.Target` value; by default
    the target whose ids look like ``job_id``) and its options (``ray_address=``, ``project=``,
    ``target_options={...}``) as :func:`submit` takes them."""
    return _backend(target, job_id, options).attach(job_id)


@contextlib.contextmanager
def attached(job_id: str, *, target: object = None, **options: Any) -> Iterator[JobHandle]:
    """:func:`attach` for one block; the backend's clients are closed after it, then (the block done) the target's
    :func:`notices` are said."""
    backend, found = _found_backend(target, job_id, options)
    try:
        yield backend.attach(job_id)
    finally:
        backend.close()
    notices(found.target, found.settings)


def stacks(job_id: str, *, replica: str | None = None, target: object = None, **options: Any) -> dict[str, str]:
    """Every thread's Python stack of each running replica of ``job_id`` (only ``replica``'s, when given), by
    replica (:class:`~tfcloud.backends.base.Stacks`). A job that is over, a replica it does not have, or a target
    whose replicas cannot show theirs (Vertex AI: ``--web-access`` instead) is a :class:`ValidationError`."""
    from tfcloud.backends.base import Stacks

    with attached(job_id, target=target, **options) as handle:
        info = handle.info()
        if not isinstance(handle, Stacks):
            import tfcloud.targets as targets

            hint = targets.get(info.target).stacks_elsewhere.format(job_id=job_id) or None
            shown = ", ".join(cls.stacks_shown for cls in targets.builtin_targets() if cls.stacks_shown)
            raise ValidationError("JOB", f"a job whose replicas can show their stacks ({shown})",
                                  f"{job_id} (a {info.target} job)", hint=hint)
        check_replica(info, replica)
        if info.state.is_final:
            raise ValidationError("JOB", "a running job", f"{job_id} ({info.state.value})",
                                  hint=f"Nothing is running: the job is {info.state.value}. `tfcloud logs "
                                       f"{job_id}` shows what it printed.")
        return handle.stacks(replica=replica)


def list_jobs(*, target: object = None, state: JobState | str | None = None,
              labels: Mapping[str, str] | None = None, limit: int = 50, **options: Any) -> list[JobInfo]:
    """A target's jobs (default: the ``target`` setting's; ``target`` and its options as :func:`attach` takes
    them), newest first, by state and labels."""
    from tfcloud.flow.validate import validate_limit
    from tfcloud.job.states import JobState

    validate_limit(limit)
    if isinstance(state, str):
        try:
            state = JobState(state.lower())
        except ValueError:
            raise ValidationError("--state", "one of " + ", ".join(s.value for s in JobState), state) from None
    wanted = dict(labels or {})
    backend, where = _found_backend(target, None, options)
    try:
        found = backend.list(state=state, limit=None if wanted else limit)
    finally:
        backend.close()
    notices(where.target, where.settings)
    return [info for info in found if wanted.items() <= dict(info.labels).items()][:limit]


def cost_of(info: JobInfo, *, now: float | None = None) -> JobCost:
    """What the job ``info`` describes cost so far, by how Google bills it
    (:func:`tfcloud.google.catalog.costs.job_cost`: its replicas x machine prices x the time from its replicas' start
    to its end, ``now`` while it runs): unknown where the price table has no price; not billed where no cloud bills
    the job (:attr:`JobInfo.billing` is None: local and Ray jobs run on machines you provide)."""
    import time

    from tfcloud.google.catalog.costs import JobCost, job_cost

    billing = info.billing
    if billing is None:
        return JobCost(job_id=info.job_id, billed=False,
                       note=f"nothing billed by Google Cloud: a {info.target} job runs on machines you provide "
                            "(tfcloud knows of no per-job bill for it)")
    pools = [(p.replicas, p.machine_type, p.accelerator, p.accelerator_count) for p in billing.pools]
    return job_cost(info.job_id, region=billing.region, capacity=billing.capacity, pools=pools,
                    started=info.started, ended=info.ended if info.state.is_final else None,
                    now=time.time() if now is None else now, resource=billing.resource)


def cost(job_id: str, *, target: object = None, **options: Any) -> JobCost:
    """What job ``job_id`` cost so far (``tfcloud cost``; :func:`cost_of` its :func:`attach`'s info)."""
    with attached(job_id, target=target, **options) as handle:
        return cost_of(handle.info())


def log_window(*, tail: object = None, since: object = None) -> tuple[int | None, float | None]:
    """``tfcloud logs --tail N --since WHEN`` checked: the number of lines and the time (epoch seconds) to pass
    to :meth:`JobHandle.logs` (a :class:`ValidationError` naming the option otherwise)."""
    from tfcloud.flow.validate import parse_since, validate_tail

    return (None if tail is None else validate_tail(tail), None if since is None else parse_since(since))


# --- tuning (docs/tuning.md) ----------------------------------------------------------------------------------
class Study(_Wrapper["StudyInfo"]):
    """A tuning study on its target: its handle's ``info()``, ``wait()``, ``cancel()`` (a
    :class:`tfcloud.job.study.StudyHandle`), the best trial so far, and the command that reruns a trial.
    ``close()`` (or ``with study:``) releases the target's clients."""

    handle: StudyHandle

    def __init__(self, handle: StudyHandle, *, entry_point: str, args: Sequence[str] = (),
                 flags: Sequence[str] = (), closer: Any = None) -> None:
        super().__init__(handle, closer=closer, key=handle.study_id)
        self.entry_point = entry_point
        self.args = tuple(args)
        self.flags = tuple(flags)

    @property
    def study_id(self) -> str:
        return self.handle.study_id

    @property
    def cancels_on_interrupt(self) -> bool:
        """Whether Ctrl-C cancels the study (its target's ``cancel_on_interrupt``: local trials die with the
        terminal) or detaches from it."""
        return bool(target_of(self.info()).cancel_on_interrupt)

    @property
    def poll_interval(self) -> float:
        """Seconds between two looks at the study's state (its target's)."""
        return float(target_of(self.info()).poll_interval)

    @property
    def best_trial(self) -> TrialInfo | None:
        """The succeeded trial with the best metric so far (None before one succeeded)."""
        return self.info().best_trial

    def rerun_command(self, trial: TrialInfo | None = None) -> str | None:
        """``tfcloud submit ENTRY_POINT [the study's job flags] -- ARGS --NAME=VALUE...`` for ``trial`` (default:
        the best), shell-quoted; None when there is no such trial."""
        from tfcloud.view.tuneview import rerun_command

        info = self.info()
        trial = trial or info.best_trial
        if trial is None:
            return None
        return rerun_command(self.entry_point, trial, info, flags=self.flags, args=self.args)

    @property
    def plot_paths(self) -> tuple[Path, Path] | None:
        """Where the tuner wrote the PNG and HTML plots (:attr:`StudyInfo.plots`: local studies)."""
        return self.info().plots


def tune(entry_point: str | os.PathLike[str], *, params: Any, metric: str, goal: str = "maximize",
         max_trials: int = 10, parallel_trials: int = 1, algorithm: str = "default", build_logs: bool = False,
         early_stopping: bool = False, **options: Unpack[JobOptions]) -> Study:
    """Start a hyperparameter tuning study of ``entry_point``: ``params`` as ``["lr=double:1e-4:1e-1:log",
    "units=int:32:512"]`` (or :class:`tfcloud.job.study.ParamSpec` values, or a dict name → spec text), the
    ``metric`` the script reports (``tfcloud.report``, or Keras ``fit``'s epoch logs) and its ``goal``; at most
    ``max_trials`` trials, ``parallel_trials`` at a time. Each trial is a job with the options of
    :func:`submit` (any cluster shape) whose script gets ``--NAME=VALUE`` after its own arguments.

    ``target``: one that has a tuner (``Target.tuner``): local (optuna on this machine) or vertex (a Vertex AI
    HyperparameterTuningJob). Returns at once; ``study.wait()`` blocks until the study ends. The study is
    checked before anything starts.

    ``early_stopping=True`` stops running trials by the median rule (optuna's MedianPruner locally, Vertex AI's
    median automated stopping): a trial whose measurements so far are worse than the median of the finished
    trials' at the same step ends early (``tfcloud docs tuning#early-stopping``)."""
    import tempfile
    from dataclasses import replace

    from tfcloud.config.extras import require_tune_extra
    from tfcloud.flow.pipeline import build_image, prepare, stage_data
    from tfcloud.job.study import METRIC_ENV, make_study
    from tfcloud.view.console import get_console

    study = make_study(params, metric=metric, goal=goal, max_trials=max_trials, parallel_trials=parallel_trials,
                       algorithm=algorithm, early_stopping=early_stopping)
    env = options.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise ValidationError("env", "a mapping of NAME to value", env)
    flags = _rerun_flags(options)
    options["env"] = {**(env or {}), METRIC_ENV: study.metric}
    spec, target, settings = make_spec(entry_point, **options)
    if target.tuner is None:
        import tfcloud.targets as targets

        raise ValidationError("target", "a target that runs tuning studies: " + ", ".join(
            c.name for c in targets.builtin_targets() if c.tuner), target.name)
    if target.packaged:  # a study's trials run from the job's image: there is no package tuner (yet)
        raise ValidationError("build", "to be left unset for a tuning study (its trials run from the job's image)",
                              "False (--no-build)",
                              hint="Leave out --no-build (build=False in tune()) to tune on Vertex AI with an "
                                   "image, or tune on this machine with --local.")
    require_tune_extra(search=not target.container)  # optuna searches on this machine
    tuner = _load(target.tuner)(settings, target=target)
    try:
        with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
            job = None
            if target.container:
                job, _ = prepare(spec, target, Path(tmp))
                job = stage_data(job, target, settings, console=get_console()) if spec.data else job  # shipped
                job = replace(job, image=build_image(job, target, settings, console=get_console(),
                                                     build_logs=build_logs))
            handle, rerun_flags = tuner.start(study, spec, job=job, rerun_flags=flags,
                                              submit_trial=_trial_submitter(target, settings))
    except BaseException:
        tuner.close()
        raise
    if target.container:
        get_console().print(f"Submitted study [bold]{handle.study_id}[/bold].")
    return Study(handle, entry_point=str(entry_point), args=[str(a) for a in spec.entry_point_args],
                 flags=rerun_flags, closer=tuner)


def _trial_submitter(target: Target, settings: Settings) -> SubmitTrial:
    """What a tuner calls to run one trial as a job of its target: every stage of :func:`tfcloud.flow.pipeline.submit`
    on ``target``'s backend, as :func:`submit` runs a job (so that no target imports the pipeline). The
    backend stays open for the handle, as a submitted :class:`Job`'s does."""
    from tfcloud.flow.pipeline import submit as submit_stages
    from tfcloud.targets import get_backend

    def submit_trial(trial: JobSpec) -> JobHandle:
        backend = get_backend(target, settings=settings)
        try:
            return submit_stages(trial, target, settings, backend)[0]
        except BaseException:
            backend.close()
            raise

    return submit_trial


def attach_study(study_id: str, *, target: object = None, **options: Any) -> Study:
    """A study again by id: ``study-...`` a local one; any other id a Vertex AI HyperparameterTuningJob
    (``target`` and its options as :func:`attach` takes them)."""
    import tfcloud.targets as targets
    from tfcloud.config.extras import require_extras
    from tfcloud.flow.where import resolve

    if target is None:
        target = targets.for_job_id(study_id, studies=True).name
    found = resolve(target, options)
    value = found.target
    if value.tuner is None:
        raise ValidationError("target", "a target that runs tuning studies", value.name)
    require_extras(target=value, build=False)
    tuner = _load(value.tuner)(found.settings, target=value)
    try:
        handle, entry_point, args, flags = tuner.attach(study_id)
    except BaseException:
        tuner.close()
        raise
    return Study(handle, entry_point=entry_point, args=list(args), flags=list(flags), closer=tuner)


def _load(ref: str) -> type[Tuner]:
    """A target's tuner class by its ``"module:Class"`` reference (:func:`tfcloud.targets.load`)."""
    import tfcloud.targets as targets

    tuner: type[Tuner] = targets.load(ref)
    return tuner


def list_studies(*, target: object = None, limit: int = 50, **options: Any) -> list[StudyInfo]:
    """Tuning studies, newest first, of a target that has a tuner: ``local`` this machine's (the default),
    ``vertex`` the project's HyperparameterTuningJobs (``target`` and its options as :func:`attach` takes
    them)."""
    import tfcloud.targets as targets
    from tfcloud.config.extras import require_extras
    from tfcloud.flow.validate import validate_limit
    from tfcloud.flow.where import resolve

    validate_limit(limit)
    found = resolve(target or "local", options)
    value = found.target
    if value.tuner is None:
        raise ValidationError("target", "a target that runs tuning studies: " + ", ".join(
            c.name for c in targets.builtin_targets() if c.tuner), value.name)
    require_extras(target=value, build=False)
    tuner = _load(value.tuner)(found.settings, target=value)
    try:
        studies: list[StudyInfo] = tuner.list(limit=limit)
    finally:
        tuner.close()
    return studies


def _rerun_flags(options: Mapping[str, Any]) -> list[str]:
    """The ``tfcloud submit`` flags that give a trial's job shape (for the command that reruns a trial)."""
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS
    from tfcloud.job.datasets import data_flags

    flags: list[str] = []
    for key, flag in (("worker_count", "--worker-count"), ("ps_count", "--ps-count")):
        if options.get(key):
            flags += [flag, str(options[key])]
    flags += ["--evaluator"] if options.get("evaluator_count") else []
    for key in ("chief_config", "worker_config", "ps_config"):
        value = options.get(key)
        name = next((n for n, m in COMMON_MACHINE_CONFIGS.items() if m == value), value)
        if isinstance(name, str) and name.lower() != "auto":
            flags += ["--" + key.replace("_", "-"), name]
    if "distribution_strategy" in options:
        strategy = options["distribution_strategy"]
        if strategy is None or (isinstance(strategy, str) and strategy != "auto"):
            flags += ["--strategy", strategy or "none"]
    flags += ["-r", str(options["requirements_txt"])] if options.get("requirements_txt") else []
    flags += data_flags(options.get("data"))
    for key, flag in (("env", "--env"), ("secrets", "--secret"), ("job_labels", "--label"), ("target_options", "-o")):
        value = options.get(key)
        if isinstance(value, Mapping):
            flags += [arg for name, text in value.items() for arg in (flag, f"{name}={text}")]
    import tfcloud.targets as targets

    for option in {o.name: o for c in targets.builtin_targets() for o in c.options}.values():
        if options.get(option.name) is not None:
            flags += option.cli_args(options.get(option.name))
    return flags
