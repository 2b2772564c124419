"""The backend interface: two verbs on the backend, four on the job handle (the shape of httpx's transport).

A backend takes a prepared job (the spec, plus what the earlier stages produced: the launcher and the
image) and returns a :class:`JobHandle`. ``attach`` finds an existing job again by id, for
``tfcloud status/logs/cancel``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from tfcloud.errors import JobFailedError
from tfcloud.spec import JobSpec
from tfcloud.states import JobState

__all__ = ["Backend", "ImageRef", "JobHandle", "LogLine", "PreparedJob"]


@dataclass(frozen=True, kw_only=True)
class ImageRef:
    """A built (or reused) container image."""

    uri: str  # repository:tag, e.g. localhost:5000/tfcloud/train:3f2a9c...
    digest: str | None = None
    built: bool = True  # False when an existing image was reused


@dataclass(frozen=True, kw_only=True)
class PreparedJob:
    """What the stages before the backend produced for one job.

    ``workdir`` is the directory replicas start in (the entry point's directory for local runs);
    ``launcher`` is the rendered launcher file; ``script`` is what the launcher runs (the user's script, or
    the script converted from a notebook); ``requirements`` are extra requirements found along the way
    (e.g. a notebook's ``%pip install`` lines). ``image`` is set for container backends.
    """

    spec: JobSpec
    workdir: Path
    launcher: Path
    script: Path
    requirements: tuple[str, ...] = ()
    image: ImageRef | None = None


@dataclass(frozen=True, kw_only=True)
class LogLine:
    """One line a replica printed. ``replica`` is like ``chief-0`` or ``worker-1``."""

    replica: str
    text: str
    stream: str = "stdout"  # or "stderr"
    timestamp: float | None = None


@runtime_checkable
class JobHandle(Protocol):
    """A submitted job."""

    @property
    def job_id(self) -> str: ...

    def status(self) -> JobState: ...

    def logs(self, *, follow: bool = False, replica: str | None = None) -> Iterator[LogLine]: ...

    def wait(self, timeout: float | None = None) -> JobState: ...

    def cancel(self) -> None: ...

    @property
    def exit_code(self) -> int | None:
        """0 when the job succeeded, non-zero when it failed, None while it runs."""
        ...

    def failure(self, n: int = 20) -> JobFailedError | None:
        """Why the job failed (the backend's message and the failing replica's last ``n`` lines), or None."""
        ...


class Backend(Protocol):
    """Where jobs run."""

    def submit(self, job: PreparedJob) -> JobHandle: ...

    def attach(self, job_id: str) -> JobHandle: ...
