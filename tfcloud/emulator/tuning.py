"""Vertex AI ``JobService`` for HyperparameterTuningJobs: create, get, list, cancel, delete, and the studies' lives.

A tuning job is named ``projects/{project number}/locations/{location}/hyperparameterTuningJobs/{id}`` and moves
QUEUED → PENDING → RUNNING → SUCCEEDED / FAILED, or CANCELLING → CANCELLED. While it runs, the emulator
suggests parameters (random search, seeded by the job's id, for ``RANDOM_SEARCH`` and ``ALGORITHM_UNSPECIFIED``;
every combination in order for ``GRID_SEARCH``), keeps ``parallel_trial_count`` trials running until
``max_trial_count`` have started (or the grid is exhausted), and runs each trial as Vertex AI does:

- a CustomJob (:mod:`tfcloud.emulator.jobs`, the same runner: process or container replicas, faults,
  preemption, logs) of the ``trial_job_spec``, with ``--NAME=VALUE`` per parameter appended to every pool's
  container args, ``CLOUD_ML_TRIAL_ID`` set, the base output directory ``BASE/{trial id}``, and
  ``CLOUD_ML_HP_METRIC_FILE`` naming a file in a directory of the emulator's (mounted into containers at the
  same path; the chief's pool's file is the one read, the other pools write files of their own). The trial's
  job is found by its name (``Trial.custom_job``) but not listed;
- its final measurement is read from that file as the service reads cloudml-hypertune's
  (:func:`tfcloud.job.study.read_measurements`: the last line holding the metric, ``step_count`` its
  ``global_step``); the trial then SUCCEEDED, or is INFEASIBLE (``infeasible_reason``) when its job failed or it
  reported no metric;
- with ``study_spec.median_automated_stopping_spec`` (on steps; ``use_elapsed_duration`` is refused), the
  running trials' lines are its ``measurements``, and the median rule as the API documents it stops a trial:
  once ``EARLY_STOPPING_MIN_TRIALS`` trials ran to their end, a trial at step s (from
  ``EARLY_STOPPING_WARMUP_STEPS``) whose best value so far is strictly worse than the median of those trials'
  performance up to s (the running average of their values at steps <= s) is STOPPING while its job is
  cancelled, then SUCCEEDED with its last measurement as the final one.

The job SUCCEEDED when its trials ended and one succeeded; FAILED when all failed (or ``max_failed_trial_count``
of them, when set); CANCELLED (``error`` code 1) on cancel, its running trials cancelled and INFEASIBLE.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._common import JobTimings, project_number
from tfcloud.emulator._grpc import (
    JOB_FILTER,
    Handler,
    abort_invalid,
    apply_read_mask,
    bound,
    clear_output_only,
    list_predicate,
    page,
)
from tfcloud.emulator._rules import custom_job_violations
from tfcloud.emulator.faults import Faults
from tfcloud.emulator.jobs import (
    JobService,
    deleted,
    job_record,
    mark_cancelling,
    move_state,
    refuse_delete_unless_final,
)
from tfcloud.emulator.operations import OperationStore
from tfcloud.emulator.store import Store
from tfcloud.job.study import read_measurements

__all__ = ["TuningService", "suggestions", "validate_tuning_job"]

logger = logging.getLogger("tfcloud.emulator")

_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/hyperparameterTuningJobs/([^/]+)$")
_TERMINAL = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
_METRICS_FILE = "output.metrics"


@dataclass(kw_only=True)
class _Study:
    job: Any  # aiplatform_v1.HyperparameterTuningJob, guarded by TuningService._lock
    number: str
    location: str
    job_id: str
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    metrics_dir: str = ""


def _now() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc)


def _copy(message: Any) -> Any:
    return type(message).deserialize(type(message).serialize(message))


class TuningService:
    """The HyperparameterTuningJob methods of ``google.cloud.aiplatform.v1.JobService``; trials run through
    ``jobs`` (the CustomJob service)."""

    def __init__(self, *, jobs: JobService, operations: OperationStore, faults: Faults, timings: JobTimings,
                 store: Store | None = None) -> None:
        self._jobs = jobs
        self._operations = operations
        self._faults = faults
        self._timings = timings
        self._lock = threading.Lock()
        self._store = store or Store.memory()  # --data-dir: kept across restarts (tfcloud.emulator.store)
        self._studies = {job.name: _Study(job=job, **extra) for job, extra in self._store.restore()}
        self._stopping = threading.Event()

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"CreateHyperparameterTuningJob": "create",
                                      "GetHyperparameterTuningJob": "get", "ListHyperparameterTuningJobs": "list",
                                      "CancelHyperparameterTuningJob": "cancel",
                                      "DeleteHyperparameterTuningJob": "delete"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    def _find(self, name: str, context: grpc.ServicerContext) -> _Study:
        match = _NAME.match(name)
        if match is None or not match.group(3).isdigit():
            abort_invalid(context, [("name", "Invalid HyperparameterTuningJob name: expected projects/PROJECT/"
                                             "locations/LOCATION/hyperparameterTuningJobs/ID with a numeric ID, "
                                             f"received {name!r}.")])
        assert match is not None
        project, location, job_id = match.groups()
        canonical = f"projects/{project_number(project)}/locations/{location}/hyperparameterTuningJobs/{job_id}"
        with self._lock:
            study = self._studies.get(canonical)
        if study is None:
            context.abort(grpc.StatusCode.NOT_FOUND, self._store.not_found("HyperparameterTuningJob", canonical))
        assert study is not None
        return study

    # -- RPCs ----------------------------------------------------------------------------------------------
    def create(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import CustomJob, JobState

        number, location = self._jobs._parent(request.parent, context)
        problem = validate_tuning_job(request.hyperparameter_tuning_job)
        if problem:
            abort_invalid(context, problem)
        tuning_job = request.hyperparameter_tuning_job
        violations = custom_job_violations(CustomJob(display_name=tuning_job.display_name,
                                                     job_spec=tuning_job.trial_job_spec,
                                                     labels=dict(tuning_job.labels)),
                                           location=location, spec_field="trial_job_spec")
        if violations:
            abort_invalid(context, violations)
        job = clear_output_only(_copy(request.hyperparameter_tuning_job))
        job_id = str(random.randint(10**18, 9 * 10**18))
        job.name = f"projects/{number}/locations/{location}/hyperparameterTuningJobs/{job_id}"
        now = _now()
        job.state = JobState.JOB_STATE_QUEUED
        job.create_time = now
        job.update_time = now
        del job.trials[:]
        study = _Study(job=job, number=number, location=location, job_id=job_id)
        with self._lock:
            self._studies[job.name] = study
            self._store.save(study)
            created = _copy(job)
        study.thread = threading.Thread(target=self._live, args=(study,), name=f"study-{job_id}", daemon=True)
        study.thread.start()
        return created

    def get(self, request: Any, context: grpc.ServicerContext) -> Any:
        study = self._find(request.name, context)
        self._faults.hold_until_ended("GetHyperparameterTuningJob", lambda: self._state(study) in _TERMINAL,
                                      active=lambda: context.is_active() and not self._stopping.is_set())
        with self._lock:
            return _copy(study.job)

    def _state(self, study: _Study) -> str:
        with self._lock:
            return str(study.job.state.name)

    def list(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import HyperparameterTuningJob, ListHyperparameterTuningJobsResponse

        number, location = self._jobs._parent(request.parent, context)
        predicate = list_predicate(request, context, JOB_FILTER)
        prefix = f"projects/{number}/locations/{location}/hyperparameterTuningJobs/"
        with self._lock:
            jobs = [_copy(s.job) for name, s in self._studies.items() if name.startswith(prefix)]
        jobs.sort(key=lambda job: (job.create_time, job.name), reverse=True)
        jobs = [job for job in jobs if predicate(job_record(job))]
        found, token = page(jobs, request, context)
        masked = apply_read_mask(found, request, context, HyperparameterTuningJob)
        return ListHyperparameterTuningJobsResponse(hyperparameter_tuning_jobs=masked,
                                                    next_page_token=token)

    def cancel(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.protobuf import empty_pb2

        study = self._find(request.name, context)
        with self._lock:
            mark_cancelling(study.job, context)
        study.cancel.set()
        return empty_pb2.Empty()

    def delete(self, request: Any, context: grpc.ServicerContext) -> Any:
        study = self._find(request.name, context)
        with self._lock:
            refuse_delete_unless_final(study.job, context)
            del self._studies[study.job.name]
            self._store.delete(study.job.name)
        return deleted(self._operations, study.job.name)

    # -- a study's life ------------------------------------------------------------------------------------
    def _set(self, study: _Study, state_name: str, **fields: Any) -> bool:
        with self._lock:
            moved = move_state(study.job, state_name, **fields)
            if moved:
                self._store.save(study)
            return moved

    def _going(self, study: _Study, seconds: float) -> bool:
        study.cancel.wait(seconds)
        return not (study.cancel.is_set() or self._stopping.is_set())

    def _live(self, study: _Study) -> None:
        from google.rpc import status_pb2

        study.metrics_dir = tempfile.mkdtemp(prefix=f"tfcloud-emulator-study-{study.job_id}-")
        Path(study.metrics_dir).chmod(0o777)  # a container's user writes there
        try:
            self._run(study)
        except Exception as exc:  # never leave a study RUNNING because the emulator broke
            logger.exception("study %s", study.job_id)
            self._set(study, "JOB_STATE_FAILED",
                      error=status_pb2.Status(code=13, message=f"Internal error in the emulator: {exc}"))
        finally:
            shutil.rmtree(study.metrics_dir, ignore_errors=True)

    def _run(self, study: _Study) -> None:
        from google.rpc import status_pb2

        cancelled = status_pb2.Status(code=1, message="CANCELED")
        if not self._going(study, self._timings.queued):
            self._set(study, "JOB_STATE_CANCELLED", error=cancelled)
            return
        while self._faults.holding:
            if not self._going(study, 0.05):
                self._set(study, "JOB_STATE_CANCELLED", error=cancelled)
                return
        self._set(study, "JOB_STATE_PENDING")
        if not self._going(study, self._timings.pending):
            self._set(study, "JOB_STATE_CANCELLED", error=cancelled)
            return
        self._set(study, "JOB_STATE_RUNNING")
        with self._lock:
            spec = _copy(study.job)
        wanted = spec.max_trial_count
        parallel = max(1, spec.parallel_trial_count)
        max_failed = spec.max_failed_trial_count
        metric = spec.study_spec.metrics[0].metric_id
        pending = itertools.islice(suggestions(spec.study_spec, seed=int(study.job_id)), wanted)
        running: dict[str, str] = {}  # trial id → its CustomJob's name
        median_rule = "median_automated_stopping_spec" in spec.study_spec
        maximize = spec.study_spec.metrics[0].goal.name == "MAXIMIZE"
        finished: list[list[tuple[int, float]]] = []  # the measurements of the trials that ran to their end
        stopping: set[str] = set()
        started = succeeded = failed = 0
        exhausted = False
        while True:
            if study.cancel.is_set() or self._stopping.is_set():
                for trial_id, job_name in running.items():
                    self._jobs.cancel_job(job_name)
                    self._end_trial(study, trial_id, None, "The trial was cancelled.")
                self._set(study, "JOB_STATE_CANCELLED", error=cancelled)
                return
            while not exhausted and len(running) < parallel and not (max_failed and failed >= max_failed):
                values = next(pending, None)
                if values is None:
                    exhausted = True
                    break
                started += 1
                trial_id = str(started)
                running[trial_id] = self._start_trial(study, spec, trial_id, values)
            for trial_id, job_name in list(running.items()):
                job = self._jobs.snapshot(job_name)
                ended = job is not None and job.state.name in _TERMINAL
                measurements = (read_measurements(Path(study.metrics_dir, trial_id, _METRICS_FILE), metric)
                                if ended or (median_rule and trial_id not in stopping) else [])
                if job is None or not ended:
                    if measurements:
                        self._measured(study, trial_id, measurements)
                        if _should_stop(measurements, finished, maximize=maximize):
                            stopping.add(trial_id)
                            self._stopping_trial(study, trial_id)
                            self._jobs.cancel_job(job_name)
                    continue
                del running[trial_id]
                last = None
                if job.state.name == "JOB_STATE_SUCCEEDED" or trial_id in stopping:
                    last = measurements[-1] if measurements else None
                    reason = f"The trial reported no value of metric {metric!r}."
                else:
                    reason = f"The trial's job ended in {job.state.name}: {job.error.message}".rstrip(": ")
                if median_rule:
                    self._measured(study, trial_id, measurements)
                self._end_trial(study, trial_id, last, reason)
                if last is None:
                    failed += 1
                else:
                    succeeded += 1
                    if trial_id not in stopping:
                        finished.append(measurements)
            if not running and (exhausted or (max_failed and failed >= max_failed)):
                break
            study.cancel.wait(0.05)
        if succeeded and not (max_failed and failed >= max_failed):
            self._set(study, "JOB_STATE_SUCCEEDED")
        else:
            self._set(study, "JOB_STATE_FAILED", error=status_pb2.Status(
                code=9, message=f"{failed} of {started} trials failed; the study has no successful trial."
                if not succeeded else f"{failed} trials failed (max_failed_trial_count={max_failed})."))

    def _start_trial(self, study: _Study, spec: Any, trial_id: str, values: dict[str, Any]) -> str:
        """Start trial ``trial_id``'s CustomJob; record the trial ACTIVE; return the job's name."""
        from google.cloud.aiplatform_v1.types import CustomJob, EnvVar, Trial
        from google.protobuf import struct_pb2

        args = [f"--{name}={_text(value)}" for name, value in values.items()]
        metrics_dir = Path(study.metrics_dir, trial_id)
        metrics_dir.mkdir()
        metrics_dir.chmod(0o777)
        job_spec = _copy(spec.trial_job_spec)
        for index, pool in enumerate(job_spec.worker_pool_specs):
            if "python_package_spec" not in pool and "container_spec" not in pool:
                continue  # an empty pool, kept for the next pools' index
            target = pool.python_package_spec if "python_package_spec" in pool else pool.container_spec
            target.args.extend(args)
            # The service reads the chief's (workerpool0) measurements; every replica on Vertex AI has a /tmp of
            # its own, so the other pools write files of their own here, which nobody reads.
            metrics_file = metrics_dir / (_METRICS_FILE if index == 0 else f"workerpool{index}.metrics")
            target.env.extend([EnvVar(name="CLOUD_ML_TRIAL_ID", value=trial_id),
                               EnvVar(name="CLOUD_ML_HP_METRIC_FILE", value=str(metrics_file))])
        base = job_spec.base_output_directory.output_uri_prefix
        if base:
            job_spec.base_output_directory.output_uri_prefix = f"{base.rstrip('/')}/{trial_id}"
        custom = CustomJob(display_name=f"{spec.display_name}-trial-{trial_id}"[:128], job_spec=job_spec,
                           labels=dict(spec.labels))
        created = self._jobs.start_job(custom, number=study.number, location=study.location, hidden=True,
                                       mounts=(study.metrics_dir,), trial_id=trial_id)
        parameters = []
        for name, value in values.items():
            proto_value = struct_pb2.Value()
            if isinstance(value, str):
                proto_value.string_value = value
            else:
                proto_value.number_value = float(value)
            parameters.append(Trial.Parameter(parameter_id=name, value=proto_value))
        trial = Trial(id=trial_id, state=Trial.State.ACTIVE, parameters=parameters, start_time=_now(),
                      custom_job=created.name)
        with self._lock:
            study.job.trials.append(trial)
            study.job.update_time = _now()
        return str(created.name)

    def _end_trial(self, study: _Study, trial_id: str, last: tuple[int, float] | None, reason: str) -> None:
        """The trial SUCCEEDED with ``last`` (step, value) as its final measurement, or INFEASIBLE for ``reason``."""
        from google.cloud.aiplatform_v1.types import Measurement, Trial

        with self._lock:
            for trial in study.job.trials:
                if trial.id != trial_id:
                    continue
                trial.end_time = _now()
                if last is None:
                    trial.state = Trial.State.INFEASIBLE
                    trial.infeasible_reason = reason
                else:
                    trial.state = Trial.State.SUCCEEDED
                    metric_id = study.job.study_spec.metrics[0].metric_id
                    trial.final_measurement = Measurement(
                        step_count=last[0], metrics=[Measurement.Metric(metric_id=metric_id, value=last[1])])
            study.job.update_time = _now()

    def _measured(self, study: _Study, trial_id: str, measurements: Sequence[tuple[int, float]]) -> None:
        """The trial's intermediate measurements as ``Trial.measurements`` (ordered by step)."""
        from google.cloud.aiplatform_v1.types import Measurement

        metric_id = study.job.study_spec.metrics[0].metric_id
        with self._lock:
            for trial in study.job.trials:
                if trial.id == trial_id and len(trial.measurements) != len(measurements):
                    del trial.measurements[:]
                    trial.measurements.extend(
                        Measurement(step_count=step, metrics=[Measurement.Metric(metric_id=metric_id, value=value)])
                        for step, value in measurements)
                    study.job.update_time = _now()

    def _stopping_trial(self, study: _Study, trial_id: str) -> None:
        from google.cloud.aiplatform_v1.types import Trial

        with self._lock:
            for trial in study.job.trials:
                if trial.id == trial_id:
                    trial.state = Trial.State.STOPPING
            study.job.update_time = _now()

    def stop(self) -> None:
        """Cancel every unfinished study (its trials' jobs with it) and wait for them."""
        self._stopping.set()
        with self._lock:
            threads = [s.thread for s in self._studies.values() if s.thread is not None]
        for thread in threads:
            thread.join(30)


