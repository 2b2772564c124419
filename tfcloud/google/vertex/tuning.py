"""Tuning on Vertex AI: a study is a HyperparameterTuningJob whose trials run the job's CustomJob spec.

- The request is :func:`tfcloud.google.vertex.request.tuning_job_request` (a pure function; the trial job
  spec is the CustomJob request's own).
- Clients, retries, the translation of Google's errors and the exactly-once create are the CustomJob backend's
  (:class:`~tfcloud.google.vertex.backend.VertexBackend`, :func:`~tfcloud.google.vertex.backend.create_once`): each
  submission carries a ``tfcloud-submission`` label, looked up before a create is tried again.
- A :class:`VertexStudy` is a :class:`tfcloud.job.study.StudyHandle`: ``info()`` maps the job and its trials into
  :class:`~tfcloud.job.study.StudyInfo` (trial states through :mod:`tfcloud.job.states`' ``vertex-trial`` rows: an
  INFEASIBLE trial is ``failed``), ``wait()`` polls with a growing interval, ``cancel()`` cancels the job.
- Early stopping: Vertex AI marks a trial it stops STOPPING, then SUCCEEDED with its last measurement as the
  final one; v1's Trial says no more, so in a study with early stopping a SUCCEEDED trial whose final
  measurement's step is below the furthest step another trial's final measurement reached is reported as
  stopped there (``TrialInfo.stopped_at``).
- The command that reruns a trial (``tfcloud submit train.py --worker-count 2 ... -- --lr=0.01``) needs what a
  HyperparameterTuningJob does not hold (the script's path): :func:`save_rerun` keeps it at submit time in the
  state dir, by the job's resource name; :func:`rerun_of` reads it back, or rebuilds what the job holds (the
  cluster shape, ``--env``, ``--label``, the script's own arguments) with ``ENTRY_POINT`` for the script.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.config.value import Settings
from tfcloud.errors import SubmitError, ValidationError
from tfcloud.google.cloud.gcloud import RetryPolicy, call
from tfcloud.google.vertex.backend import VertexBackend, create_once
from tfcloud.google.vertex.logs import timestamp
from tfcloud.google.vertex.request import ALGORITHMS, SUBMISSION_LABEL, tuning_job_request
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.states import to_job_state
from tfcloud.job.study import Algorithm, Goal, ParamKind, ParamSpec, Scale, StudyInfo, StudySpec, TrialInfo
from tfcloud.records.files import write_private_json
from tfcloud.records.statedir import rerun_record

if TYPE_CHECKING:
    from google.cloud.aiplatform_v1 import HyperparameterTuningJob

    from tfcloud.google.vertex.value import VertexOptions
    from tfcloud.job.spec import JobSpec
    from tfcloud.targets._base import SubmitTrial

__all__ = ["Rerun", "VertexStudies", "VertexStudy", "console_url", "rerun_of", "save_rerun", "study_from_job"]

log = logging.getLogger("tfcloud")
#: The longest wait between two looks at a running study (the emulator's: a tenth of it).
MAX_POLL_S = 30.0


def console_url(name: str) -> str:
    """The Google Cloud console page of a HyperparameterTuningJob (a training page, as the Vertex AI SDK's)."""
    parts = name.split("/")
    project, location, job_id = parts[1], parts[3], parts[5]
    return f"https://console.cloud.google.com/vertex-ai/locations/{location}/training/{job_id}?project={project}"


def _may_be_running(study_id: str) -> tuple[str, str]:
    return f"Study {study_id} may still be running.", f"Its state: tfcloud status {study_id}"


class VertexStudies:
    """Submits studies to Vertex AI (or the emulator) as HyperparameterTuningJobs and finds them again."""

    def __init__(self, settings: Settings, *, target: VertexOptions | None = None, retry: RetryPolicy | None = None,
                 poll_interval: float | None = None) -> None:
        self.backend = VertexBackend(settings=settings, target=target, retry=retry, poll_interval=poll_interval)
        self.max_poll = MAX_POLL_S / 10 if self.backend.target.emulator_host else MAX_POLL_S

    @property
    def parent(self) -> str:
        return self.backend.parent

    def job_name(self, study_id: str) -> str:
        """A short id or a full resource name, as a full resource name."""
        if study_id.startswith("projects/"):
            return study_id
        return f"{self.parent}/hyperparameterTuningJobs/{study_id}"

    def submit(self, job: PreparedJob, study: StudySpec) -> VertexStudy:
        """Create the HyperparameterTuningJob for ``study``, whose trials run ``job`` (built: its image set)."""
        from google.cloud import aiplatform_v1

        if job.image is None and self.backend.target.packaged:
            raise ValidationError("--no-build", "to be left out for a tuning study (its trials run an image)",
                                  "--no-build", hint="Leave out --no-build: tfcloud tune builds the trials' image.")
        if job.image is None:
            raise SubmitError("Tuning on Vertex AI needs an image; the pipeline builds it before submitting.")
        submission_id = uuid.uuid4().hex[:16]
        request = tuning_job_request(job.spec, self.backend.target, study, image_uri=job.image.uri,
                                     submission_id=submission_id,
                                     base_output_dir=self.backend.default_output_dir(job.spec.display_name),
                                     parent=self.backend.parent)
        message = aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(request))
        client = self.backend.clients.jobs()
        policy = self.backend.retry
        created = create_once(
            lambda: client.create_hyperparameter_tuning_job(
                parent=self.parent, hyperparameter_tuning_job=message, retry=None, timeout=policy.create_timeout),
            lambda: self._find_submission(submission_id),
            what="Creating the Vertex AI tuning job", policy=policy, noun="tuning job",
            look_hint=f"Look for it: tfcloud list --vertex --label {SUBMISSION_LABEL}={submission_id}")
        return VertexStudy(self, created.name, study=study, job=created)

    def _find_submission(self, submission_id: str) -> HyperparameterTuningJob | None:
        """The tuning job labelled with ``submission_id`` (one call; its errors are the caller's to retry)."""
        from google.cloud import aiplatform_v1

        request = aiplatform_v1.ListHyperparameterTuningJobsRequest(
            parent=self.parent, filter=f'labels.{SUBMISSION_LABEL}="{submission_id}"')
        jobs = list(self.backend.clients.jobs().list_hyperparameter_tuning_jobs(
            request=request, retry=None, timeout=self.backend.retry.call_timeout))
        return min(jobs, key=lambda job: job.create_time) if jobs else None

    def attach(self, study_id: str) -> VertexStudy:
        """The study ``study_id`` (a numeric id or a full name); ``JobNotFoundError`` when there is none."""
        name = self.job_name(study_id)
        client = self.backend.clients.jobs()
        policy = self.backend.retry
        unknown, hint = _may_be_running(study_id)
        found = call(lambda: client.get_hyperparameter_tuning_job(name=name, retry=None,
                                                                  timeout=policy.call_timeout),
                     what=f"Looking up study {study_id}", policy=policy, unknown=unknown, unknown_hint=hint)
        return VertexStudy(self, found.name, study=study_from_job(found), job=found)

    def list(self, *, labels: dict[str, str] | None = None, limit: int | None = 50) -> list[StudyInfo]:
        """Tuning jobs in the project and region, newest first (only those with ``labels``; at most ``limit``)."""
        from google.cloud import aiplatform_v1

        request = aiplatform_v1.ListHyperparameterTuningJobsRequest(
            parent=self.parent, filter=" AND ".join(f'labels.{k}="{v}"' for k, v in (labels or {}).items()),
            page_size=min(limit or 100, 100))
        client = self.backend.clients.jobs()

        def fetch() -> list[HyperparameterTuningJob]:
            out: list[HyperparameterTuningJob] = []
            for item in client.list_hyperparameter_tuning_jobs(request=request, retry=None,
                                                               timeout=self.backend.retry.call_timeout):
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
            return out

        found = call(fetch, what="Listing Vertex AI tuning jobs", policy=self.backend.retry,
                     unknown_hint="Try again later: tfcloud list --vertex")
        found.sort(key=lambda j: j.create_time, reverse=True)
        return [study_info(job, study_from_job(job)) for job in found]

    def close(self) -> None:
        """Close the gRPC channels (a handle that needs them again reopens them)."""
        self.backend.close()


