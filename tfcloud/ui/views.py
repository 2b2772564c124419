"""What the dashboard's pages show, gathered through the SDK (:mod:`tfcloud.sdk`) only: plain values for the
templates, no web framework here. Every call blocks; the app runs them in its thread pool.

- :class:`Sources`: which targets the dashboard lists (local, vertex, ray) and the Ray cluster's address; each
  target's jobs are cached for a moment so that several open pages refreshing cost one listing.
- :func:`job_page`: a job's state, replicas, failure, stage timeline (as bars), plan, artifacts.
- :func:`study_page`: a study's trials (best starred, stopped marked) and the command that reruns the best.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ConfigurationError, TfcloudError, ValidationError
from tfcloud.states import JobState
from tfcloud.targets import BUILTIN

if TYPE_CHECKING:
    from tfcloud import JobInfo
    from tfcloud.study import StudyInfo
    from tfcloud.timeline import Timeline

__all__ = [
    "TARGETS",
    "Sources",
    "artifacts",
    "job_page",
    "listed_targets",
    "parse_label",
    "replica_class",
    "study_page",
    "study_plot",
    "study_rows",
    "study_view",
    "timeline_bars",
]

#: Every built-in target the dashboard can list, in the order its filter shows them (the registry's order).
TARGETS = tuple(BUILTIN)


def listed_targets() -> tuple[str, ...]:
    """Every target the dashboard lists by default: the built-in ones, then those installed packages add (read
    from the registry when the dashboard starts)."""
    import tfcloud.targets as targets

    return tuple(targets.names())
#: Seconds a target's listing is reused; a target that is not configured is asked again after the longer time.
_FRESH_S = 1.0
_UNCONFIGURED_S = 30.0


def parse_label(text: str | None) -> dict[str, str]:
    """``KEY=VALUE`` (the label filter) as a mapping; empty text, none."""
    if not text or not text.strip():
        return {}
    key, sep, value = text.strip().partition("=")
    if not sep or not key:
        raise ValidationError("label", "KEY=VALUE", text)
    return {key.strip(): value.strip()}


@dataclass
class _Listing:
    at: float
    jobs: list[JobInfo] = field(default_factory=list)
    note: str | None = None  # why the target could not be listed
    unconfigured: bool = False


class Sources:
    """The targets the dashboard lists: ``targets`` (default: :func:`listed_targets`; one that is not
    configured, such as Ray without a cluster address, is shown as a note), ``ray_address`` for Ray."""

    def __init__(self, targets: Sequence[str] | None = None, *, ray_address: str | None = None,
                 limit: int = 100) -> None:
        self.targets = tuple(targets or listed_targets())
        self.ray_address = ray_address
        self.limit = limit
        self._cache: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], _Listing] = {}
        self._lock = threading.Lock()

    def _list(self, target: str, state: str | None, labels: Mapping[str, str]) -> _Listing:
        from tfcloud import sdk

        key = (target, state, tuple(sorted(labels.items())))
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and now - cached.at < (_UNCONFIGURED_S if cached.unconfigured else _FRESH_S):
            return cached
        try:
            found = _Listing(at=now, jobs=sdk.list_jobs(target=target, state=state, labels=labels, limit=self.limit,
                                                        ray_address=self._address_for(target)))
        except ConfigurationError as exc:  # not configured here (no project, no cluster, no extra)
            found = _Listing(at=now, note=exc.message, unconfigured=True)
        except TfcloudError as exc:
            found = _Listing(at=now, note=exc.message)
        with self._lock:
            self._cache[key] = found
        return found

    def jobs(self, *, target: str | None = None, state: str | None = None,
             labels: Mapping[str, str] | None = None) -> tuple[list[JobInfo], dict[str, str]]:
        """Every job of the chosen targets (all by default), newest first, and a note per target that could not
        be listed (why)."""
        if target and target not in self.targets:
            raise ValidationError("target", "one of " + ", ".join(self.targets), target)
        if state:
            try:
                JobState(state)
            except ValueError:
                raise ValidationError("state", "one of " + ", ".join(s.value for s in JobState), state) from None
        jobs: list[JobInfo] = []
        notes: dict[str, str] = {}
        for name in [target] if target else self.targets:
            listing = self._list(name, state or None, labels or {})
            jobs += listing.jobs
            if listing.note:
                notes[name] = listing.note
        jobs.sort(key=lambda info: info.created or 0.0, reverse=True)
        return jobs, notes

    def studies(self) -> tuple[list[StudyInfo], dict[str, str]]:
        """The local studies and, where Vertex AI is listed and configured, its tuning jobs: newest first."""
        from tfcloud import sdk

        found: list[StudyInfo] = []
        notes: dict[str, str] = {}
        import tfcloud.targets as targets

        for name in [c.name for c in targets.builtin_targets() if c.tuner]:  # the targets that run studies
            if name not in self.targets or self._list(name, None, {}).unconfigured:
                continue
            try:
                found += sdk.list_studies(target=name, limit=self.limit)
            except TfcloudError as exc:
                notes[name] = exc.message
        return found, notes

    def ray_for(self, job_id: str) -> str | None:
        """The Ray cluster's address for a job of the target that takes one (``ray-...``)."""
        import tfcloud.targets as targets

        return self._address_for(targets.for_job_id(job_id).name)

    def _address_for(self, target: str) -> str | None:
        """``ray_address`` for the target that takes it (an option of its own), None for the others."""
        import tfcloud.targets as targets

        return self.ray_address if targets.get(target).option("ray_address") is not None else None