def _should_stop(measurements: list[tuple[int, float]], finished: list[list[tuple[int, float]]], *,
                 maximize: bool) -> bool:
    """The median automated stopping rule as the API documents it: a trial stops when its best value so far is
    strictly worse than the median of the finished trials' performance (the running average of their values)
    up to its last step. Judged once ``EARLY_STOPPING_MIN_TRIALS`` trials finished, from step
    ``EARLY_STOPPING_WARMUP_STEPS``."""
    import statistics

    from tfcloud.job.study import EARLY_STOPPING_MIN_TRIALS, EARLY_STOPPING_WARMUP_STEPS

    step = measurements[-1][0]
    if len(finished) < EARLY_STOPPING_MIN_TRIALS or step < EARLY_STOPPING_WARMUP_STEPS:
        return False
    performance = []
    for other in finished:
        values = [value for other_step, value in other if other_step <= step]
        if values:
            performance.append(sum(values) / len(values))
    if not performance:
        return False
    median = statistics.median(performance)
    values = [value for _, value in measurements]
    return max(values) < median if maximize else min(values) > median


def _text(value: Any) -> str:
    """A parameter value as Vertex AI writes it in ``--NAME=VALUE``: integers without a point."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def _choices(param: Any) -> list[Any] | None:
    """Every value of a parameter that a grid can hold (None for a double range)."""
    if "integer_value_spec" in param:
        return list(range(param.integer_value_spec.min_value, param.integer_value_spec.max_value + 1))
    if "categorical_value_spec" in param:
        return list(param.categorical_value_spec.values)
    if "discrete_value_spec" in param:
        return list(param.discrete_value_spec.values)
    return None


def _sample(param: Any, rng: random.Random) -> Any:
    log_scale = param.scale_type.name == "UNIT_LOG_SCALE"
    if "double_value_spec" in param:
        low, high = param.double_value_spec.min_value, param.double_value_spec.max_value
        return math.exp(rng.uniform(math.log(low), math.log(high))) if log_scale else rng.uniform(low, high)
    if "integer_value_spec" in param:
        low, high = param.integer_value_spec.min_value, param.integer_value_spec.max_value
        if log_scale:
            return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))
        return rng.randint(low, high)
    choices = _choices(param)
    assert choices
    return rng.choice(choices)


def suggestions(study_spec: Any, *, seed: int) -> Iterator[dict[str, Any]]:
    """The parameter values of each next trial: every grid point in order for ``GRID_SEARCH``, else random
    samples (seeded; on each parameter's scale) without end."""
    params = list(study_spec.parameters)
    names = [param.parameter_id for param in params]
    if study_spec.algorithm.name == "GRID_SEARCH":
        grids = [_choices(param) or [] for param in params]
        for point in itertools.product(*grids):
            yield dict(zip(names, point, strict=True))
        return
    rng = random.Random(seed)
    while True:
        yield {param.parameter_id: _sample(param, rng) for param in params}



def validate_tuning_job(job: Any) -> list[tuple[str, str]]:
    """What the service rejects with INVALID_ARGUMENT in the study and counts, as ``(field, description)``
    violations (the first found); empty when they are acceptable (the trial spec is checked as a CustomJob's,
    :mod:`tfcloud.emulator._rules`)."""
    if not job.display_name:
        return [("display_name", "display_name is required.")]
    study = job.study_spec
    if len(study.metrics) != 1 or not study.metrics[0].metric_id:
        return [("study_spec.metrics", "must hold exactly one metric with a metric_id.")]
    if study.metrics[0].goal.name == "GOAL_TYPE_UNSPECIFIED":
        return [("study_spec.metrics[0].goal", "must be MAXIMIZE or MINIMIZE.")]
    if not study.parameters:
        return [("study_spec.parameters", "must not be empty.")]
    seen: set[str] = set()
    for index, param in enumerate(study.parameters):
        where = f"study_spec.parameters[{index}]"
        if not param.parameter_id or param.parameter_id in seen:
            return [(f"{where}.parameter_id", f"must be set and unique, received {param.parameter_id!r}.")]
        seen.add(param.parameter_id)
        kinds = [k for k in ("double_value_spec", "integer_value_spec", "categorical_value_spec",
                             "discrete_value_spec") if k in param]
        if len(kinds) != 1:
            return [(where, "exactly one of double_value_spec, integer_value_spec, categorical_value_spec and "
                            "discrete_value_spec is required.")]
        kind = kinds[0]
        if kind in ("double_value_spec", "integer_value_spec"):
            value_spec = getattr(param, kind)
            if not value_spec.min_value < value_spec.max_value:
                return [(f"{where}.{kind}", "min_value must be less than max_value.")]
            if param.scale_type.name == "UNIT_LOG_SCALE" and value_spec.min_value <= 0:
                return [(f"{where}.{kind}", "min_value must be positive with UNIT_LOG_SCALE.")]
        elif not getattr(param, kind).values:
            return [(f"{where}.{kind}.values", "must not be empty.")]
        if study.algorithm.name == "GRID_SEARCH" and kind == "double_value_spec":
            return [(where, "GRID_SEARCH cannot search a double_value_spec; use integer, categorical or discrete.")]
    if "median_automated_stopping_spec" in study and study.median_automated_stopping_spec.use_elapsed_duration:
        return [("study_spec.median_automated_stopping_spec.use_elapsed_duration",
                 "use_elapsed_duration is not supported by the emulator (it judges measurements by step).")]
    if job.max_trial_count < 1:
        return [("max_trial_count", "max_trial_count must be positive.")]
    if job.parallel_trial_count < 1:
        return [("parallel_trial_count", "parallel_trial_count must be positive.")]
    return []
