"""The dashboard's log endpoints: a job's lines as server-sent events (a tail window, then live), earlier lines on
demand, a search over the whole log, and the whole log as a download. None of them holds the whole log.

    GET /api/jobs/{id}/logs?tail=N        events: ``window`` (where the window starts), ``lines``, then ``end`` (the
                                          job's state), ``gone`` (its files were removed) or ``problem``
    GET /api/jobs/{id}/logs/earlier?before=CURSOR&n=N   the N lines before a cursor (local jobs)
    GET /api/jobs/{id}/logs/search?q=TEXT               the lines that hold TEXT (the first 200, and how many)
    GET /api/jobs/{id}/logs.txt                          the whole log, streamed (``chief-0 | text`` lines)

Each ``lines`` event's ``id`` is the cursor after its last line: the browser sends it back as ``Last-Event-ID``
when it reconnects, and the stream resumes there (no line twice). A local job's log is read from its file
(:mod:`tfcloud.ui.logstream`) by the event loop's worker threads, a chunk at a time: nothing runs on once the
page has gone. Another target's lines come from the SDK through one follower per job, shared by every page that
shows it (:mod:`tfcloud.ui.followers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from tfcloud.errors import JobNotFoundError, TfcloudError
from tfcloud.ui import followers, logstream

if TYPE_CHECKING:
    from tfcloud import JobHandle

__all__ = ["TAIL", "download", "earlier", "events", "search"]

#: The lines a job's page opens on (the rest come with "earlier").
TAIL = 2000
#: The most lines one event carries.
_BATCH = 500
#: How often a quiet local job's file is read again, and its state checked (seconds).
_POLL_S = 0.05
_STATE_S = 0.5
_SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def _event(name: str, data: Any, event_id: str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _number(value: str | None, default: int, *, low: int = 0, high: int = 1 << 62) -> int:
    try:
        return min(high, max(low, int(value))) if value not in (None, "") else default
    except ValueError:
        return default


def _attach(job_id: str, options: Mapping[str, Any]) -> JobHandle:
    from tfcloud import sdk

    return sdk.attach(job_id, **options)  # the target options the dashboard was given (Sources.options_for)


async def events(request: Request, job_id: str, options: Mapping[str, Any],
                 stopping: threading.Event | None = None) -> Response:
    """The log stream of ``job_id`` (see the module's docstring). ``stopping``: set when the server stops; the
    stream ends then (within :data:`_POLL_S`), so that Ctrl-C never waits on an open page."""
    stopping = stopping or threading.Event()
    resume = request.headers.get("last-event-id") or request.query_params.get("from")
    n = _number(request.query_params.get("tail"), TAIL, high=100_000)
    try:
        handle = await run_in_threadpool(_attach, job_id, options)
    except TfcloudError as exc:
        return StreamingResponse(_one(_event("problem", {"message": exc.message})), media_type="text/event-stream",
                                 headers=_SSE_HEADERS)
    path = logstream.local_lines_file(handle)
    body = _local(handle, path, resume, n, stopping) if path is not None else _sdk(handle, resume, n, stopping)
    return StreamingResponse(body, media_type="text/event-stream", headers=_SSE_HEADERS)


async def _one(text: str) -> AsyncIterator[str]:
    yield text


async def _local(handle: JobHandle, path: Path, resume: str | None, n: int,
                 stopping: threading.Event) -> AsyncIterator[str]:
    yield "retry: 1000\n: stream open\n\n"
    hidden = logstream.line_filter()  # sees this stream's lines in order (a resumed stream starts it afresh)
    cursor = _number(resume, -1, low=-1) if resume else -1
    if cursor < 0:
        lines, start, cursor = await run_in_threadpool(logstream.tail, path, n)
        logstream.mark_hidden(lines, hidden)
        yield _event("window", {"start": start, "cursor": cursor})
        for i in range(0, len(lines), _BATCH):
            last = i + _BATCH >= len(lines)
            yield _event("lines", lines[i:i + _BATCH], str(cursor) if last else None)
        if not lines:
            yield f"id: {cursor}\n\n"
    checked = 0.0
    final = False
    while not stopping.is_set():
        lines, after = await run_in_threadpool(logstream.after, path, cursor, limit=_BATCH)
        if lines or after != cursor:
            cursor = after
            logstream.mark_hidden(lines, hidden)
            yield _event("lines", lines, str(cursor))
            continue
        if final:
            info = await run_in_threadpool(handle.info)
            yield _event("end", {"state": info.state.value})
            return
        if not path.parent.is_dir():
            yield _event("gone", {"message": f"The job's files are gone: {path.parent} was removed."})
            return
        if time.monotonic() - checked >= _STATE_S:
            checked = time.monotonic()
            info = await run_in_threadpool(handle.info)
            final = info.state.is_final  # decided before the last read: then no line is missed
            if final:
                continue
        await asyncio.sleep(_POLL_S)


def _sdk(handle: JobHandle, resume: str | None, n: int, stopping: threading.Event) -> AsyncIterator[str]:
    """Another target's lines through the SDK, from the job's shared follower (:mod:`tfcloud.ui.followers`).
    The cursor is ``EPOCH:NUMBER:TIME:K``: the follower, the number of the last line sent, the time of that line
    and how many lines of that time were sent. A page resumes on the same follower from NUMBER; when that follower
    is gone, a stream of its own asks for the lines since TIME and skips those K (``TIME:K``)."""
    parts = (resume or "").split(":")
    key = f"{handle.job_id}"
    if len(parts) == 4:
        with contextlib.suppress(ValueError):
            found = followers.find(key, int(parts[0]))
            if found is not None:
                return _shared(found, int(parts[1]), parts[2], int(parts[3]), stopping, resumed=True)
    if len(parts) in (2, 4):
        with contextlib.suppress(ValueError):
            since, skip = float(parts[-2]), int(parts[-1])
            return _pump(handle, since, skip, n, stopping)
    hidden = logstream.line_filter()  # the follower's: it sees the job's lines in order, once

    def convert(line: Any) -> dict[str, Any] | None:
        found = logstream.line_dict(line)
        return logstream.mark_hidden([found], hidden)[0] if found is not None else None

    return _shared(followers.follower(key, handle, n, convert), 0, "", 0, stopping, resumed=False)


async def _shared(found: followers.Follower, after: int, at_text: str, count: int, stopping: threading.Event,
                  *, resumed: bool) -> AsyncIterator[str]:
    at = float(at_text) if at_text else None
    found.join()
    try:
        yield "retry: 1000\n: stream open\n\n"
        if not resumed:
            yield _event("window", {"start": None})
        while not stopping.is_set():
            lines, after, end = found.read(after, _BATCH)
            if lines:
                for line in lines:
                    when = line.get("t")
                    if when is not None and when == at:
                        count += 1
                    elif when is not None:
                        at, count = when, 1
                yield _event("lines", lines, f"{found.epoch}:{after}:{'' if at is None else at}:{count}")
                continue
            if end is not None:
                yield _event(*end)
                return
            await asyncio.sleep(_POLL_S)
    finally:
        found.leave()


async def _pump(handle: JobHandle, since: float | None, skip: int, n: int,
                stopping: threading.Event) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = threading.Event()

    def put(item: tuple[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server stopped
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        left = skip
        try:
            lines = handle.logs(follow=True, since=since) if since is not None else handle.logs(follow=True, tail=n)
            for line in lines:
                if gone.is_set():
                    return
                if left and line.timestamp == since:
                    left -= 1
                    continue
                put(("line", line))
            put(("end", {"state": handle.info().state.value}))
        except TfcloudError as exc:
            put(("problem", {"message": exc.message}))
        except Exception as exc:  # the stream must end with a word, whatever went wrong
            put(("problem", {"message": f"{type(exc).__name__}: {exc}"}))

    threading.Thread(target=pump, name=f"tfcloud-ui-logs-{handle.job_id}", daemon=True).start()
    hidden = logstream.line_filter()
    at, count = since, skip
    try:
        yield "retry: 1000\n: stream open\n\n"
        if since is None:
            yield _event("window", {"start": None})
        while True:
            try:
                kind, value = await asyncio.wait_for(queue.get(), _STATE_S)
            except TimeoutError:
                if stopping.is_set():
                    return
                continue
            batch: list[dict[str, Any]] = []
            while kind == "line":
                if value.timestamp is not None and value.timestamp == at:
                    count += 1
                elif value.timestamp is not None:
                    at, count = value.timestamp, 1
                found = logstream.line_dict(value)
                if found is not None:
                    batch.append(logstream.mark_hidden([found], hidden)[0])
                if len(batch) >= _BATCH or queue.empty():
                    break
                kind, value = queue.get_nowait()
            if batch:
                yield _event("lines", batch, f"{at}:{count}" if at is not None else None)
            if kind != "line":
                yield _event(kind, value)
                return
    finally:
        gone.set()


async def earlier(request: Request, job_id: str, options: Mapping[str, Any], **_: Any) -> Response:
    """The lines before a cursor (``before``), at most ``n`` (default :data:`TAIL`): a local job's only."""
    before = _number(request.query_params.get("before"), 0)
    n = _number(request.query_params.get("n"), TAIL, low=1, high=20_000)
    try:
        handle = await run_in_threadpool(_attach, job_id, options)
    except TfcloudError as exc:
        return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
    path = logstream.local_lines_file(handle)
    if path is None:
        return JSONResponse({"error": "Earlier lines are kept for local jobs only here: download the whole log."},
                            status_code=404)
    lines, start = await run_in_threadpool(logstream.before, path, before, n)
    # A filter of their own, from the first of them: a traceback cut at the window's edge shows its frames.
    return JSONResponse({"start": start, "lines": logstream.mark_hidden(lines, logstream.line_filter())})


def _all_lines(handle: JobHandle) -> Iterator[dict[str, Any]]:
    path = logstream.local_lines_file(handle)
    if path is not None:
        yield from logstream.file_lines(path)
        return
    for line in handle.logs():
        found = logstream.line_dict(line, noise=False)
        if found is not None:
            yield found


async def search(request: Request, job_id: str, options: Mapping[str, Any], **_: Any) -> Response:
    """The lines of the whole log that hold ``q`` (case-insensitive): the first 200, and how many in all."""
    query = request.query_params.get("q", "")
    if not query.strip():
        return JSONResponse({"error": "Type something to search for."}, status_code=400)
    try:
        handle = await run_in_threadpool(_attach, job_id, options)
        found, count = await run_in_threadpool(logstream.search, _all_lines(handle), query, 200)
    except TfcloudError as exc:
        return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
    return JSONResponse({"query": query, "count": count, "lines": found})


async def download(request: Request, job_id: str, options: Mapping[str, Any], **_: Any) -> Response:
    """The whole log as text (``chief-0 | text`` lines, as the terminal prints them), streamed."""
    try:
        handle = await run_in_threadpool(_attach, job_id, options)
        width = max((len(r.name) for r in (await run_in_threadpool(handle.info)).replicas), default=7)
    except TfcloudError as exc:
        return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)

    def text() -> Iterator[bytes]:
        chunk: list[str] = []
        for line in _all_lines(handle):
            chunk.append(logstream.text_line(line, width))
            if len(chunk) >= 1000:
                yield "".join(chunk).encode()
                chunk = []
        yield "".join(chunk).encode()

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in job_id)
    return StreamingResponse(iterate_in_threadpool(text()), media_type="text/plain; charset=utf-8",
                             headers={"Content-Disposition": f'attachment; filename="{safe}.log"',
                                      "Cache-Control": "no-store"})
