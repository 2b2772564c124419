"""How long each stage of a submission took: one frozen :class:`Timeline` of ``(stage, start, end)``.

The stages, in order: ``context`` (the build context and the image's tag), ``build`` (the image), ``push`` (to
its registry), ``submit`` (the backend's create call), ``queued`` (the job waits for resources: Vertex AI's
QUEUED and PENDING, Ray's placement, the local supervisor's start) and ``run`` (the replicas run). The first
four are measured by the pipeline while it runs them (a :class:`Recorder`) and kept in a small private record
in the state dir (:func:`record_path`, :func:`save`, :func:`load`); the last two come from the job's own
times (:attr:`~tfcloud.backends.base.JobInfo.created`, ``started``, ``ended``), so ``tfcloud status JOB
--timeline`` draws them later from any process (:func:`job_timeline`).

Times are epoch seconds. A stage that has not ended yet has ``end=None``; its duration runs to ``now``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcloud.records.files import write_private_json
from tfcloud.records.statedir import timeline_record

__all__ = ["STAGES", "Recorder", "Stage", "Timeline", "format_duration", "job_timeline", "load", "record_path",
           "render_timeline", "save"]

#: Every stage a timeline may hold, in order.
STAGES = ("context", "build", "push", "submit", "queued", "run")


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage: its name (one of :data:`STAGES`), start and end (epoch seconds; ``end`` None: still on)."""

    name: str
    start: float
    end: float | None = None

    def duration(self, now: float | None = None) -> float:
        """Seconds from start to end (to ``now`` while the stage is still on); never negative."""
        end = self.end if self.end is not None else (time.time() if now is None else now)
        return max(0.0, end - self.start)

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        return {"stage": self.name, "start": _iso(self.start), "end": None if self.end is None else _iso(self.end),
                "duration_s": round(self.duration(now), 3)}


@dataclass(frozen=True, kw_only=True)
class Timeline:
    """The stages of one job, in order (each stage starts no earlier than the one before it)."""

    stages: tuple[Stage, ...] = ()

    @property
    def start(self) -> float | None:
        return self.stages[0].start if self.stages else None

    def total(self, now: float | None = None) -> float:
        """Seconds from the first stage's start to the last one's end (to ``now`` while it is on)."""
        if not self.stages:
            return 0.0
        last = self.stages[-1]
        end = last.end if last.end is not None else (time.time() if now is None else now)
        return max(0.0, end - self.stages[0].start)

    def to_list(self, now: float | None = None) -> list[dict[str, Any]]:
        """JSON-ready: one ``{"stage", "start", "end", "duration_s"}`` per stage (times as ISO 8601, UTC)."""
        return [stage.to_dict(now) for stage in self.stages]

    def summary(self, now: float | None = None) -> str:
        """One line: ``context 0.2s · build 3.1s · push 5.0s · submit 0.4s · queued 1m20s · run 2m03s
        (total 3m29s)``."""
        if not self.stages:
            return "no stages recorded"
        parts = [f"{s.name} {format_duration(s.duration(now))}{'' if s.end is not None else '+'}"
                 for s in self.stages]
        return " · ".join(parts) + f" (total {format_duration(self.total(now))})"


class Recorder:
    """Marks stages one after the other while a submission runs: :meth:`begin` ends the stage that is on and
    starts the next; :meth:`end` ends the last one. ``clock``: epoch seconds (``time.time``)."""

    def __init__(self, clock: Any = time.time) -> None:
        self._clock = clock
        self._done: list[Stage] = []
        self._current: tuple[str, float] | None = None

    def begin(self, name: str) -> None:
        if name not in STAGES:
            raise ValueError(f"unknown stage {name!r}; expected one of {', '.join(STAGES)}")
        now = self._clock()
        self.end(now)
        self._current = (name, now)

    def end(self, now: float | None = None) -> None:
        if self._current is not None:
            name, start = self._current
            self._done.append(Stage(name=name, start=start, end=self._clock() if now is None else now))
            self._current = None

    @property
    def stages(self) -> tuple[Stage, ...]:
        """The stages that have ended, in order."""
        return tuple(self._done)


