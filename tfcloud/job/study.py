"""What a hyperparameter tuning study is: its parameters, its metric and goal, its trial budget.

A :class:`StudySpec` is to tuning what :class:`tfcloud.job.spec.JobSpec` is to one job: a frozen value, made and
checked once (:func:`make_study`), then run by the local tuner or sent to Vertex AI as a
HyperparameterTuningJob. Every trial is a normal tfcloud job whose script receives the parameters as
arguments (``--learning_rate=0.01``), as Vertex AI passes them.

Parameter syntax (``--param`` on the CLI, strings or :class:`ParamSpec` in the SDK)::

    learning_rate=double:1e-4:1e-1:log     a float in [low, high], scale linear (default) or log
    units=int:32:512                       an integer in [low, high], scale linear (default) or log
    optimizer=categorical:adam,sgd         one of the strings
    batch_size=discrete:32,64,128          one of the numbers

Metrics are read the way Vertex AI's tuning service reads them: JSON lines in the file named by
``CLOUD_ML_HP_METRIC_FILE`` (default ``/tmp/hypertune/output.metrics``), as the ``cloudml-hypertune``
package writes them; the last line that holds the metric is the trial's final measurement, and every line
that holds it is an intermediate measurement at its ``global_step`` (:func:`read_measurements`), which early
stopping (``StudySpec.early_stopping``, the median rule) judges while the trial runs.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tfcloud.errors import ValidationError
from tfcloud.job.states import JobState

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_METRICS_FILE",
    "EARLY_STOPPING_MIN_TRIALS",
    "EARLY_STOPPING_WARMUP_STEPS",
    "METRICS_FILE_ENV",
    "METRIC_ENV",
    "TRIAL_ID_ENV",
    "Algorithm",
    "Goal",
    "ParamKind",
    "ParamSpec",
    "Scale",
    "StudyHandle",
    "StudyInfo",
    "StudySpec",
    "TrialInfo",
    "format_value",
    "make_study",
    "parse_param",
    "read_measurements",
    "read_metric",
    "trial_args",
    "write_metric",
]

#: The environment variable naming the metrics file (Vertex AI and cloudml-hypertune use the same one).
METRICS_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"
#: Where the metrics go when the variable is unset (cloudml-hypertune's default).
DEFAULT_METRICS_FILE = "/tmp/hypertune/output.metrics"
#: Set in a trial's replicas to the study's metric: the launcher's Keras ``fit`` callback reports it each epoch.
METRIC_ENV = "TFCLOUD_TUNING_METRIC"
#: The environment variable holding the trial's id (set by Vertex AI and by tfcloud's local tuner).
TRIAL_ID_ENV = "CLOUD_ML_TRIAL_ID"
#: cloudml-hypertune keeps the last 100 measurements in the file.
_HISTORY = 100

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_METRIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]{0,127}$")
MAX_TRIALS = 10_000  # a guard against typos; Vertex AI's own quota is per project
#: Early stopping judges a trial only once this many trials ran to their end (their measurements make the
#: median): two keeps the rule useful in the small studies tfcloud runs (optuna's MedianPruner default is 5).
EARLY_STOPPING_MIN_TRIALS = 2
#: ... and only from this step on: Keras fit reports epoch N at step N, so the first epoch (often noisy) never
#: stops a trial.
EARLY_STOPPING_WARMUP_STEPS = 2


class ParamKind(enum.Enum):
    DOUBLE = "double"
    INTEGER = "int"
    CATEGORICAL = "categorical"
    DISCRETE = "discrete"


class Scale(enum.Enum):
    LINEAR = "linear"
    LOG = "log"


class Goal(enum.Enum):
    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"


class Algorithm(enum.Enum):
    """The search. ``DEFAULT``: optuna's TPE locally, Vertex AI's default (Bayesian) in the cloud."""

    DEFAULT = "default"
    RANDOM = "random"
    GRID = "grid"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ParamSpec:
    """One parameter. ``low``/``high`` for double and int; ``values`` for categorical (strings) and discrete
    (numbers, ascending)."""

    name: str
    kind: ParamKind
    low: float | None = None
    high: float | None = None
    scale: Scale = Scale.LINEAR
    values: tuple[str, ...] | tuple[float, ...] = ()

    def __str__(self) -> str:
        if self.kind in (ParamKind.DOUBLE, ParamKind.INTEGER):
            text = f"{self.name}={self.kind.value}:{format_value(self, self.low)}:{format_value(self, self.high)}"
            return text + (":log" if self.scale is Scale.LOG else "")
        return f"{self.name}={self.kind.value}:" + ",".join(format_value(self, v) for v in self.values)


@dataclasses.dataclass(frozen=True, kw_only=True)
class StudySpec:
    """A study: the parameters, the metric and its goal, and how many trials run (in total, at once)."""

    params: tuple[ParamSpec, ...]
    metric: str
    goal: Goal = Goal.MAXIMIZE
    max_trials: int = 10
    parallel_trials: int = 1
    algorithm: Algorithm = Algorithm.DEFAULT
    #: The median rule: a running trial whose best intermediate measurement is worse than the median of the
    #: finished trials' measurements at the same step is stopped (``tfcloud docs tuning#early-stopping``).
    early_stopping: bool = False

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def better(self, a: float, b: float) -> bool:
        """Whether metric value ``a`` is better than ``b`` for this study's goal."""
        return a > b if self.goal is Goal.MAXIMIZE else a < b