# --- one job ---------------------------------------------------------------------------------------------------
_REPLICA_CLASSES = {"bold cyan": "c-cyan b", "green": "c-green", "magenta": "c-magenta", "blue": "c-blue",
                    "yellow": "c-yellow", "bright_green": "c-green b", "bright_magenta": "c-magenta b",
                    "bright_blue": "c-blue b", "bright_yellow": "c-yellow b", "red": "c-red",
                    "bright_red": "c-red b", "bright_cyan": "c-cyan", "white": "c-white",
                    "bright_white": "c-white b"}


def replica_class(replica: str) -> str:
    """The CSS classes of a replica's prefix: the terminal's colour for it (:func:`tfcloud.logview.replica_color`)."""
    from tfcloud.logview import replica_color

    return _REPLICA_CLASSES.get(replica_color(replica), "c-white")


def timeline_bars(stages: Timeline, *, now: float | None = None) -> list[dict[str, Any]]:
    """The stage timeline as bars on one axis: each stage's name, left and width (percent of the whole),
    when it started (``+1.2s``) and how long it took (``3.4s``; ``+`` while it is still on)."""
    from tfcloud.timeline import format_duration

    now = time.time() if now is None else now
    if not stages.stages:
        return []
    t0 = stages.stages[0].start
    total = max(stages.total(now), 1e-9)
    bars = []
    for stage in stages.stages:
        end = stage.end if stage.end is not None else now
        left = min(100.0, max(0.0, (stage.start - t0) / total * 100))
        width = min(100.0 - left, max(0.5, (end - stage.start) / total * 100))
        bars.append({"name": stage.name, "left": round(left, 2), "width": round(width, 2),
                     "at": "+" + format_duration(stage.start - t0),
                     "took": format_duration(stage.duration(now)) + ("" if stage.end is not None else "+"),
                     "open": stage.end is None})
    return bars


def _pools_from_replicas(info: JobInfo) -> list[dict[str, Any]]:
    """The pools as the job's replicas show them (role and count), when no plan was kept for the job."""
    counts: dict[str, int] = {}
    for replica in info.replicas:
        role = replica.name.rpartition("-")[0] or replica.name
        counts[role] = counts.get(role, 0) + 1
    return [{"role": role, "replicas": n, "machine_type": "-", "accelerator": "-"} for role, n in counts.items()]


def job_page(job_id: str, *, ray_address: str | None = None, details: bool = True) -> dict[str, Any]:
    """Everything a job's page shows. ``details``: also the plan (the status fragment refreshes without it)."""
    from tfcloud import sdk

    with sdk.attached(job_id, ray_address=ray_address) as handle:
        info = handle.info()
        error = sdk.failure(handle) if info.state.is_final and info.state is not JobState.SUCCEEDED else None
        stages = sdk.timeline(handle, info=info)
    page: dict[str, Any] = {
        "info": info, "job_id": info.job_id, "state": info.state.value, "final": info.state.is_final,
        "replicas": [{"name": r.name, "state": r.state.value, "exit_code": r.exit_code, "css": replica_class(r.name)}
                     for r in info.replicas],
        "failure": None if error is None else {"message": error.message, "tail": error.log_tail or ""},
        "bars": timeline_bars(stages), "summary": stages.summary(),
        "width": max((len(r.name) for r in info.replicas), default=0),
    }
    if details:
        plan = sdk.submitted_plan(info.job_id)
        page["plan"] = plan
        page["pools"] = plan["pools"] if plan else _pools_from_replicas(info)
        page["tensorboard"] = f"tfcloud tensorboard {info.job_id}"
    return page


