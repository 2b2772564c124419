"""The local tuner: a study's trials as local tfcloud jobs, the search by optuna.

:func:`start_local_study` checks the tune extra, makes the study's directory and starts the tuner (a thread of the
calling process) that asks optuna for parameters (TPE for ``Algorithm.DEFAULT``, random, or grid), has each trial
submitted as a normal local job (the user's arguments, then ``--NAME=VALUE`` per parameter, any cluster shape) by
the ``submit_trial`` its caller passes (:data:`tfcloud.job.study.SubmitTrial`: the SDK runs the pipeline's stages; a
target never imports the pipeline), runs ``parallel_trials`` at a time, reads each trial's final metric from its
metrics file (:func:`tfcloud.job.study.read_metric`) and tells optuna. A trial that fails, or succeeds without
reporting the metric, is recorded as failed and the study goes on. With ``StudySpec.early_stopping`` the tuner also
reads each running trial's intermediate measurements (:func:`tfcloud.job.study.read_measurements`), reports them to
optuna (``trial.report(value, step)``) and, when optuna's ``MedianPruner`` says so, cancels the trial's job and
records it SUCCEEDED with ``stopped_at`` (its last measurement is its metric, as on Vertex AI). Every change is
written to ``study.json``, so ``tfcloud status study-...`` (:func:`attach_local_study`) works from another process.

A study's directory, ``<state dir>/studies/<study id>/``::

    study.json                 StudyInfo.to_dict(), plus the entry point, its arguments and the tuner's pid
    trials/<n>/output.metrics  trial n's CLOUD_ML_HP_METRIC_FILE (its job is local-... in <state dir>/jobs)
    cancel                     present once the study was cancelled (from any process)
    plot.png, plot.html        the metric against trial and against each parameter, at the end
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.config.extras import require_tune_extra
from tfcloud.errors import JobNotFoundError, TfcloudError
from tfcloud.job.states import JobState
from tfcloud.job.study import (
    EARLY_STOPPING_MIN_TRIALS,
    EARLY_STOPPING_WARMUP_STEPS,
    METRIC_ENV,
    METRICS_FILE_ENV,
    TRIAL_ID_ENV,
    Algorithm,
    Goal,
    ParamKind,
    ParamSpec,
    Scale,
    StudyInfo,
    StudySpec,
    TrialInfo,
    read_measurements,
    read_metric,
    trial_args,
)
from tfcloud.records.files import write_private_json
from tfcloud.records.statedir import check_state_dir, source_of, state_dir, studies_dir
from tfcloud.records.statedir import study_dir as study_path

if TYPE_CHECKING:
    from tfcloud.backends.base import JobHandle
    from tfcloud.config.value import Settings
    from tfcloud.job.spec import JobSpec
    from tfcloud.targets._base import SubmitTrial, Target

__all__ = [
    "STUDY_FILE",
    "LocalStudy",
    "attach_local_study",
    "grid_size",
    "list_local_studies",
    "start_local_study",
]

logger = logging.getLogger("tfcloud")

#: The metric a trial's launcher reports from Keras `fit` (templates/launcher.py.j2, _install_report).
STUDY_FILE = "study.json"
CANCEL_FILE = "cancel"
_POLL_S = 0.25
_TERMINAL = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)
_STUDY_ID = re.compile(r"^study-[a-z0-9-]{1,80}$")


def make_study_id(entry_point: Path, *, now: datetime.datetime | None = None) -> str:
    """``study-<entry point stem>-<yyyymmdd-hhmmss>-<4 hex>``."""
    stem = re.sub(r"[^a-z0-9]+", "-", entry_point.stem.lower()).strip("-")[:30].strip("-") or "job"
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    return f"study-{stem}-{stamp}-{secrets.token_hex(2)}"


def grid_size(study: StudySpec) -> int:
    """How many points the grid has (int ranges count every integer)."""
    size = 1
    for spec in study.params:
        size *= len(_grid_values(spec))
    return size


def _grid_values(spec: ParamSpec) -> list[Any]:
    if spec.kind is ParamKind.INTEGER:
        assert spec.low is not None and spec.high is not None
        return list(range(int(spec.low), int(spec.high) + 1))
    return list(spec.values)


def _distributions(study: StudySpec) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    found: dict[str, Any] = {}
    for spec in study.params:
        log = spec.scale is Scale.LOG
        if spec.kind is ParamKind.DOUBLE:
            assert spec.low is not None and spec.high is not None
            found[spec.name] = FloatDistribution(spec.low, spec.high, log=log)
        elif spec.kind is ParamKind.INTEGER:
            assert spec.low is not None and spec.high is not None
            found[spec.name] = IntDistribution(int(spec.low), int(spec.high), log=log)
        else:
            found[spec.name] = CategoricalDistribution(list(spec.values))
    return found


def _sampler(study: StudySpec) -> Any:
    import optuna

    if study.algorithm is Algorithm.RANDOM:
        return optuna.samplers.RandomSampler()
    if study.algorithm is Algorithm.GRID:
        return optuna.samplers.GridSampler({spec.name: _grid_values(spec) for spec in study.params})
    return optuna.samplers.TPESampler()


def _pruner(study: StudySpec) -> Any:
    """optuna's MedianPruner for a study with early stopping (the thresholds of :mod:`tfcloud.job.study`), else
    none."""
    import optuna

    if not study.early_stopping:
        return optuna.pruners.NopPruner()
    return optuna.pruners.MedianPruner(n_startup_trials=EARLY_STOPPING_MIN_TRIALS,
                                       n_warmup_steps=EARLY_STOPPING_WARMUP_STEPS)


class LocalStudy:
    """A local study's handle (:class:`tfcloud.job.study.StudyHandle`): reads ``study.json``; ``cancel()`` marks the
    study cancelled (the tuner, in whichever process, stops its running trials)."""

    def __init__(self, study_dir: Path, *, tuner: _Tuner | None = None) -> None:
        self.path = study_dir
        self.study_id = study_dir.name  # the directory's name is the study's id
        self._tuner = tuner

    def __repr__(self) -> str:
        return f"LocalStudy({self.study_id!r})"

    def record(self) -> dict[str, Any]:
        """``study.json`` as written: the StudyInfo's dict plus ``entry_point``, ``entry_point_args``,
        ``rerun_flags``, ``tuner_pid`` and ``message``."""
        try:
            data: dict[str, Any] = json.loads((self.path / STUDY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise JobNotFoundError(f"Cannot read the study {self.study_id} in {self.path}: {exc}.") from exc
        return data

    def info(self) -> StudyInfo:
        from tfcloud.targets.local.backend import pid_alive

        data = self.record()
        info = StudyInfo.from_dict(data)
        pid = data.get("tuner_pid")
        if (info.state not in _TERMINAL and self._tuner is None and isinstance(pid, int)
                and not pid_alive(pid)):
            # The tuner's process ended without finishing the study (killed): its trials stopped with it.
            info = dataclasses.replace(info, state=JobState.FAILED)
        return dataclasses.replace(info, plots=self.plot_paths)

    @property
    def best_trial(self) -> TrialInfo | None:
        return self.info().best_trial

    @property
    def plot_paths(self) -> tuple[Path, Path]:
        """The PNG and HTML plots the tuner writes at the end."""
        return self.path / "plot.png", self.path / "plot.html"

    def wait(self, timeout: float | None = None) -> StudyInfo:
        """Block until the study ends (or ``timeout`` seconds pass). Ctrl-C while waiting on a study this
        process runs cancels it (its trials are local jobs), then raises KeyboardInterrupt."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                info = self.info()
                if info.state in _TERMINAL:
                    if self._tuner is not None:
                        self._tuner.join()
                    return info
                if deadline is not None and time.monotonic() >= deadline:
                    return info
                time.sleep(_POLL_S)
        except KeyboardInterrupt:
            if self._tuner is not None:
                self.cancel()
            raise

    def cancel(self) -> None:
        """No new trials; the running ones are cancelled. Returns once the tuner has stopped (from another
        process: after at most a minute)."""
        try:
            (self.path / CANCEL_FILE).touch()
        except OSError as exc:
            raise TfcloudError(f"Cannot cancel the study {self.study_id}: {exc}.") from exc
        if self._tuner is not None:
            self._tuner.stop.set()
            self._tuner.join()
        else:  # the tuner runs in another process: it stops the trials within moments
            self.wait(timeout=60)