_EXPECTED = ("NAME=double:LOW:HIGH[:log], NAME=int:LOW:HIGH[:log], NAME=categorical:A,B,... "
             "or NAME=discrete:N1,N2,...")


def _number(text: str, field: str, param: str, *, integer: bool) -> float:
    try:
        if not text.isascii() or "_" in text:  # int() and float() also take "١٢٣" and "1_0"
            raise ValueError(text)
        value = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ValidationError(f"{field} {param}", kind, text) from None
    if not math.isfinite(value):
        raise ValidationError(f"{field} {param}", "a finite number", text)
    return value


def parse_param(text: str, *, field: str = "param") -> ParamSpec:
    """``"units=int:32:512"`` → a :class:`ParamSpec`. Raises :class:`ValidationError` naming the part."""
    if not isinstance(text, str):
        raise ValidationError(field, _EXPECTED, text)
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not _NAME.match(name):
        raise ValidationError(field, _EXPECTED + " (NAME: letters, digits, _ . -; not starting with a digit)",
                              text)
    kind_text, colon, body = rest.partition(":")
    try:
        kind = ParamKind(kind_text.strip().lower())
    except ValueError:
        raise ValidationError(f"{field} {name}", "a type: double, int, categorical or discrete",
                              kind_text, hint=f"Write it as one of: {_EXPECTED}") from None
    if not colon or not body:
        raise ValidationError(f"{field} {name}", _EXPECTED, text)
    if kind in (ParamKind.DOUBLE, ParamKind.INTEGER):
        parts = body.split(":")
        if len(parts) not in (2, 3):
            raise ValidationError(f"{field} {name}", f"{kind.value}:LOW:HIGH or {kind.value}:LOW:HIGH:log", rest)
        integer = kind is ParamKind.INTEGER
        low = _number(parts[0].strip(), field, name, integer=integer)
        high = _number(parts[1].strip(), field, name, integer=integer)
        scale_text = parts[2].strip().lower() if len(parts) == 3 else "linear"
        try:
            scale = Scale(scale_text)
        except ValueError:
            raise ValidationError(f"{field} {name}", "a scale: linear or log", parts[2]) from None
        return _checked(ParamSpec(name=name, kind=kind, low=low, high=high, scale=scale), field)
    items = [item.strip() for item in body.split(",")]
    if kind is ParamKind.CATEGORICAL:
        return _checked(ParamSpec(name=name, kind=kind, values=tuple(items)), field)
    numbers = tuple(_number(item, field, name, integer=False) for item in items)
    return _checked(ParamSpec(name=name, kind=kind, values=numbers), field)


def _checked(spec: ParamSpec, field: str) -> ParamSpec:
    where = f"{field} {spec.name}"
    if spec.kind in (ParamKind.DOUBLE, ParamKind.INTEGER):
        if spec.low is None or spec.high is None or not spec.low < spec.high:
            raise ValidationError(where, "LOW < HIGH", f"{spec.low}:{spec.high}")
        if spec.scale is Scale.LOG and spec.low <= 0:
            raise ValidationError(where, "LOW > 0 with the log scale", spec.low)
        if spec.kind is ParamKind.INTEGER and (spec.low != int(spec.low) or spec.high != int(spec.high)):
            raise ValidationError(where, "integer bounds", f"{spec.low}:{spec.high}")
        if spec.values:
            raise ValidationError(where, "no values for a range parameter", spec.values)
        return spec
    if not spec.values or any(v == "" for v in spec.values):
        raise ValidationError(where, "a non-empty, comma-separated list of values", ",".join(map(str, spec.values)))
    if len(set(spec.values)) != len(spec.values):
        raise ValidationError(where, "values without repeats", ",".join(map(str, spec.values)))
    if spec.kind is ParamKind.DISCRETE:
        numbers = [float(v) for v in spec.values]
        return dataclasses.replace(spec, values=tuple(sorted(numbers)))
    return spec


