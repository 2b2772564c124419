"""A study to explore, as the study page's scripts take it: every trial's parameters and metric as numbers on
one axis per parameter (for the parallel coordinates), and how much of the metric's spread each parameter
accounts for (parameter importance).

Importance here is the correlation ratio (η², Pearson 1905): the trials are grouped by the parameter's value
(a categorical one by its category; a numeric one into up to :data:`BINS` groups of equal size by rank, on its
log scale where the parameter is searched on one), and η² is the share of the metric's variance between the
groups' means. It is 0 when the groups' means are all the same and 1 when the parameter alone decides the
metric; shares are normalised to sum to 1 across parameters, as Optuna's importances are. With fewer than
:data:`MIN_TRIALS` finished trials there is too little to say: none is given. It is a quick, model-free
measure, not Optuna's fANOVA; the page says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud.job.study import ParamSpec, StudyInfo

__all__ = ["BINS", "MIN_TRIALS", "importance", "study_data"]

#: Groups a numeric parameter's values are put in, by rank.
BINS = 4
#: The fewest finished trials (with a metric) importance is computed from.
MIN_TRIALS = 4


def _axis(spec: ParamSpec) -> dict[str, Any]:
    from tfcloud.job.study import ParamKind, Scale

    if spec.kind is ParamKind.CATEGORICAL:
        return {"name": spec.name, "kind": "categorical", "values": [str(v) for v in spec.values]}
    if spec.kind is ParamKind.DISCRETE:
        values = [float(v) for v in spec.values]
        return {"name": spec.name, "kind": "discrete", "low": min(values), "high": max(values), "log": False}
    return {"name": spec.name, "kind": spec.kind.value, "low": spec.low, "high": spec.high,
            "log": spec.scale is Scale.LOG}


def _position(spec: ParamSpec, value: object) -> float | None:
    """A value as a number on its axis: a category's index, a number (its log where the scale is log)."""
    from tfcloud.job.study import ParamKind, Scale

    if value is None:
        return None
    if spec.kind is ParamKind.CATEGORICAL:
        names = [str(v) for v in spec.values]
        return float(names.index(str(value))) if str(value) in names else None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if spec.scale is Scale.LOG and number > 0:
        return math.log10(number)
    return number


def _eta_squared(groups: Sequence[Sequence[float]]) -> float:
    values = [v for group in groups for v in group]
    mean = sum(values) / len(values)
    total = sum((v - mean) ** 2 for v in values)
    if total <= 0:
        return 0.0
    between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups if g)
    return between / total


def importance(info: StudyInfo) -> list[dict[str, Any]]:
    """Each parameter's share of the metric's spread (see the module), largest first; [] with too few trials."""
    from tfcloud.job.study import ParamKind

    done = [t for t in info.trials if t.metric is not None and math.isfinite(t.metric)]
    if len(done) < MIN_TRIALS:
        return []
    scores = {}
    for spec in info.study.params:
        pairs = [(p, t.metric) for t in done if (p := _position(spec, t.params.get(spec.name))) is not None]
        if len(pairs) < MIN_TRIALS:
            continue
        groups: dict[float, list[float]] = {}
        if spec.kind is ParamKind.CATEGORICAL:
            for position, metric in pairs:
                groups.setdefault(position, []).append(float(metric))  # type: ignore[arg-type]
        else:
            pairs.sort(key=lambda pair: pair[0])
            size = math.ceil(len(pairs) / BINS)
            for i, (_, metric) in enumerate(pairs):
                groups.setdefault(float(i // size), []).append(float(metric))  # type: ignore[arg-type]
        scores[spec.name] = _eta_squared(list(groups.values()))
    total = sum(scores.values())
    return sorted(({"name": name, "share": (score / total) if total > 0 else 0.0, "eta2": score}
                   for name, score in scores.items()), key=lambda row: -row["share"])


def study_data(info: StudyInfo) -> dict[str, Any]:
    """The study as JSON: its axes (one per parameter), metric, goal, state, each trial's values and
    positions, and the parameters' importance."""
    best = info.best_trial
    return {
        "study_id": info.study_id, "state": info.state.value, "final": info.state.is_final,
        "metric": info.study.metric, "goal": info.study.goal.value,
        "axes": [_axis(spec) for spec in info.study.params],
        "trials": [{"id": t.trial_id, "state": t.state.value, "metric": t.metric, "job_id": t.job_id,
                    "best": best is not None and t.trial_id == best.trial_id,
                    "values": {name: value for name, value in t.params.items()},
                    "positions": {spec.name: _position(spec, t.params.get(spec.name)) for spec in info.study.params}}
                   for t in info.trials],
        "importance": importance(info),
    }
