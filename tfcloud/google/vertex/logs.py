"""A Vertex AI job's log lines from Cloud Logging: read once, or followed until the job has ended.

The filter is the one Vertex AI's own console uses: ``resource.type="ml_job" AND resource.labels.job_id="ID"``
(plus ``resource.labels.task_name`` for one replica). A follower tails the logs with ``TailLogEntries`` while
the job runs, and reads with ``ListLogEntries`` what a stream cannot promise: the lines from before it opened,
those around a reconnect (a broken stream is reopened with backoff; one that keeps breaking is replaced by
polling), and the last ones once the job has ended. Lines are told apart by their ``insert_id``, so none is
shown twice. State changes appear as lines of the ``job`` pseudo-replica.

Logs never decide a job's outcome: when Cloud Logging keeps failing while a job is followed, a ``job`` line
on stderr says that lines may be missing and how to read them later, and the job is followed to its end.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tfcloud.backends.base import LogLine
from tfcloud.errors import OutcomeUnknownError
from tfcloud.google.cloud.gcloud import Clients, RetryPolicy, call, status_code
from tfcloud.google.vertex.request import replica_name
from tfcloud.job.states import JobState

__all__ = ["LogFollower"]

log = logging.getLogger("tfcloud")
#: Reopen a broken log stream this many times; then poll ``ListLogEntries`` instead.
RECONNECTS = 6


class LogFollower:
    """Reads the log lines of job ``job_id`` in ``project``. ``state`` and ``error`` give the job's state and
    Vertex AI's error message (the follower asks them between reads)."""

    def __init__(self, *, clients: Clients, project: str, job_id: str, policy: RetryPolicy, poll_interval: float,
                 state: Callable[[], JobState], error: Callable[[], str | None]) -> None:
        self.clients = clients
        self.project = project
        self.job_id = job_id
        self.policy = policy
        self.poll_interval = poll_interval
        self.state = state
        self.error = error

    def filter(self, replica: str | None, since: str | None = None) -> str:
        terms = ['resource.type="ml_job"', f'resource.labels.job_id="{self.job_id}"']
        if replica is not None:
            terms.append(f'resource.labels.task_name="{task_name(replica)}"')
        if since is not None:
            terms.append(f'timestamp>="{since}"')
        return " AND ".join(terms)

    def entries(self, replica: str | None, since: str | None, tail: int | None = None) -> list[Any]:
        """The entries (``ListLogEntries``) at ``since`` or later, oldest first; with ``tail``, only the newest
        ``tail`` of them, read newest first a page at a time and no further (then put in order).
        OutcomeUnknownError when Cloud Logging keeps failing."""
        client = self.clients.logging()
        request = {
            "resource_names": [f"projects/{self.project}"],
            "filter": self.filter(replica, since),
            "order_by": "timestamp asc" if tail is None else "timestamp desc",
            "page_size": 1000 if tail is None else max(1, min(tail, 1000)),
        }

        def read() -> list[Any]:
            pager = client.list_log_entries(request=request, retry=None, timeout=self.policy.call_timeout)
            if tail is None:
                return list(pager)
            newest: list[Any] = []
            for page in pager.pages:  # each further page is one more call: stop once there are enough
                newest.extend(page.entries)
                if len(newest) >= tail:
                    break
            return list(reversed(newest[:tail]))

        if tail is not None and tail <= 0:
            return []
        return call(read, what=f"Reading the logs of job {self.job_id}", service="Cloud Logging", policy=self.policy,
                    unknown="The lines could not be read.", unknown_hint=f"Try again: tfcloud logs {self.job_id}")

    def lines(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
              since: float | None = None) -> Iterator[LogLine]:
        """The job's log lines, oldest first (``since``: printed then or later; ``tail``: the last ``tail`` of
        those). With ``follow``: also state changes (as replica ``job``), until the job has ended and its last
        lines are in."""
        seen = _Seen()
        if since is None and follow and tail == 0:  # no line so far: only those from now on
            since = time.time()
        seen.since = None if since is None else iso(dt.datetime.fromtimestamp(since, dt.timezone.utc))
        seen.floor = seen.since
        if not follow:
            yield from seen.lines(self.entries(replica, seen.since, tail))
            return
        yield from self._follow(replica, seen, tail)

    def _read(self, replica: str | None, since: str | None, missing: list[str], tail: int | None = None) -> list[Any]:
        """``entries``, or none (noted once in ``missing``) while Cloud Logging does not answer."""
        try:
            return self.entries(replica, since, tail)
        except OutcomeUnknownError as exc:
            log.info("%s", exc.message)
            if not missing:
                missing.append(f"{exc.message} Some lines may be missing; read them later: "
                               f"tfcloud logs {self.job_id}")
            return []

    def _follow(self, replica: str | None, seen: _Seen, last: int | None = None) -> Iterator[LogLine]:
        tail = _Tail(self, replica)
        reconnects = 0
        last_state: JobState | None = None
        missing: list[str] = []
        shown = 0
        try:
            yield from seen.lines(self._read(replica, seen.since, missing, last))
            if last is not None and seen.first is not None:  # --tail N: nothing older than what it showed
                seen.floor = seen.first
            while True:
                state = self.state()
                if state is not last_state:
                    last_state = state
                    said = state.value if state.is_final else f"is {state.value}"  # "ID succeeded", "ID is queued"
                    yield LogLine(replica="job", text=f"{self.job_id} {said}", stream="stdout")
                if len(missing) > shown:
                    shown = len(missing)
                    yield LogLine(replica="job", text=missing[-1], stream="stderr")
                if state.is_final:
                    break
                yield from seen.lines(tail.take(timeout=self.poll_interval, missing=missing))
                if tail.error is not None:
                    log.info("the log stream of job %s broke (%s); reopening it", self.job_id,
                             status_code(tail.error))
                    tail.close()
                    if reconnects < RECONNECTS:
                        time.sleep(self.policy.backoff(reconnects))
                        reconnects += 1
                        tail = _Tail(self, replica)
                    else:  # the stream keeps failing: poll instead
                        tail = _Tail.polling(self, replica)
                    yield from seen.lines(self._read(replica, seen.since, missing))
        finally:
            tail.close()
        yield from seen.lines(tail.take(timeout=0, missing=missing))
        # The last read goes back a little before the newest line shown: a replica's last lines can reach the log
        # store after a later-stamped line (the service's "completed") was shown; seen.ids drops the repeats.
        back = earlier(seen.since, _SETTLE_S)
        if seen.floor is not None and (back is None or back < seen.floor):
            back = seen.floor  # never before what was asked for (--since, --tail)
        yield from seen.lines(self._read(replica, back, missing))
        if len(missing) > shown:
            yield LogLine(replica="job", text=missing[-1], stream="stderr")
        error = self.error()
        if error:
            yield LogLine(replica="job", text=f"error: {error}", stream="stderr")