def make_study(params: Iterable[str | ParamSpec] | Mapping[str, str], *, metric: str, goal: Goal | str = "maximize",
               max_trials: int = 10, parallel_trials: int = 1,
               algorithm: Algorithm | str = "default", early_stopping: bool = False) -> StudySpec:
    """The one gate for a study: every field checked, errors name the field, what was expected and received."""
    if isinstance(params, Mapping):
        items: list[str | ParamSpec] = [f"{k}={v}" for k, v in params.items()]
    elif isinstance(params, str | bytes):
        raise ValidationError("params", "a list of parameters (" + _EXPECTED + ")", params)
    else:
        items = list(params)
    specs = tuple(item if isinstance(item, ParamSpec) else parse_param(item) for item in items)
    specs = tuple(_checked(s, "param") if isinstance(s, ParamSpec) else s for s in specs)
    if not specs:
        raise ValidationError("params", "at least one parameter (" + _EXPECTED + ")", "none")
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValidationError("params", "each parameter named once", ", ".join(repeated))
    if not isinstance(metric, str) or not _METRIC.match(metric):
        raise ValidationError("metric", "a metric name such as val_accuracy (letters, digits, _ . / -)", metric)
    goal_value = _enum(Goal, goal, "goal", "maximize or minimize")
    algorithm_value = _enum(Algorithm, algorithm, "algorithm", "default, random or grid")
    if isinstance(max_trials, bool) or not isinstance(max_trials, int) or not 1 <= max_trials <= MAX_TRIALS:
        raise ValidationError("trials", f"an integer from 1 to {MAX_TRIALS}", max_trials)
    if (isinstance(parallel_trials, bool) or not isinstance(parallel_trials, int)
            or not 1 <= parallel_trials <= max_trials):
        raise ValidationError("parallel", f"an integer from 1 to the number of trials ({max_trials})",
                              parallel_trials)
    if not isinstance(early_stopping, bool):
        raise ValidationError("early_stopping", "true or false", early_stopping)
    if algorithm_value is Algorithm.GRID:
        for spec in specs:
            if spec.kind is ParamKind.DOUBLE:
                raise ValidationError(f"param {spec.name}", "int, categorical or discrete parameters with grid "
                                      "search (Vertex AI cannot grid a double range)", str(spec))
    return StudySpec(params=specs, metric=metric, goal=goal_value, max_trials=max_trials,
                     parallel_trials=parallel_trials, algorithm=algorithm_value, early_stopping=early_stopping)


def _enum(kind: type[enum.Enum], value: object, field: str, expected: str):  # type: ignore[no-untyped-def]
    if isinstance(value, kind):
        return value
    try:
        return kind(str(value).strip().lower())
    except ValueError:
        raise ValidationError(field, expected, value) from None


def format_value(spec: ParamSpec, value: object) -> str:
    """A parameter value as the trial's argument text: ints without a point, floats by repr, strings as is."""
    if spec.kind is ParamKind.INTEGER:
        return str(int(value))  # type: ignore[call-overload]
    if spec.kind is ParamKind.CATEGORICAL:
        return str(value)
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if spec.kind is ParamKind.DISCRETE and number.is_integer() else repr(number)


def trial_args(study: StudySpec, values: Mapping[str, object]) -> tuple[str, ...]:
    """The arguments a trial's script receives, as Vertex AI passes them: ``--NAME=VALUE`` in study order."""
    return tuple(f"--{spec.name}={format_value(spec, values[spec.name])}" for spec in study.params
                 if spec.name in values)


def metrics_file(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(METRICS_FILE_ENV) or DEFAULT_METRICS_FILE)