def artifacts(job_id: str, *, ray_address: str | None = None) -> dict[str, Any]:
    """The files the job wrote under its output directory (:mod:`tfcloud.outputs`), or why there are none."""
    from tfcloud import sdk
    from tfcloud.outputs import job_output_dir, list_artifacts

    with sdk.attached(job_id, ray_address=ray_address) as handle:
        info = handle.info()
    try:
        base = job_output_dir(info)
        found = list_artifacts(base)
    except TfcloudError as exc:
        return {"base": None, "files": [], "note": exc.message}
    return {"base": base, "files": [{"path": a.path, "size": a.size} for a in found],
            "note": None if found else "Nothing written yet."}


# --- one study -------------------------------------------------------------------------------------------------
def study_page(study_id: str) -> dict[str, Any]:
    """Everything a study's page shows: its trials (the best starred, those early stopping ended marked), the
    best's rerun command."""
    from tfcloud import sdk

    with sdk.attach_study(study_id) as study:
        info = study.info()
        best = info.best_trial
        rerun = study.rerun_command(best) if best is not None else None
    return study_view(info, rerun=rerun)


def study_view(info: StudyInfo, *, rerun: str | None) -> dict[str, Any]:
    """:func:`study_page` of a study's info and the best trial's rerun command."""
    from tfcloud.tuneview import state_text

    best = info.best_trial
    params = [p.name for p in info.study.params]
    trials = []
    for trial in info.trials:
        trials.append({
            "id": trial.trial_id, "best": best is not None and trial.trial_id == best.trial_id,
            "params": [_param_text(info, name, trial.params.get(name)) for name in params],
            "metric": "-" if trial.metric is None else f"{trial.metric:.4f}", "state": trial.state.value,
            "state_text": state_text(trial), "stopped": trial.stopped_at is not None,
            "duration": _duration(trial.duration), "job_id": trial.job_id, "message": trial.message or "",
        })
    done = sum(1 for t in info.trials if t.state.is_final)
    return {"info": info, "study_id": info.study_id, "state": info.state.value, "final": info.state.is_final,
            "params": params, "metric": info.study.metric, "goal": info.study.goal.value, "trials": trials,
            "done": done, "max_trials": info.study.max_trials, "rerun": rerun,
            "best": None if best is None else {"id": best.trial_id, "metric": f"{best.metric:.4f}"
                                                if best.metric is not None else "-"}}


def study_plot(study_id: str) -> bytes:
    """The study's plot as PNG bytes (:func:`tfcloud.tuneview.plot_png`; needs tfcloud[tune])."""
    from tfcloud import sdk
    from tfcloud.tuneview import plot_png

    with sdk.attach_study(study_id) as study:
        return plot_png(study.info(), dpi=90)


def _param_text(info: StudyInfo, name: str, value: object) -> str:
    from tfcloud.study import ParamKind, format_value

    if value is None:
        return "-"
    spec = info.study.param(name)
    if spec.kind is ParamKind.DOUBLE and isinstance(value, float):
        return f"{value:.4g}"
    return format_value(spec, value)


def _duration(seconds: float | None) -> str:
    from tfcloud.timeline import format_duration

    return "-" if seconds is None else format_duration(max(0.0, seconds))


def study_rows(studies: Sequence[StudyInfo]) -> list[dict[str, Any]]:
    """The studies list's rows: id, target, state, trials done, metric and goal, the best value so far."""
    rows = []
    for info in studies:
        best = info.best_trial
        rows.append({"id": info.study_id, "target": info.target, "state": info.state.value,
                     "trials": f"{sum(1 for t in info.trials if t.state.is_final)}/{info.study.max_trials}",
                     "metric": f"{info.study.goal.value} {info.study.metric}",
                     "best": "-" if best is None or best.metric is None else f"{best.metric:.4f}"})
    return rows