class _Seen:
    """The entries already shown (by ``insert_id``) and the newest timestamp among them."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.since: str | None = None
        self.first: str | None = None  # the oldest timestamp shown
        self.floor: str | None = None  # no line older than this is wanted (--since, --tail)

    def lines(self, entries: Iterable[Any]) -> Iterator[LogLine]:
        for entry in entries:
            if entry.insert_id in self.ids:
                continue
            self.ids.add(entry.insert_id)
            stamp = iso(entry.timestamp)
            if stamp is not None and (self.since is None or stamp > self.since):
                self.since = stamp
            if stamp is not None and (self.first is None or stamp < self.first):
                self.first = stamp
            line = log_line(entry)
            if line is not None:
                yield line


class _Tail:
    """One ``TailLogEntries`` stream, read by a thread into a queue. ``error`` is set when it breaks."""

    def __init__(self, follower: LogFollower, replica: str | None, *, stream: bool = True) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()
        self.error: BaseException | None = None
        self._follower = follower
        self._replica = replica
        self._stop = threading.Event()
        self._lock = threading.Lock()  # close() and the thread agree on whether the stream must be cancelled
        self._call: Any = None
        self._thread: threading.Thread | None = None
        if stream:
            self._request = {"resource_names": [f"projects/{follower.project}"],
                             "filter": follower.filter(replica, None)}
            self._client = follower.clients.logging()
            self._thread = threading.Thread(target=self._run, name=f"tfcloud-tail-{follower.job_id}", daemon=True)
            self._thread.start()

    @classmethod
    def polling(cls, follower: LogFollower, replica: str | None) -> _Tail:
        """No stream: each ``take`` waits, then lists what is new."""
        return cls(follower, replica, stream=False)

    def _requests(self) -> Iterator[Any]:
        from google.cloud.logging_v2.types import TailLogEntriesRequest

        yield TailLogEntriesRequest(**self._request)
        self._stop.wait()  # keep the request side open until we close the stream

    def _run(self) -> None:
        try:
            # The transport's own stub, not the client method: that one waits for the first response before it
            # returns (api_core prefetches it), and a stream with nothing to say yet could not be cancelled.
            call: Any = self._client.transport.tail_log_entries(self._requests())  # type: ignore[arg-type]  # a stream
            with self._lock:
                self._call = call
                closed = self._stop.is_set()
            if closed:  # closed while the stream was being opened: nobody will read it (nor cancel it later)
                call.cancel()
                return
            for response in call:
                for entry in response.entries:
                    self.queue.put(entry)
        except Exception as exc:
            if not self._stop.is_set():
                self.error = exc

    def take(self, *, timeout: float, missing: list[str]) -> list[Any]:
        """The entries that arrived, waiting up to ``timeout`` seconds for the first."""
        if self._thread is None:
            time.sleep(timeout)
            return self._follower._read(self._replica, None, missing)
        entries: list[Any] = []
        try:
            entries.append(self.queue.get(timeout=timeout) if timeout > 0 else self.queue.get_nowait())
            while True:
                entries.append(self.queue.get_nowait())
        except queue.Empty:
            pass
        return entries

    def close(self) -> None:
        with self._lock:
            self._stop.set()
            call = self._call
        cancel = getattr(call, "cancel", None)
        if cancel is not None:
            cancel()
        if self._thread is not None:
            self._thread.join(timeout=10)


def task_name(replica: str) -> str:
    """``worker-1`` → Vertex AI's ``workerpool1-1``."""
    from tfcloud.google.vertex.request import POOL_ORDER

    role, _, index = replica.partition("-")
    for number, pool_role in enumerate(POOL_ORDER):
        if pool_role.value == role:
            return f"workerpool{number}-{index or 0}"
    return replica