@dataclasses.dataclass
class _Trial:
    number: int
    params: dict[str, Any]
    metrics: Path
    handle: JobHandle | None = None
    state: JobState = JobState.QUEUED
    metric: float | None = None
    started: float | None = None
    ended: float | None = None
    message: str | None = None
    optuna_trial: Any = None
    reported: int = -1  # the last step told to optuna
    stopped_at: int | None = None

    def info(self) -> TrialInfo:
        return TrialInfo(trial_id=str(self.number), params=dict(self.params), state=self.state,
                         metric=self.metric, started=self.started, ended=self.ended,
                         job_id=self.handle.job_id if self.handle is not None else None, message=self.message,
                         stopped_at=self.stopped_at)


class _Tuner(threading.Thread):
    def __init__(self, *, study: StudySpec, spec: JobSpec, submit_trial: SubmitTrial, study_dir: Path,
                 record: Mapping[str, Any]) -> None:
        super().__init__(name=f"tfcloud-tuner-{study_dir.name}")
        self.study = study
        self.spec = spec
        self.submit_trial = submit_trial
        self.dir = study_dir
        self.record = dict(record)
        self.stop = threading.Event()
        self.trials: list[_Trial] = []
        self.state = JobState.RUNNING
        self.message: str | None = None
        self.lock = threading.Lock()

    # --- what the study looks like --------------------------------------------------------------------------
    def info(self) -> StudyInfo:
        with self.lock:
            trials = tuple(t.info() for t in self.trials)
        return StudyInfo(study_id=self.dir.name, target="local", state=self.state, study=self.study, trials=trials)

    def save(self) -> None:
        info = self.info()
        write_private_json(self.dir / STUDY_FILE, {**self.record, **info.to_dict(), "message": self.message})

    # --- the loop -------------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._search()
        except BaseException as exc:  # recorded, never lost in a thread
            logger.debug("the tuner stopped", exc_info=True)
            self.message = f"The tuner stopped: {exc}"
            self.state = JobState.FAILED
            self._cancel_running()
        finally:
            self._finish()

    def _cancelled(self) -> bool:
        return self.stop.is_set() or (self.dir / CANCEL_FILE).exists()

    def _search(self) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        direction = (optuna.study.StudyDirection.MAXIMIZE if self.study.goal is Goal.MAXIMIZE
                     else optuna.study.StudyDirection.MINIMIZE)
        search = optuna.create_study(direction=direction, sampler=_sampler(self.study), pruner=_pruner(self.study))
        distributions = _distributions(self.study)
        total = self.study.max_trials
        if self.study.algorithm is Algorithm.GRID:
            total = min(total, grid_size(self.study))
        asked = 0
        while True:
            if self._cancelled():
                self._cancel_running()
                self.state = JobState.CANCELLED
                return
            running = [t for t in self.trials if t.state not in _TERMINAL]
            while len(running) < self.study.parallel_trials and asked < total:
                asked += 1
                trial = self._start(search.ask(distributions), asked)
                running.append(trial)
                self.save()
            changed = False
            for trial in running:
                changed |= self._poll(trial, search)
            if changed:
                self.save()
            if asked >= total and all(t.state in _TERMINAL for t in self.trials):
                self.state = (JobState.SUCCEEDED if any(t.state is JobState.SUCCEEDED for t in self.trials)
                              else JobState.FAILED)
                return
            self.stop.wait(_POLL_S)

    def _start(self, optuna_trial: Any, number: int) -> _Trial:
        metrics = self.dir / "trials" / str(number) / "output.metrics"
        metrics.parent.mkdir(parents=True, exist_ok=True)
        trial = _Trial(number=number, params=dict(optuna_trial.params), metrics=metrics, optuna_trial=optuna_trial)
        env = {**self.spec.env, METRICS_FILE_ENV: str(metrics), TRIAL_ID_ENV: str(number),
               METRIC_ENV: self.study.metric}
        spec = dataclasses.replace(self.spec, env=env,
                                   entry_point_args=(*self.spec.entry_point_args,
                                                     *trial_args(self.study, trial.params)))
        trial.started = time.time()
        try:
            trial.handle = self.submit_trial(spec)
            trial.state = JobState.RUNNING
        except TfcloudError as exc:
            trial.state, trial.ended, trial.message = JobState.FAILED, time.time(), exc.message
            self._tell(trial)
        with self.lock:
            self.trials.append(trial)
        return trial

    def _poll(self, trial: _Trial, search: Any) -> bool:
        if trial.handle is None or trial.state in _TERMINAL:
            return False
        job = trial.handle.info()
        latest = read_metric(trial.metrics, self.study.metric)
        if job.state not in _TERMINAL:
            changed = latest != trial.metric
            trial.metric = latest  # the latest measurement while it runs
            if self.study.early_stopping and self._judge(trial, search):
                self._tell(trial)
                return True
            return changed
        trial.ended = time.time()
        trial.metric = latest
        if self.study.early_stopping:
            self._catch_up(trial)  # the last measurements count in the median the next trials are judged by
        if job.state is JobState.SUCCEEDED and latest is None:
            trial.state = JobState.FAILED
            trial.message = (f"The trial succeeded but reported no `{self.study.metric}` (tfcloud.report, or "
                             "model.fit's epoch logs).")
        else:
            trial.state = job.state
            if job.state is not JobState.SUCCEEDED:
                from tfcloud.view.outcome import failure

                error = failure(trial.handle, 5)
                trial.message = error.summary if error is not None else f"Job {job.job_id} {job.state.value}."
        self._tell(trial)
        return True

    def _catch_up(self, trial: _Trial) -> bool:
        """Report the trial's measurements optuna has not seen yet (``trial.report(value, step)``); whether
        there were any."""
        if trial.optuna_trial is None:
            return False
        fresh = [(step, value) for step, value in read_measurements(trial.metrics, self.study.metric)
                 if step > trial.reported]
        for step, value in fresh:
            trial.optuna_trial.report(value, step)
            trial.reported = step
        return bool(fresh)

    def _judge(self, trial: _Trial, search: Any) -> bool:
        """Tell optuna the trial's new intermediate measurements; when its pruner says the trial should stop,
        cancel its job and record it stopped. Whether it was stopped."""
        import statistics

        import optuna

        if not self._catch_up(trial) or not trial.optuna_trial.should_prune():
            return False
        step = trial.reported
        assert trial.handle is not None
        finished = search.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        median = statistics.median(t.intermediate_values[step] for t in finished if step in t.intermediate_values)
        try:
            trial.handle.cancel()
            if trial.handle.wait(timeout=60).state is JobState.SUCCEEDED:
                return False  # it ended on its own before the cancel: the next look records it as finished
        except TfcloudError:
            logger.debug("stopping %s", trial.handle.job_id, exc_info=True)
        trial.ended = time.time()
        trial.state = JobState.SUCCEEDED
        trial.stopped_at = step
        trial.metric = read_metric(trial.metrics, self.study.metric)
        trial.message = (f"Stopped early at step {step}: its best `{self.study.metric}` so far was worse than the "
                         f"median of the finished trials at that step ({median:.6g}).")
        return True

    def _tell(self, trial: _Trial) -> None:
        import optuna

        if trial.optuna_trial is None:
            return
        study = trial.optuna_trial.study
        try:
            if trial.stopped_at is not None:
                study.tell(trial.optuna_trial, state=optuna.trial.TrialState.PRUNED)
            elif trial.state is JobState.SUCCEEDED and trial.metric is not None:
                study.tell(trial.optuna_trial, trial.metric)
            else:
                study.tell(trial.optuna_trial, state=optuna.trial.TrialState.FAIL)
        except RuntimeError:
            # GridSampler calls study.stop() once the grid is done, which optuna refuses outside optimize(); the
            # trial is recorded all the same (tell stores it before raising).
            if self.study.algorithm is not Algorithm.GRID:
                raise

    def _cancel_running(self) -> None:
        running = [t for t in self.trials if t.handle is not None and t.state not in _TERMINAL]
        for trial in running:
            assert trial.handle is not None
            try:
                trial.handle.cancel()
            except TfcloudError:
                logger.debug("cancelling %s", trial.handle.job_id, exc_info=True)
        for trial in running:
            assert trial.handle is not None
            with contextlib.suppress(TfcloudError):
                trial.handle.wait(timeout=60)
            trial.state, trial.ended = JobState.CANCELLED, time.time()
            trial.message = "Cancelled with the study."
            trial.metric = read_metric(trial.metrics, self.study.metric)

    def _finish(self) -> None:
        """The plots, then the final state (so whoever sees the study ended finds its plots)."""
        if self.state is not JobState.CANCELLED:
            try:
                from tfcloud.view.studyplots import write_plots

                png, page = LocalStudy(self.dir).plot_paths
                write_plots(self.info(), png=png, html_path=page)
            except Exception as exc:  # a plot never fails the study
                logger.warning("The study's plots could not be written: %s", exc)
        self.save()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def start_local_study(study: StudySpec, spec: JobSpec, settings: Settings, *, submit_trial: SubmitTrial,
                      rerun_flags: Sequence[str] = ()) -> LocalStudy:
    """Make the study's directory and start the tuner; returns at once. ``spec`` is the trials' job (the
    user's arguments; each trial adds its ``--NAME=VALUE``), each run by ``submit_trial``."""
    from tfcloud.errors import ConfigurationError
    from tfcloud.replicas import spec_roles

    require_tune_extra()
    home = state_dir(settings)  # where the local backend keeps the trials' jobs
    check_state_dir(home, source=source_of(settings))
    replicas = len(spec_roles(spec))
    cores = _cores()
    if study.parallel_trials * replicas > cores:
        logger.warning("%d trials at once x %d replica(s) each = %d processes on %d CPU core(s): trials will be "
                       "slow; lower --parallel.", study.parallel_trials, replicas,
                       study.parallel_trials * replicas, cores)
    study_dir = study_path(home, make_study_id(spec.entry_point))
    try:
        study_dir.mkdir(mode=0o700, parents=True)
    except OSError as exc:
        raise ConfigurationError(f"Cannot create the study directory {study_dir}: {exc.strerror or exc}.",
                                 hint="Set TFCLOUD_HOME to a directory you can write to.") from exc
    record = {"entry_point": str(spec.entry_point), "entry_point_args": list(spec.entry_point_args),
              "rerun_flags": list(rerun_flags), "tuner_pid": os.getpid(), "created": time.time()}
    tuner = _Tuner(study=study, spec=spec, submit_trial=submit_trial, study_dir=study_dir, record=record)
    tuner.save()
    tuner.start()
    return LocalStudy(study_dir, tuner=tuner)


