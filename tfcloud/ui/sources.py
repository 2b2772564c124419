"""Where the dashboard's lists come from, and how long it waits for them: never longer than a short deadline.

Each target's listing (and each target's studies) runs on a thread of its own. A page waits for the listings
at most :data:`DEADLINE_S` together (the first page after the start waits on, up to :data:`PATIENCE_S`, until
one listing has answered); a listing still running then is shown as "still answering" (with what it
gave last, if anything), and the next refresh picks it up once it answers. A listing that failed is asked again
only after :data:`RETRY_S`, counted from when it failed (not from when it was asked), so a dead endpoint costs
one thread in the background, never a page's time. A local listing never waits on another target.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEADLINE_S", "FRESH_S", "PATIENCE_S", "RETRY_S", "Answer", "Fetcher"]

#: The longest a page waits for every listing together.
DEADLINE_S = 0.4
#: The longest a page waits when no listing has answered yet (the first page after the start): the first to
#: answer ends the wait.
PATIENCE_S = 5.0
#: Seconds a listing that answered is reused (several open pages refreshing cost one listing).
FRESH_S = 1.0
#: Seconds a listing that failed (or is not configured here) is reused before it is asked again.
RETRY_S = 30.0


@dataclass
class Answer:
    """What one listing gave: its value, or why not (``note``); ``pending``: still asking (since ``asked``);
    ``unconfigured``: the target is not set up here (no project, no cluster, no extra)."""

    value: Any = None
    note: str | None = None
    at: float = 0.0  # monotonic: when it answered (0: never)
    pending: bool = False
    asked: float = 0.0
    unconfigured: bool = False
    ok: bool = False


@dataclass
class _Slot:
    answer: Answer = field(default_factory=Answer)
    thread: threading.Thread | None = None


class Fetcher:
    """Calls that answer within a deadline, cached by key. ``fetch`` starts (or joins) a call on its own thread
    and returns what is known when the deadline passes."""

    def __init__(self, *, fresh_s: float = FRESH_S, retry_s: float = RETRY_S) -> None:
        self.fresh_s = fresh_s
        self.retry_s = retry_s
        self._slots: dict[Any, _Slot] = {}
        self._lock = threading.Lock()

    def _stale(self, answer: Answer, now: float) -> bool:
        if answer.at == 0.0:
            return True
        return now - answer.at >= (self.fresh_s if answer.ok else self.retry_s)

    def start(self, key: Any, call: Callable[[], Any], classify: Callable[[BaseException], tuple[str, bool]]) -> None:
        """Start ``call`` for ``key`` unless its answer is fresh or a call is already on."""
        now = time.monotonic()
        with self._lock:
            slot = self._slots.setdefault(key, _Slot())
            if slot.thread is not None or not self._stale(slot.answer, now):
                return
            slot.answer.pending = True
            slot.answer.asked = now

            def run() -> None:
                try:
                    value, note, unconfigured, ok = call(), None, False, True
                except Exception as exc:  # any failure is a note on the page, never a broken page
                    value, ok = None, False
                    note, unconfigured = classify(exc)
                with self._lock:
                    previous = slot.answer
                    slot.answer = Answer(value=value if ok else previous.value, note=note, at=time.monotonic(),
                                         unconfigured=unconfigured, ok=ok, asked=previous.asked)
                    slot.thread = None

            slot.thread = threading.Thread(target=run, name=f"tfcloud-ui-list-{key[0] if key else ''}", daemon=True)
            slot.thread.start()

    def wait(self, keys: list[Any], deadline: float, patience: float | None = None) -> dict[Any, Answer]:
        """Each key's answer once every call is done or ``deadline`` (monotonic) has passed; when by then none
        has ever answered (a cold start), on until the first one does or ``patience`` (monotonic) passes."""
        budget = deadline - time.monotonic()
        for key in keys:
            with self._lock:
                thread, asked = self._slots[key].thread, self._slots[key].answer.asked
            if thread is not None and time.monotonic() - asked < budget:  # a call already late is not waited on
                thread.join(max(0.0, deadline - time.monotonic()))
        while patience is not None and time.monotonic() < patience:
            with self._lock:
                slots = [self._slots[key] for key in keys]
                if any(slot.answer.at > 0.0 for slot in slots) or all(slot.thread is None for slot in slots):
                    break
            time.sleep(0.02)
        with self._lock:
            return {key: Answer(**{**vars(self._slots[key].answer), "pending": self._slots[key].thread is not None})
                    for key in keys}
