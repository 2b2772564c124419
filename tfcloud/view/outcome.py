"""What a job's outcome says, read from its handle: why it did not succeed (:func:`failure`: the backend's
message and the failing replica's last lines, in the one format every backend shares), which replicas failed
beside a chief that ended well (:func:`failed_beside`), what each replica printed last (:func:`last_said`), and a
replica's last lines as an error message shows them (:func:`tail`, :func:`format_tail`). Known start-up noise
(:mod:`tfcloud.view.noise`) is left out, as on the terminal."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tfcloud.errors import JobFailedError, OutcomeUnknownError
from tfcloud.job.states import JobState

if TYPE_CHECKING:
    from tfcloud.backends.base import JobHandle, JobInfo, LogLine

__all__ = ["failed_beside", "failure", "format_tail", "last_said", "tail"]


def failure(handle: JobHandle, n: int = 20, *, show_frames: bool = False) -> JobFailedError | None:
    """Why a job did not succeed, in the one format every backend shares, or None (succeeded or still running).

    ``Job ID STATE: the backend's message``, then the failing replica's last ``n`` lines (known start-up noise,
    and tfcloud's launcher and ``runpy`` frames in a traceback unless ``show_frames``, left out, as on the
    terminal); the error's exit code is the job's own (1 when unknown)."""
    info = handle.info()
    if info.state is JobState.SUCCEEDED or not info.state.is_final:
        return None
    message = f"Job {info.job_id} {info.state.value}: {info.message or 'no reason recorded'}"
    log_tail = ""
    if info.failed_replica:
        try:
            # The noise the terminal hid is not "why": read further back, keep the replica's own last lines.
            lines = list(handle.logs(replica=info.failed_replica, tail=n * 10))
        except OutcomeUnknownError as exc:  # the logs cannot be read now; the outcome is known all the same
            log_tail = f"(The last lines of {info.failed_replica} could not be read: {exc.message})"
        else:
            from tfcloud.view.noise import LineFilter

            hidden = LineFilter(show_frames=show_frames)
            texts = [line.text for line in lines if not hidden.hides(line.replica, line.text)]
            log_tail = format_tail(info.failed_replica, texts[-n:] if n > 0 else [])
    return JobFailedError(message, exit_code=info.exit_code or 1, log_tail=log_tail)


def failed_beside(info: JobInfo) -> tuple[list[str], str]:
    """For a job that succeeded (its chief ended well) while other replicas failed: their names, and what
    happened (``worker-1 exited with code 3``, ``worker-1 was killed by SIGKILL (exit code 137)``, each
    ``; ``-joined); else ``([], "")``. The job's outcome stays the chief's, as Vertex AI and TensorFlow decide
    it; this says what else happened. A replica that tfcloud stopped because the chief was done (a parameter
    server, a worker past its grace period: cancelled, whatever its exit code) did not fail."""
    if info.state is not JobState.SUCCEEDED:
        return [], ""
    failed = [r for r in info.replicas[1:] if r.state is JobState.FAILED]
    said = [f"{r.name} {_ended(r.exit_code)}" if r.exit_code else f"{r.name} failed" for r in failed]
    return [r.name for r in failed], "; ".join(said)


def _ended(exit_code: int) -> str:
    """How a replica with ``exit_code`` ended, as the shell counts a death by signal N (128 + N: the local and
    Ray supervisors record it so): ``was killed by SIGKILL (exit code 137)``, or ``exited with code 3``."""
    import signal

    if 128 < exit_code < 256:
        try:
            return f"was killed by {signal.Signals(exit_code - 128).name} (exit code {exit_code})"
        except ValueError:
            pass
    return f"exited with code {exit_code}"


def last_said(handle: JobHandle, info: JobInfo, *, per_replica: int = 20) -> dict[str, str]:
    """What each of ``info``'s replicas printed last, by its logs (Cloud Logging for Vertex AI; known start-up
    noise left off, as on the terminal): one read of the job's last ``per_replica`` lines a replica. A replica
    with no line there is left out; logs that cannot be read now give none (the status is known all the
    same)."""
    if not info.replicas:
        return {}
    try:
        lines = list(handle.logs(tail=per_replica * len(info.replicas)))
    except OutcomeUnknownError:
        return {}
    from tfcloud.view.noise import LineFilter

    hidden = LineFilter()
    names = {r.name for r in info.replicas}
    said: dict[str, str] = {}
    for line in lines:
        if line.replica in names and line.text.strip() and not hidden.hides(line.replica, line.text):
            said[line.replica] = line.text
    return said


def tail(lines: Iterable[LogLine], n: int = 20, *, replica: str | None = None,
         skip_noise: bool = False) -> list[LogLine]:
    """The last ``n`` lines of ``lines`` (of one replica when ``replica`` is given; without the known start-up
    noise, :mod:`tfcloud.view.noise`, with ``skip_noise``)."""
    from tfcloud.view.noise import is_noise  # here: compiling its patterns costs `tfcloud status` start-up

    kept: collections.deque[LogLine] = collections.deque(maxlen=max(n, 0))
    for line in lines:
        if (replica is None or line.replica == replica) and not (skip_noise and is_noise(line.text)):
            kept.append(line)
    return list(kept)


def format_tail(replica: str, lines: Sequence[str]) -> str:
    """``lines`` as a block for an error message: a heading, then each line with the replica's prefix."""
    if not lines:
        return f"{replica} printed nothing."
    body = "\n".join(f"  {replica} | {line}" for line in lines)
    return f"Last {len(lines)} line{'s' if len(lines) != 1 else ''} of {replica}:\n{body}"