def attach_local_study(study_id: str, settings: Settings | None = None) -> LocalStudy:
    """A local study by id, from any process."""
    home = state_dir(settings)
    study_dir = study_path(home, study_id)
    if not _STUDY_ID.match(study_id) or not (study_dir / STUDY_FILE).is_file():
        studies = studies_dir(home)
        found = sorted(studies.glob("study-*"), key=lambda p: p.stat().st_mtime) if studies.is_dir() else []
        recent = ", ".join(p.name for p in found[-3:]) or "none"
        raise JobNotFoundError(f"No local study `{study_id}` in {studies_dir(home)}.",
                               hint=f"The most recent local studies: {recent}.")
    return LocalStudy(study_dir)


class LocalTuner:
    """The local target's tuner (``LocalTarget.tuner``): studies run by optuna on this machine, each trial a
    local job. ``start`` returns at once; ``attach`` finds a study from any process."""

    def __init__(self, settings: Settings, *, target: Target | None = None) -> None:
        self.settings = settings  # the local target's value holds nothing its studies need

    def start(self, study: StudySpec, spec: JobSpec, *, job: object = None, rerun_flags: Sequence[str] = (),
              submit_trial: SubmitTrial) -> tuple[LocalStudy, tuple[str, ...]]:
        """The study's handle and the flags that rerun a trial with ``tfcloud submit``; each trial is a local job
        that ``submit_trial`` (the caller's: the SDK runs the pipeline) submits."""
        return (start_local_study(study, spec, self.settings, submit_trial=submit_trial, rerun_flags=rerun_flags),
                tuple(rerun_flags))

    def attach(self, study_id: str) -> tuple[LocalStudy, str, tuple[str, ...], tuple[str, ...]]:
        """The study's handle, its script, the script's arguments and the rerun flags."""
        local = attach_local_study(study_id, self.settings)
        record = local.record()
        return (local, str(record.get("entry_point", "")),
                tuple(str(a) for a in record.get("entry_point_args") or ()),
                tuple(str(f) for f in record.get("rerun_flags") or ()))

    def list(self, *, limit: int | None = 50) -> list[StudyInfo]:
        return list_local_studies(self.settings, limit=limit)

    def close(self) -> None:
        """Nothing to release: the tuner thread ends with its study."""


def list_local_studies(settings: Settings | None = None, *, limit: int | None = 50) -> list[StudyInfo]:
    """The local studies kept in the state dir, newest first (one whose ``study.json`` is unreadable is left
    out)."""
    from tfcloud.records.statedir import state_dir

    root = studies_dir(state_dir(settings))
    dirs = [p for p in root.glob("study-*") if _STUDY_ID.match(p.name) and (p / STUDY_FILE).is_file()]
    found: list[StudyInfo] = []
    for path in sorted(dirs, key=lambda p: p.name.rsplit("-", 1)[0].split("-")[-2:], reverse=True):
        try:
            found.append(LocalStudy(path).info())
        except (TfcloudError, ValueError, KeyError, TypeError):
            continue
        if limit is not None and len(found) >= limit:
            break
    return found


if TYPE_CHECKING:  # the local tuner keeps the tuner protocol (mypy checks it here)
    from tfcloud.targets._base import Tuner

    _TUNER: type[Tuner] = LocalTuner