def write_metric(metrics: Mapping[str, float], *, step: int | None = None, path: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> Path:
    """Append one measurement as cloudml-hypertune does (JSON lines, the last 100 kept). Returns the file."""
    env = os.environ if environ is None else environ
    target = path or metrics_file(env)
    history: list[str] = []
    try:
        history = target.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        history = []
    body: dict[str, str | float] = {"timestamp": time.time(), "trial": env.get(TRIAL_ID_ENV, "0"),
                                    "global_step": str(int(step) if step else 0), "checkpoint_path": ""}
    for name, value in metrics.items():
        body[name] = str(float(value))
    history.append(json.dumps(body, sort_keys=True))
    target.parent.mkdir(parents=True, exist_ok=True)
    # A name of this process's own: replicas sharing one file (a local cluster) never replace each other's.
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text("\n".join(history[-_HISTORY:]) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


def read_metric(path: Path, metric: str) -> float | None:
    """The trial's final measurement of ``metric``: its value on the last line that has it, or None."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
            value = float(record[metric])
        except (ValueError, KeyError, TypeError):
            continue
        if math.isfinite(value):
            return value
    return None


def read_measurements(path: Path, metric: str) -> list[tuple[int, float]]:
    """Every intermediate measurement of ``metric`` in the file, oldest first, as ``(step, value)``: the step
    is the line's ``global_step``; a line whose step is not above the previous one's (a script that reports
    without ``step=``) counts as the next step, so steps always increase."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found: list[tuple[int, float]] = []
    for line in lines:
        try:
            record = json.loads(line)
            value = float(record[metric])
        except (ValueError, KeyError, TypeError):
            continue
        if not math.isfinite(value):
            continue
        try:
            step = int(record.get("global_step") or 0)
        except (TypeError, ValueError):
            step = 0
        if found and step <= found[-1][0]:
            step = found[-1][0] + 1
        found.append((step, value))
    return found


def best(study: StudySpec, results: Sequence[tuple[str, float | None]]) -> str | None:
    """The id of the best trial among ``(trial_id, metric)`` pairs (None metrics ignored)."""
    chosen: tuple[str, float] | None = None
    for trial_id, value in results:
        if value is None:
            continue
        if chosen is None or study.better(value, chosen[1]):
            chosen = (trial_id, value)
    return chosen[0] if chosen else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrialInfo:
    """One trial as a target reports it: its parameter values (typed per :class:`ParamSpec`), state, final
    metric, times (epoch seconds) and the id of the job that ran it, where the target exposes one."""

    trial_id: str
    params: Mapping[str, float | int | str]
    state: JobState
    metric: float | None = None
    started: float | None = None
    ended: float | None = None
    job_id: str | None = None
    message: str | None = None  # why a trial failed (or reported nothing), or that it was stopped early
    #: The step of the last measurement of a trial that early stopping ended (state SUCCEEDED, its metric that
    #: measurement, as Vertex AI keeps it); None for a trial that ran to its end.
    stopped_at: int | None = None

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (to now while running); None before it started."""
        if self.started is None:
            return None
        return (self.ended if self.ended is not None else time.time()) - self.started

    def to_dict(self) -> dict[str, Any]:
        return {"trial_id": self.trial_id, "params": dict(self.params), "state": self.state.value,
                "metric": self.metric, "started": self.started, "ended": self.ended, "job_id": self.job_id,
                "message": self.message, "stopped_at": self.stopped_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrialInfo:
        return cls(trial_id=str(data["trial_id"]), params=dict(data.get("params") or {}),
                   state=JobState(data["state"]), metric=data.get("metric"), started=data.get("started"),
                   ended=data.get("ended"), job_id=data.get("job_id"), message=data.get("message"),
                   stopped_at=data.get("stopped_at"))


@dataclasses.dataclass(frozen=True, kw_only=True)
class StudyInfo:
    """A study's state, one value: what ``tfcloud status STUDY`` shows and ``--json`` prints."""

    study_id: str
    target: str
    state: JobState
    study: StudySpec
    trials: tuple[TrialInfo, ...] = ()
    console_url: str | None = None
    #: The PNG and HTML plots its tuner wrote (a local study's, once it ended; None: the target writes none).
    plots: tuple[Path, Path] | None = dataclasses.field(default=None, compare=False)

    @property
    def best_trial(self) -> TrialInfo | None:
        chosen = best(self.study, [(t.trial_id, t.metric) for t in self.trials
                                   if t.state is JobState.SUCCEEDED])
        return next((t for t in self.trials if t.trial_id == chosen), None)

    def to_dict(self) -> dict[str, Any]:
        chosen = self.best_trial
        return {"study_id": self.study_id, "target": self.target, "state": self.state.value,
                "metric": self.study.metric, "goal": self.study.goal.value,
                "params": [str(p) for p in self.study.params], "max_trials": self.study.max_trials,
                "parallel_trials": self.study.parallel_trials, "algorithm": self.study.algorithm.value,
                "early_stopping": self.study.early_stopping,
                "console_url": self.console_url, "best_trial": chosen.trial_id if chosen else None,
                "trials": [t.to_dict() for t in self.trials]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudyInfo:
        """The inverse of :meth:`to_dict` (a study read back from its ``study.json``)."""
        study = make_study(data["params"], metric=data["metric"], goal=data["goal"], max_trials=data["max_trials"],
                           parallel_trials=data["parallel_trials"], algorithm=data.get("algorithm", "default"),
                           early_stopping=bool(data.get("early_stopping", False)))
        return cls(study_id=data["study_id"], target=data["target"], state=JobState(data["state"]), study=study,
                   trials=tuple(TrialInfo.from_dict(t) for t in data.get("trials") or ()),
                   console_url=data.get("console_url"))


class StudyHandle(Protocol):
    """A running or finished study on one target (local tuner, Vertex AI HyperparameterTuningJob)."""

    @property
    def study_id(self) -> str: ...

    def info(self) -> StudyInfo:
        """The study now: state, every trial so far."""
        ...

    def wait(self, timeout: float | None = None) -> StudyInfo:
        """Block until the study ends (or ``timeout`` seconds pass); its info then."""
        ...

    def cancel(self) -> None:
        """Stop the study: no new trials, running trials cancelled."""
        ...
