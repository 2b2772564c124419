"""Cloud Logging: ``WriteLogEntries``, ``ListLogEntries``, ``TailLogEntries`` (and ``ListLogs``).

Every entry lives in one in-memory :class:`LogStore`, whether a client wrote it or a replica or build step
printed it. Entries are ordered by ``(timestamp, arrival)``; ``ListLogEntries`` filters with the query subset
of :mod:`tfcloud.emulator._filter` (``resource.type``, ``resource.labels.*``, ``logName``, ``labels.*``,
``severity``, ``timestamp``, ``textPayload``, ``jsonPayload.*``, bare text) and pages with opaque tokens;
``TailLogEntries`` streams the entries that arrive after the tail starts and match its filter, as the
service does. ``order_by`` (``timestamp asc``/``desc``) and ``page_size`` are honoured, and every
``ListLogEntries`` answer is counted in :attr:`LogStore.reads` (filter, order, page size, entries served), so a
test can check that a client read only what it asked for.
"""

from __future__ import annotations

import collections
import datetime as dt
import itertools
import json
import queue
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._filter import FilterError, FilterField, Severity, compile_filter
from tfcloud.emulator._grpc import Handler, abort_invalid, bound, list_predicate, page_token, read_page_token

__all__ = ["ListRead", "LogStore", "LoggingService", "StoredEntry"]

_DEFAULT_PAGE = 50
#: ListLogEntriesRequest.page_size (google/logging/v2/logging.proto, read 2026-11-26): "Default is 50. If the
#: value is negative or exceeds 1000, the request is rejected."
_MAX_PAGE = 1000

_TIME = FilterField(kind="time")
_ANY = FilterField(kind="any")
#: The LogEntry fields a query may compare ("Logging query language", https://cloud.google.com/logging/docs/
#: view/logging-query-language, read 2026-11-26): a bare value searches every field; times are RFC 3339.
LOG_FILTER = {
    "logName": FilterField(), "log_name": FilterField(),
    "resource.type": FilterField(), "resource.labels": _ANY,
    "labels": _ANY, "severity": FilterField(kind="severity"),
    "timestamp": _TIME, "receiveTimestamp": _TIME, "receive_timestamp": _TIME,
    "insertId": FilterField(), "insert_id": FilterField(),
    "textPayload": FilterField(), "text_payload": FilterField(),
    "jsonPayload": _ANY, "json_payload": _ANY, "protoPayload": _ANY, "httpRequest": _ANY,
    "operation": _ANY, "sourceLocation": _ANY, "trace": FilterField(), "spanId": FilterField(),
}


@dataclass(frozen=True, kw_only=True)
class ListRead:
    """One ``ListLogEntries`` answer: what was asked, and how many entries it served."""

    filter: str
    order_by: str
    page_size: int
    page_token: str
    served: int