class VertexStudy:
    """A HyperparameterTuningJob as a :class:`tfcloud.job.study.StudyHandle`."""

    def __init__(self, studies: VertexStudies, name: str, *, study: StudySpec,
                 job: HyperparameterTuningJob | None = None) -> None:
        self.studies = studies
        self.name = name
        self.study = study
        self._job = job

    def __repr__(self) -> str:
        return f"VertexStudy({self.name!r})"

    @property
    def study_id(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    def refresh(self) -> HyperparameterTuningJob:
        client = self.studies.backend.clients.jobs()
        policy = self.studies.backend.retry
        unknown, hint = _may_be_running(self.study_id)
        self._job = call(lambda: client.get_hyperparameter_tuning_job(name=self.name, retry=None,
                                                                      timeout=policy.call_timeout),
                         what=f"Getting study {self.study_id}", policy=policy, unknown=unknown, unknown_hint=hint)
        return self._job

    @property
    def job(self) -> HyperparameterTuningJob:
        return self._job if self._job is not None else self.refresh()

    @property
    def entry_point_args(self) -> tuple[str, ...]:
        """The script's own arguments (the trial spec's chief args, before Vertex AI appends a trial's)."""
        pools = self.job.trial_job_spec.worker_pool_specs
        return tuple(pools[0].container_spec.args) if pools else ()

    def info(self) -> StudyInfo:
        """The study now (one look-up): its state and every trial so far."""
        return study_info(self.refresh(), self.study)

    def wait(self, timeout: float | None = None) -> StudyInfo:
        """Block until the study ends (or ``timeout`` seconds pass), looking less often as it runs."""
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = self.studies.backend.poll_interval
        while True:
            info = self.info()
            if info.state.is_final:
                return info
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return info
            time.sleep(interval if deadline is None else max(0.0, min(interval, deadline - now)))
            interval = min(interval * 1.5, max(self.studies.max_poll, self.studies.backend.poll_interval))

    def cancel(self) -> None:
        """Cancel the tuning job (Vertex AI stops its running trials); nothing when it already ended."""
        from google.api_core import exceptions as gexc

        client = self.studies.backend.clients.jobs()
        policy = self.studies.backend.retry
        unknown, hint = _may_be_running(self.study_id)
        try:
            call(lambda: client.cancel_hyperparameter_tuning_job(name=self.name, retry=None,
                                                                 timeout=policy.call_timeout),
                 what=f"Cancelling study {self.study_id}", policy=policy,
                 unknown=f"The cancel may not have reached Vertex AI: {unknown[0].lower()}{unknown[1:]}",
                 unknown_hint=hint)
        except SubmitError as exc:
            if isinstance(exc.__cause__, gexc.FailedPrecondition):  # already finished
                return
            raise


def _param_value(spec: ParamSpec | None, value: Any) -> float | int | str:
    """A trial's parameter (a protobuf Value: a number or a string) typed as its ParamSpec says."""
    if spec is None or spec.kind is ParamKind.CATEGORICAL or isinstance(value, str):
        return value if isinstance(value, str) else str(value)
    if spec.kind is ParamKind.INTEGER:
        return round(float(value))
    return float(value)


def trial_info(trial: Any, study: StudySpec, *, last_step: int | None = None) -> TrialInfo:
    """One Vertex AI Trial as tfcloud's :class:`TrialInfo` (metric: the final measurement of the study's;
    message: why an INFEASIBLE trial is so, or that the trial is stopping or was stopped early). ``last_step``:
    the furthest step of the study's final measurements, for a study with early stopping."""
    specs = {p.name: p for p in study.params}
    params = {p.parameter_id: _param_value(specs.get(p.parameter_id), p.value) for p in trial.parameters}
    metric = None
    if "final_measurement" in trial:
        metric = next((m.value for m in trial.final_measurement.metrics if m.metric_id == study.metric), None)
    job_id = trial.custom_job.rsplit("/", 1)[-1] if trial.custom_job else None
    message, stopped_at = trial.infeasible_reason or None, None
    if trial.state.name == "STOPPING":
        message = "Stopping early: Vertex AI's median rule."
    elif (trial.state.name == "SUCCEEDED" and last_step is not None and "final_measurement" in trial
          and trial.final_measurement.step_count < last_step):
        stopped_at = int(trial.final_measurement.step_count)
        message = (f"Stopped early at step {stopped_at} by Vertex AI's median rule (other trials reached step "
                   f"{last_step}).")
    return TrialInfo(trial_id=trial.id, params=params, state=to_job_state("vertex-trial", trial.state.name),
                     metric=metric, started=timestamp(trial.start_time) if "start_time" in trial else None,
                     ended=timestamp(trial.end_time) if "end_time" in trial else None, job_id=job_id,
                     message=message, stopped_at=stopped_at)


def study_info(job: Any, study: StudySpec) -> StudyInfo:
    """A HyperparameterTuningJob as tfcloud's :class:`StudyInfo` (trials ordered by id)."""
    last_step = None
    if study.early_stopping:
        last_step = max((int(t.final_measurement.step_count) for t in job.trials
                         if t.state.name == "SUCCEEDED" and "final_measurement" in t), default=None)
    trials = sorted((trial_info(t, study, last_step=last_step) for t in job.trials),
                    key=lambda t: (int(t.trial_id) if t.trial_id.isdigit() else 0, t.trial_id))
    return StudyInfo(study_id=job.name.rsplit("/", 1)[-1], target="vertex",
                     state=to_job_state("vertex", job.state.name), study=study, trials=tuple(trials),
                     console_url=console_url(job.name))


_SCALES = {"UNIT_LOG_SCALE": Scale.LOG}


def study_from_job(job: Any) -> StudySpec:
    """The :class:`StudySpec` a HyperparameterTuningJob was made from (what ``attach`` and ``list`` report)."""
    spec = job.study_spec
    params: list[ParamSpec] = []
    for p in spec.parameters:
        scale = _SCALES.get(p.scale_type.name, Scale.LINEAR)
        if "double_value_spec" in p:
            params.append(ParamSpec(name=p.parameter_id, kind=ParamKind.DOUBLE, low=p.double_value_spec.min_value,
                                    high=p.double_value_spec.max_value, scale=scale))
        elif "integer_value_spec" in p:
            params.append(ParamSpec(name=p.parameter_id, kind=ParamKind.INTEGER,
                                    low=int(p.integer_value_spec.min_value), high=int(p.integer_value_spec.max_value),
                                    scale=scale))
        elif "categorical_value_spec" in p:
            params.append(ParamSpec(name=p.parameter_id, kind=ParamKind.CATEGORICAL,
                                    values=tuple(p.categorical_value_spec.values)))
        else:
            params.append(ParamSpec(name=p.parameter_id, kind=ParamKind.DISCRETE,
                                    values=tuple(float(v) for v in p.discrete_value_spec.values), scale=scale))
    metric = spec.metrics[0] if spec.metrics else None
    algorithm = {name: Algorithm(key) for key, name in ALGORITHMS.items()}.get(spec.algorithm.name,
                                                                                Algorithm.DEFAULT)
    goal = Goal.MINIMIZE if metric is not None and metric.goal.name == "MINIMIZE" else Goal.MAXIMIZE
    return StudySpec(params=tuple(params), metric=metric.metric_id if metric is not None else "", goal=goal,
                     max_trials=job.max_trial_count or 1, parallel_trials=job.parallel_trial_count or 1,
                     algorithm=algorithm, early_stopping="median_automated_stopping_spec" in spec)


# --- the command that reruns a trial ----------------------------------------------------------------------------
#: What stands for the script in a rerun command when this machine did not submit the study.
UNKNOWN_ENTRY_POINT = "ENTRY_POINT"
_ROLE_FLAGS = (("--chief-config", None), ("--worker-config", "--worker-count"), ("--ps-config", "--ps-count"))


@dataclass(frozen=True, kw_only=True)
class Rerun:
    """What ``tfcloud submit`` needs to rerun one of a study's trials: the script, its own arguments, the job
    flags (without ``--vertex``; the trial's ``--NAME=VALUE`` come from the trial)."""

    entry_point: str
    args: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()


def save_rerun(state_dir: Path, name: str, rerun: Rerun) -> None:
    """Keep ``rerun`` for the study ``name`` (the job's resource name) in ``<state dir>/vertex-studies/``
    (directory 0700, file 0600). A failure to write is logged, never fatal: :func:`rerun_of` falls back."""
    path = rerun_record(state_dir, name)
    try:
        write_private_json(path, {"name": name, "entry_point": rerun.entry_point, "args": list(rerun.args),
                                  "flags": list(rerun.flags)})
    except OSError as exc:
        log.info("the rerun command of study %s could not be kept: %s", name, exc)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a list of strings: {value!r}")
    return tuple(value)


def rerun_of(state_dir: Path, job: Any) -> Rerun:
    """How to rerun a trial of the HyperparameterTuningJob ``job``: what :func:`save_rerun` kept when this
    machine submitted it, else what the job itself holds (:func:`rerun_from_job`)."""
    try:
        data = json.loads(rerun_record(state_dir, job.name).read_text(encoding="utf-8"))
        if data.get("name") == job.name and isinstance(data.get("entry_point"), str) and data["entry_point"]:
            return Rerun(entry_point=data["entry_point"], args=_strings(data.get("args", [])),
                         flags=_strings(data.get("flags", [])))
    except (OSError, ValueError, AttributeError):
        pass
    return rerun_from_job(job)


def _config_name(machine: Any) -> str | None:
    """The ``tfcloud machines`` name of a pool's machine spec (None when none matches). A TPU VM's machine type
    names its chips; its topology is always in the request (TPU v5e, v6e)."""
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

    for name, config in COMMON_MACHINE_CONFIGS.items():
        if config.machine_type != machine.machine_type:
            continue
        if config.is_tpu_vm:
            if not machine.tpu_topology or machine.tpu_topology == config.tpu_topology:
                return name
        elif config.accelerator_count == machine.accelerator_count and (
                not config.accelerator_count or config.accelerator_type.value == machine.accelerator_type.name):
            return name
    return None


def rerun_from_job(job: Any) -> Rerun:
    """What a HyperparameterTuningJob holds of the command that made it: the pools' machines and counts
    (``--chief-config``, ``--worker-count``/``--worker-config``, ``--ps-count``/``--ps-config``, ``--evaluator``),
    the job's ``--env`` (not tfcloud's own metric variable) and ``--label`` values and the script's own
    arguments; the script itself is :data:`UNKNOWN_ENTRY_POINT` (it is inside the image)."""
    from tfcloud.job.study import METRIC_ENV

    pools = list(job.trial_job_spec.worker_pool_specs)
    flags: list[str] = []
    for index, pool in enumerate(pools[:3]):
        if not pool.replica_count:
            continue
        config_flag, count_flag = _ROLE_FLAGS[index]
        if count_flag is not None:
            flags += [count_flag, str(pool.replica_count)]
        name = _config_name(pool.machine_spec)
        if name is not None:
            flags += [config_flag, name]
    if len(pools) > 3 and pools[3].replica_count:
        flags.append("--evaluator")
    container = pools[0].container_spec if pools else None
    for env in container.env if container is not None else ():
        if env.name != METRIC_ENV:
            flags += ["--env", f"{env.name}={env.value}"]
    for key, value in sorted(job.labels.items()):
        if key != SUBMISSION_LABEL:
            flags += ["--label", f"{key}={value}"]
    return Rerun(entry_point=UNKNOWN_ENTRY_POINT, args=tuple(container.args) if container is not None else (),
                 flags=tuple(flags))


class VertexTuner:
    """The Vertex AI target's tuner (``VertexTarget.tuner``): a HyperparameterTuningJob per study, its trials
    run from the job's image (built before :meth:`start`)."""

    def __init__(self, settings: Settings, *, target: VertexOptions | None = None) -> None:
        self.settings = settings
        self.studies = VertexStudies(settings, target=target)

    def start(self, study: StudySpec, spec: JobSpec, *, job: PreparedJob | None = None,
              rerun_flags: Sequence[str] = (), submit_trial: SubmitTrial | None = None,
              ) -> tuple[VertexStudy, tuple[str, ...]]:
        """Submit the study (``job``: the trials' prepared job, with its image); the script's path is kept for
        the rerun command (the job does not hold it). Vertex AI runs the trials (``submit_trial`` is not used)."""
        from tfcloud.records.statedir import state_dir

        assert job is not None, "the Vertex AI tuner needs the prepared job with its image"
        handle = self.studies.submit(job, study)
        save_rerun(state_dir(self.settings), handle.name, Rerun(
            entry_point=str(spec.entry_point), args=tuple(str(a) for a in spec.entry_point_args),
            flags=tuple(rerun_flags)))
        return handle, ("--vertex", *rerun_flags)

    def attach(self, study_id: str) -> tuple[VertexStudy, str, tuple[str, ...], tuple[str, ...]]:
        from tfcloud.records.statedir import state_dir

        handle = self.studies.attach(study_id)
        rerun = rerun_of(state_dir(self.settings), handle.job)  # kept at submit time, else what the job holds
        return handle, rerun.entry_point, rerun.args, ("--vertex", *rerun.flags)

    def list(self, *, limit: int | None = 50) -> list[StudyInfo]:
        return self.studies.list(limit=limit)

    def close(self) -> None:
        self.studies.close()


if TYPE_CHECKING:  # the Vertex AI tuner keeps the tuner protocol (mypy checks it here)
    from tfcloud.targets._base import Tuner

    _TUNER: type[Tuner] = VertexTuner
