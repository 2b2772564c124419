"""The backend interface, closed: four verbs on the backend, four on the job handle (httpx's transport shape).

A backend takes a :class:`~tfcloud.job.artifacts.PreparedJob` (the spec, plus what the earlier stages produced:
the launcher and the image) and returns a :class:`JobHandle`; ``attach`` finds an existing job again by id
(for ``tfcloud status/logs/cancel``), ``list`` describes the backend's jobs, ``close`` releases its clients.

A handle is one value away from everything a caller needs: :meth:`JobHandle.info` returns a :class:`JobInfo`
(state, replicas, exit code, failing replica, the backend's message, console link). What a job's outcome says
to people (why it failed, in the one format every backend shares) is :mod:`tfcloud.view.outcome`'s.
"""

from __future__ import annotations

import builtins
import collections
import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tfcloud.job.states import JobState

if TYPE_CHECKING:  # `tfcloud status` reads a job without its spec's modules (machines, data sets)
    from tfcloud.job.artifacts import PreparedJob

__all__ = ["Backend", "BatchedLogs", "BilledPool", "Billing", "JobHandle", "JobInfo",
           "LinesFile", "LogBatch", "LogLine", "ReplicaInfo",
           "select_lines"]


@dataclass(frozen=True, kw_only=True)
class LogLine:
    """One line a replica printed. ``replica`` is like ``chief-0`` or ``worker-1``; ``timestamp``: when it was
    printed (epoch seconds; None when the backend does not know)."""

    replica: str
    text: str
    stream: str = "stdout"  # or "stderr"
    timestamp: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``time`` (ISO 8601, UTC, or None), ``replica``, ``text``, ``stream``."""
        return {"time": _iso(self.timestamp), "replica": self.replica, "text": self.text, "stream": self.stream}


@dataclass(frozen=True, kw_only=True)
class LogBatch:
    """Lines that one replica printed on one stream and that were read together (a local job's supervisor reads
    a replica's pipe up to 64 KiB at a time): they share the replica, the stream and the time. A terminal takes
    them a batch at a time (:meth:`tfcloud.view.logview.LogPrinter.print_batch`): what can be done once per batch is
    not done once per line."""

    replica: str
    texts: Sequence[str]
    stream: str = "stdout"
    timestamp: float | None = None

    def lines(self) -> Iterator[LogLine]:
        """The batch, a :class:`LogLine` per line."""
        for text in self.texts:
            yield LogLine(replica=self.replica, text=text, stream=self.stream, timestamp=self.timestamp)


@dataclass(frozen=True, kw_only=True)
class ReplicaInfo:
    """One replica of a job: ``chief-0``, ``worker-1``..., its state and (once it ended) its exit code; ``pid``:
    its process on this machine, for a target whose replicas run here (local) once it started; None elsewhere.
    ``machine``: what it runs on, as the target names it (Vertex AI: its pool's machine type and accelerators).
    ``web_access_uri``: an interactive shell in it, while it runs (Vertex AI with ``--web-access``)."""

    name: str
    state: JobState
    exit_code: int | None = None
    pid: int | None = field(default=None, compare=False)
    machine: str | None = field(default=None, compare=False)
    #: An interactive shell in the replica while it runs (Vertex AI's ``web_access_uris``, with ``--web-access``).
    web_access_uri: str | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class BilledPool:
    """One pool as the cloud bills it: ``replicas`` machines of ``machine_type``, each with ``accelerator_count``
    x ``accelerator`` (the cloud's name, e.g. ``NVIDIA_TESLA_T4``; None without)."""

    role: str
    replicas: int
    machine_type: str
    accelerator: str | None = None
    accelerator_count: int = 0


@dataclass(frozen=True, kw_only=True)
class Billing:
    """What a cloud bills a job by, read from the job itself: its ``region``, its ``capacity`` (one of
    ``tfcloud.google.catalog.price_table.CAPACITIES``: ``on-demand``, ``spot``, ``flex-start``, ``reservation``,
    ``persistent-resource``), its pools, and the persistent resource or reservation it runs on. None on a
    :class:`JobInfo` whose target runs on machines no cloud bills per job (local, Ray)."""

    region: str
    capacity: str
    pools: tuple[BilledPool, ...]
    resource: str | None = None
    reservation: str | None = None


@dataclass(frozen=True, kw_only=True)
class JobInfo:
    """Where a job stands, as one value (what ``tfcloud status --json`` prints)."""

    job_id: str
    target: str  # the registry's name: "local", "vertex", ...
    state: JobState
    display_name: str | None = None
    replicas: tuple[ReplicaInfo, ...] = ()
    exit_code: int | None = None  # 0 ok, non-zero failed, None while running or unknown
    failed_replica: str | None = None  # e.g. "worker-1"
    message: str | None = None  # the backend's own error text
    console_url: str | None = None
    created: float | None = None  # epoch seconds: the job was accepted
    started: float | None = None  # epoch seconds: its replicas started (after queueing and provisioning)
    ended: float | None = None  # epoch seconds: it reached a final state
    labels: Mapping[str, str] = field(default_factory=dict)
    output_dir: str | None = None  # the base of AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR
    #: Every name a line of its logs can carry besides its replicas so far (Vertex AI: each replica its pools
    #: can have, and the ``job`` and ``service`` pseudo-replicas); the log prefix column is aligned to them.
    log_sources: tuple[str, ...] = field(default=(), compare=False)
    #: What a cloud bills the job by (Vertex AI fills it from the CustomJob); None where no cloud bills it.
    billing: Billing | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the state as its value, ``created`` as ISO 8601 (UTC)."""
        return {
            "job_id": self.job_id,
            "target": self.target,
            "state": self.state.value,
            "display_name": self.display_name,
            "exit_code": self.exit_code,
            "failed_replica": self.failed_replica,
            "message": self.message,
            "console_url": self.console_url,
            "created": _iso(self.created),
            "started": _iso(self.started),
            "ended": _iso(self.ended),
            "labels": dict(self.labels),
            "output_dir": self.output_dir,
            "replicas": [{"name": r.name, "state": r.state.value, "exit_code": r.exit_code, "machine": r.machine,
                          "web_access_uri": r.web_access_uri} for r in self.replicas],
        }


@runtime_checkable
class JobHandle(Protocol):
    """A submitted job."""

    @property
    def job_id(self) -> str: ...

    def info(self) -> JobInfo:
        """Where the job stands now (one look-up)."""
        ...

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        """The job's lines so far, oldest first; with ``follow``, then new ones until the job has ended and its
        last lines are in. ``replica``: that replica's lines only. ``since`` (epoch seconds): only lines
        printed then or later. ``tail``: only the last ``tail`` lines of those (in total, not per replica),
        read without reading the whole log where the backend can."""
        ...

    def wait(self, timeout: float | None = None) -> JobInfo:
        """Block until the job is final (or ``timeout`` seconds passed); return its info then."""
        ...

    def cancel(self) -> None:
        """Ask the job to stop; returns at once (``wait`` follows it to the end)."""
        ...


@runtime_checkable
class BatchedLogs(Protocol):
    """A job handle that reads its lines in bulk (a local job: ``lines.jsonl``, 128 KiB at a time) and can hand them
    over as they were read: ``tfcloud submit`` and ``tfcloud logs -f`` follow such a job a batch at a time
    (:func:`tfcloud.view.following.follow`), and a job that prints 200k lines reaches the terminal at the pace of a
    pipe. Optional: a handle without it is followed line by line (:meth:`JobHandle.logs`)."""

    def log_batches(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
                    since: float | None = None) -> Iterator[LogBatch]:
        """The lines :meth:`JobHandle.logs` yields with the same arguments, in the same order, in batches."""
        ...


@runtime_checkable
class LinesFile(Protocol):
    """A job handle whose lines are one file on this machine, in the local supervisor's form (``lines.jsonl``: one
    JSON object a line, ``{"t", "r", "s", "x"}``, in the order they came): the dashboard reads it by byte offset
    (:mod:`tfcloud.ui.logstream`), so a page opens on a huge log's last lines and resumes where it left off.
    Optional: another handle's lines come through :meth:`JobHandle.logs`."""

    @property
    def lines_file(self) -> Path: ...


@runtime_checkable
class Stacks(Protocol):
    """A job handle that can show where its running replicas are (``tfcloud stacks``): a local job's replicas,
    processes or ``--container`` containers, dump every thread's Python stack on a signal
    (:mod:`tfcloud.replicas.stacks`). Optional: another handle has none (on Vertex AI, ``--web-access`` opens a
    shell in the replica instead)."""

    def stacks(self, *, replica: str | None = None) -> dict[str, str]:
        """By running replica (only ``replica``, when given): every thread's stack as its launcher wrote it, or a
        line that says why that replica showed none. Empty when no replica runs."""
        ...


@runtime_checkable
class Backend(Protocol):
    """Where jobs run. The registry (:mod:`tfcloud.backends`) maps a target name to the class."""

    def submit(self, job: PreparedJob) -> JobHandle: ...

    def attach(self, job_id: str) -> JobHandle:
        """The handle of an existing job; :class:`~tfcloud.errors.JobNotFoundError` when there is none."""
        ...

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> builtins.list[JobInfo]:
        """The backend's jobs, newest first (only those in ``state`` when given; at most ``limit``)."""
        ...

    def close(self) -> None:
        """Release clients and channels (a handle reopens what it needs)."""
        ...


def select_lines(lines: Iterable[LogLine], *, tail: int | None = None, since: float | None = None) -> Iterator[LogLine]:
    """``lines`` printed at ``since`` or later (a line without a time is kept), and of those the last ``tail``:
    for backends that cannot ask their log store for exactly that."""
    kept: Iterable[LogLine] = lines
    if since is not None:
        kept = (line for line in kept if line.timestamp is None or line.timestamp >= since)
    if tail is not None:
        kept = collections.deque(kept, maxlen=max(tail, 0))
    yield from kept


def _iso(value: float | None) -> str | None:
    if value is None:
        return None
    return dt.datetime.fromtimestamp(value, dt.timezone.utc).isoformat().replace("+00:00", "Z")