@dataclass(frozen=True, kw_only=True)
class StoredEntry:
    seq: int
    entry: Any  # logging_v2.types.LogEntry
    record: Mapping[str, Any]

    @property
    def key(self) -> tuple[dt.datetime, int]:
        return (self.record["timestamp"], self.seq)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _record(entry: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    resource = {"type": entry.resource.type, "labels": dict(entry.resource.labels)}
    payload: dict[str, Any] = {}
    if "json_payload" in entry:
        payload = json_format.MessageToDict(entry._pb.json_payload)
    text = entry.text_payload or str(payload.get("message", "")) or json.dumps(payload)
    return {
        "logName": entry.log_name, "log_name": entry.log_name,
        "resource": resource,
        "labels": dict(entry.labels),
        "severity": Severity(int(entry.severity)),
        "timestamp": entry.timestamp, "receiveTimestamp": entry.receive_timestamp,
        "insertId": entry.insert_id, "insert_id": entry.insert_id,
        "textPayload": entry.text_payload or None, "text_payload": entry.text_payload or None,
        "jsonPayload": payload or None, "json_payload": payload or None,
        "_text": text,
    }


class LogStore:
    """Thread-safe store of log entries with tail subscriptions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[StoredEntry] = []
        self._seq = itertools.count(1)
        self._subscribers: list[queue.SimpleQueue[StoredEntry | None]] = []
        #: The latest ``ListLogEntries`` answers, oldest first (at most 1000 kept).
        self.reads: collections.deque[ListRead] = collections.deque(maxlen=1000)
        #: How many tails have subscribed, ever: a test waits for its ``TailLogEntries`` stream to be live by it.
        self.subscriptions = 0

    def add(self, entry: Any) -> StoredEntry:
        """Store a ``logging_v2.types.LogEntry``; fill ``timestamp``, ``receive_timestamp`` and ``insert_id``."""
        now = _now()
        seq = next(self._seq)
        if "timestamp" not in entry:
            entry.timestamp = now
        entry.receive_timestamp = now
        if not entry.insert_id:
            entry.insert_id = f"{int(now.timestamp() * 1e6):x}{seq:08x}"
        stored = StoredEntry(seq=seq, entry=entry, record=_record(entry))
        with self._lock:
            self._entries.append(stored)
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber.put(stored)
        return stored

    def append(self, *, log_name: str, resource_type: str, resource_labels: Mapping[str, str], text: str,
               severity: str = "INFO", labels: Mapping[str, str] | None = None) -> StoredEntry:
        """Store one text entry (what replicas and build steps print)."""
        from google.api import monitored_resource_pb2
        from google.cloud.logging_v2.types import LogEntry
        from google.logging.type import log_severity_pb2

        entry = LogEntry(
            log_name=log_name,
            resource=monitored_resource_pb2.MonitoredResource(type=resource_type, labels=dict(resource_labels)),
            text_payload=text,
            severity=log_severity_pb2.LogSeverity.Value(severity),
            labels=dict(labels or {}),
        )
        return self.add(entry)

    def entries(self) -> list[StoredEntry]:
        with self._lock:
            return sorted(self._entries, key=lambda stored: stored.key)

    def subscribe(self) -> queue.SimpleQueue[StoredEntry | None]:
        subscriber: queue.SimpleQueue[StoredEntry | None] = queue.SimpleQueue()
        with self._lock:
            self._subscribers.append(subscriber)
            self.subscriptions += 1
        return subscriber

    def unsubscribe(self, subscriber: queue.SimpleQueue[StoredEntry | None]) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    def close(self) -> None:
        """Wake every tail so it ends (the emulator is stopping)."""
        with self._lock:
            subscribers, self._subscribers = list(self._subscribers), []
        for subscriber in subscribers:
            subscriber.put(None)


def _in_resources(stored: StoredEntry, resource_names: list[str]) -> bool:
    return any(stored.entry.log_name.startswith(name.rstrip("/") + "/logs/") for name in resource_names)


def _check_resource_names(names: list[str], context: grpc.ServicerContext) -> None:
    if not names:
        abort_invalid(context, [("resource_names", "at least one resource name is required.")])
    for index, name in enumerate(names):
        parts = name.split("/")
        if len(parts) != 2 or parts[0] not in ("projects", "organizations", "billingAccounts", "folders"):
            abort_invalid(context, [(f"resource_names[{index}]", f"Invalid resource name: {name!r}.")])


def _token(key: tuple[dt.datetime, int], request: Any) -> str:
    return page_token(f"{key[0].isoformat()}|{key[1]}", request)


def _untoken(request: Any, context: grpc.ServicerContext) -> tuple[dt.datetime, int] | None:
    position = read_page_token(request, context)
    if position is None:
        return None
    try:
        stamp, seq = position.split("|")
        return dt.datetime.fromisoformat(stamp), int(seq)
    except ValueError:
        abort_invalid(context, [("page_token", "Invalid page token.")])


class LoggingService:
    """The ``google.logging.v2.LoggingServiceV2`` methods, over a :class:`LogStore`."""

    def __init__(self, store: LogStore, stopping: threading.Event) -> None:
        self.store = store
        self._stopping = stopping

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"WriteLogEntries": "write_log_entries", "ListLogEntries": "list_log_entries",
                                      "TailLogEntries": "tail_log_entries", "ListLogs": "list_logs"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    def write_log_entries(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.logging_v2.types import WriteLogEntriesResponse

        if not request.entries:
            abort_invalid(context, [("entries", "at least one log entry is required.")])
        prepared = []
        for index, entry in enumerate(request.entries):
            if not entry.log_name:
                entry.log_name = request.log_name
            if not entry.resource.type:
                entry.resource = request.resource
            for key, value in request.labels.items():
                entry.labels.setdefault(key, value)
            parts = entry.log_name.split("/")
            if len(parts) < 4 or parts[2] != "logs" or not parts[1]:
                abort_invalid(context, [(f"entries[{index}].log_name",
                                         f"expected projects/PROJECT/logs/LOG, received {entry.log_name!r}.")])
            if not entry.resource.type:
                abort_invalid(context, [(f"entries[{index}].resource", "a monitored resource is required (on the "
                                         "entry or the request).")])
            prepared.append(entry)
        if not request.dry_run:
            for entry in prepared:
                self.store.add(entry)
        return WriteLogEntriesResponse()

    def list_log_entries(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.logging_v2.types import ListLogEntriesResponse

        names = list(request.resource_names)
        _check_resource_names(names, context)
        order = " ".join(request.order_by.split()).lower() or "timestamp asc"
        if order not in ("timestamp asc", "timestamp desc", "timestamp"):
            abort_invalid(context, [("order_by", f'expected "timestamp asc" or "timestamp desc", received '
                                                 f"{request.order_by!r}.")])
        if request.page_size > _MAX_PAGE:
            abort_invalid(context, [("page_size", f"must be at most {_MAX_PAGE}, received {request.page_size}.")])
        predicate = list_predicate(request, context, LOG_FILTER, bare_values=True)
        descending = order.endswith("desc")
        entries = [stored for stored in self.store.entries()
                   if _in_resources(stored, names) and predicate(stored.record)]
        if descending:
            entries.reverse()
        last = _untoken(request, context)
        if last is not None:
            entries = [s for s in entries if (s.key < last if descending else s.key > last)]
        size = min(request.page_size or _DEFAULT_PAGE, _MAX_PAGE)
        page, rest = entries[:size], entries[size:]
        self.store.reads.append(ListRead(filter=request.filter, order_by=request.order_by,
                                         page_size=request.page_size, page_token=request.page_token,
                                         served=len(page)))
        return ListLogEntriesResponse(
            entries=[stored.entry for stored in page],
            next_page_token=_token(page[-1].key, request) if rest else "",
        )

    def tail_log_entries(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        from google.cloud.logging_v2.types import TailLogEntriesResponse

        request = next(requests, None)
        if request is None:
            return
        names = list(request.resource_names)
        _check_resource_names(names, context)
        try:
            predicate = compile_filter(request.filter, LOG_FILTER, bare_values=True)
        except FilterError as exc:
            abort_invalid(context, [("filter", str(exc))], message=str(exc))
        subscriber = self.store.subscribe()
        try:
            while context.is_active() and not self._stopping.is_set():
                try:
                    first = subscriber.get(timeout=0.2)
                except queue.Empty:
                    continue
                if first is None:
                    return
                batch = [first]
                while True:  # deliver what arrived together in one response
                    try:
                        more = subscriber.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        break
                    batch.append(more)
                try:
                    matching = [s.entry for s in batch if _in_resources(s, names) and predicate(s.record)]
                except FilterError as exc:
                    abort_invalid(context, [("filter", str(exc))], message=str(exc))
                if matching:
                    yield TailLogEntriesResponse(entries=matching)
        finally:
            self.store.unsubscribe(subscriber)

    def list_logs(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.logging_v2.types import ListLogsResponse

        parent = request.parent.rstrip("/")
        names = sorted({s.entry.log_name for s in self.store.entries() if s.entry.log_name.startswith(parent + "/")})
        return ListLogsResponse(log_names=names)
