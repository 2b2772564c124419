"""One follower per job for the targets whose lines come through the SDK (Vertex AI, Ray), shared by every page
that shows the job: one thread per followed job, not one per page, and a reconnecting page resumes from the
last line it had.

A :class:`Follower` reads ``JobHandle.logs(follow=True, tail=N)`` on a thread of its own into a bounded buffer
(:data:`KEEP` lines, each numbered); pages read the buffer from their cursor (``EPOCH:NUMBER``: the follower and
the line) without a thread of their own. The SDK's stream cannot be interrupted while it waits for a line, so the
follower ends when the job ends, or at its next line once no page has read it for :data:`LINGER_S` seconds. A
finished follower is kept :data:`LINGER_S` seconds after its last reader, for a page that reconnects or reloads.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["KEEP", "LINGER_S", "Follower", "find", "follower"]

#: The lines a follower keeps (the oldest leave first).
KEEP = 5000
#: Seconds a follower lives on without readers.
LINGER_S = 60.0
_EPOCHS = itertools.count(1)
_FOLLOWERS: dict[str, Follower] = {}
_LOCK = threading.Lock()


class Follower:
    """A job's lines as they come, numbered from 1, in a buffer of the last :data:`KEEP`; then ``end``."""

    def __init__(self, handle: Any, tail: int, convert: Callable[[Any], dict[str, Any] | None]) -> None:
        self.epoch = next(_EPOCHS)
        self.lines: deque[tuple[int, dict[str, Any]]] = deque(maxlen=KEEP)
        self.count = 0
        self.end: tuple[str, dict[str, Any]] | None = None
        self.readers = 0
        self.last_read = time.monotonic()
        self.lock = threading.Lock()
        self._handle, self._tail, self._convert = handle, tail, convert
        self.thread = threading.Thread(target=self._run, name=f"tfcloud-ui-follow-{handle.job_id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from tfcloud.errors import TfcloudError

        end: tuple[str, dict[str, Any]]
        try:
            for line in self._handle.logs(follow=True, tail=self._tail):
                converted = self._convert(line)
                with self.lock:
                    if converted is not None:
                        self.count += 1
                        self.lines.append((self.count, converted))
                    if self.readers == 0 and time.monotonic() - self.last_read > LINGER_S:
                        self.end = ("problem", {"message": "no page was following the job"})
                        return
            end = ("end", {"state": self._handle.info().state.value})
        except TfcloudError as exc:
            end = ("problem", {"message": exc.message})
        except Exception as exc:  # the stream must end with a word, whatever went wrong
            end = ("problem", {"message": f"{type(exc).__name__}: {exc}"})
        with self.lock:
            self.end = end

    def read(self, after: int, limit: int) -> tuple[list[dict[str, Any]], int, tuple[str, dict[str, Any]] | None]:
        """Up to ``limit`` lines numbered after ``after``, the number of the last one (``after`` when none), and
        the end once every line is read."""
        with self.lock:
            self.last_read = time.monotonic()
            batch = [(n, line) for n, line in self.lines if n > after][:limit]
            last = batch[-1][0] if batch else after
            return [line for _, line in batch], last, self.end if last >= self.count else None

    def join(self) -> None:
        with self.lock:
            self.readers += 1
            self.last_read = time.monotonic()

    def leave(self) -> None:
        with self.lock:
            self.readers -= 1
            self.last_read = time.monotonic()

    @property
    def stale(self) -> bool:
        """Ended (or given up) and unread for :data:`LINGER_S`: dropped from the registry."""
        with self.lock:
            return self.readers == 0 and time.monotonic() - self.last_read > LINGER_S and not self.thread.is_alive()


def follower(key: str, handle: Any, tail: int, convert: Callable[[Any], dict[str, Any] | None]) -> Follower:
    """The follower of ``key`` (a job), started with ``handle`` when there is none (or only one that gave up)."""
    with _LOCK:
        for name in [k for k, f in _FOLLOWERS.items() if f.stale]:
            del _FOLLOWERS[name]
        found = _FOLLOWERS.get(key)
        if found is None or (found.end is not None and found.end[0] == "problem"):
            found = _FOLLOWERS[key] = Follower(handle, tail, convert)
        return found


def find(key: str, epoch: int) -> Follower | None:
    """The follower of ``key`` if it is still the one numbered ``epoch`` (a page's cursor is its own)."""
    with _LOCK:
        found = _FOLLOWERS.get(key)
        return found if found is not None and found.epoch == epoch else None