def timestamp(value: Any) -> float | None:
    """Seconds since the epoch from a protobuf Timestamp or a datetime (the clients return either)."""
    if value is None:
        return None
    if hasattr(value, "ToDatetime"):
        value = value.ToDatetime(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return None


#: How far before the newest line shown the read after the job ended starts (lines that arrived late).
_SETTLE_S = 60.0


def earlier(stamp: str | None, seconds: float) -> str | None:
    """The RFC 3339 time ``seconds`` before ``stamp`` (None stays None; an unreadable stamp is kept as is)."""
    if stamp is None:
        return None
    try:
        when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return iso(when - dt.timedelta(seconds=seconds))


def iso(value: Any) -> str | None:
    """RFC 3339 (``...Z``) from a protobuf Timestamp or a datetime; None when unset."""
    if hasattr(value, "ToDatetime"):
        value = value.ToDatetime(tzinfo=dt.timezone.utc) if (value.seconds or value.nanos) else None
    if not value:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def log_line(entry: Any) -> LogLine | None:
    """A Cloud Logging entry as a :class:`LogLine` (None when it holds no text)."""
    text = entry.text_payload
    if not text and entry.json_payload:
        payload = dict(entry.json_payload)
        text = str(payload.get("message", json.dumps(payload, default=str)))
    if not text:
        return None
    task = entry.resource.labels.get("task_name", "") if entry.resource else ""
    severity = int(entry.severity)  # LogSeverity: ERROR is 500, and above it CRITICAL, ALERT, EMERGENCY
    stream = "stderr" if severity >= 500 else "stdout"
    return LogLine(replica=replica_name(task) if task else "job", text=text.rstrip("\n"), stream=stream,
                   timestamp=timestamp(entry.timestamp))