def job_timeline(recorded: Iterable[Stage], *, created: float | None, started: float | None,
                 ended: float | None, running: bool) -> Timeline:
    """The whole timeline of a job: the stages the pipeline recorded, then ``queued`` (from ``created`` to
    ``started``) and ``run`` (from ``started`` to ``ended``) from the job's own times. ``running``: the job is
    not final (an open stage runs to now). A stage never starts before the one before it."""
    stages = [s for s in recorded if s.name in STAGES[:4]]
    floor = stages[-1].start if stages else None

    def clamp(value: float) -> float:
        return value if floor is None else max(value, floor)

    if created is not None:
        start = clamp(created)
        end = started if started is not None else (ended if ended is not None else None)
        stages.append(Stage(name="queued", start=start, end=None if end is None else max(end, start)))
        floor = start
    if started is not None:
        start = clamp(started)
        stages.append(Stage(name="run", start=start, end=None if ended is None else max(ended, start)))
    if not running:  # a final job has no open stage: end what is open at its end (or at its last known time)
        last = ended if ended is not None else max((s.end or s.start) for s in stages) if stages else None
        stages = [s if s.end is not None or last is None else Stage(name=s.name, start=s.start,
                                                                     end=max(last, s.start))
                  for s in stages]
    return Timeline(stages=tuple(stages))


_COLORS = {"context": "bright_black", "build": "blue", "push": "magenta", "submit": "cyan", "queued": "yellow",
           "run": "green"}


def render_timeline(timeline: Timeline, *, width: int = 48, now: float | None = None) -> Any:
    """A text Gantt chart of ``timeline`` (a rich renderable): one row per stage with its bar on a common time
    axis, when it started (from the first stage) and how long it took; a stage still on ends in ``▶``."""
    from rich.table import Table
    from rich.text import Text

    now = time.time() if now is None else now
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("stage")
    table.add_column("", no_wrap=True)
    table.add_column("at", justify="right")
    table.add_column("took", justify="right")
    if not timeline.stages:
        return Text("No stages recorded.")
    t0 = timeline.stages[0].start
    total = max(timeline.total(now), 1e-9)
    for stage in timeline.stages:
        end = stage.end if stage.end is not None else now
        left = round((stage.start - t0) / total * width)
        length = max(1, round((end - t0) / total * width) - left)
        left = min(left, width - 1)
        length = min(length, width - left)
        bar = Text(" " * left)
        bar.append("█" * (length - (stage.end is None)), style=_COLORS.get(stage.name, "white"))
        if stage.end is None:
            bar.append("▶", style=_COLORS.get(stage.name, "white"))
        bar.append(" " * (width - left - length))
        table.add_row(stage.name, bar, "+" + format_duration(stage.start - t0),
                      format_duration(stage.duration(now)) + ("" if stage.end is not None else "+"))
    table.add_row(Text("total", style="bold"), "", "", Text(format_duration(timeline.total(now)), style="bold"))
    return table


def format_duration(seconds: float) -> str:
    """``0.4s``, ``12.3s``, ``1m20s``, ``2h05m``."""
    if seconds < 59.95:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        minutes, secs = divmod(round(seconds), 60)
        return f"{minutes}m{secs:02d}s"
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours}h{rest // 60:02d}m"


def record_path(state_dir: Path, job_id: str) -> Path:
    """Where the recorded stages of ``job_id`` are kept (:func:`tfcloud.records.statedir.timeline_record`)."""
    return timeline_record(state_dir, job_id)


def save(path: Path, stages: Iterable[Stage]) -> None:
    """Write ``stages`` to ``path`` (its directory 0700, the file 0600; replaced atomically)."""
    write_private_json(path, {"stages": [{"stage": s.name, "start": s.start, "end": s.end} for s in stages]})


def load(path: Path) -> tuple[Stage, ...]:
    """The stages recorded at ``path``; none when it is missing or unreadable (the timeline is a nicety)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return tuple(_stage(item) for item in data["stages"])
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def _stage(item: Mapping[str, Any]) -> Stage:
    name, start, end = item["stage"], item["start"], item.get("end")
    if name not in STAGES or not isinstance(start, int | float) or not (end is None or isinstance(end, int | float)):
        raise ValueError(f"not a stage: {item!r}")
    return Stage(name=str(name), start=float(start), end=None if end is None else float(end))


def _iso(value: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(value, dt.timezone.utc).isoformat().replace("+00:00", "Z")
