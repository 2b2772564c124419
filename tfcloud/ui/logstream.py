"""A job's log for the dashboard, at any size: a window of it, never all of it in memory.

A local job's lines are one file (``lines.jsonl``: one JSON object per line, as the supervisor writes it), so
the dashboard reads it by byte offset: :func:`tail` reads back from the end for the last lines, :func:`before`
reads back from an offset for the lines before it ("earlier"), :func:`after` reads forward in chunks. Each
line's *cursor* is the offset just after it: a server-sent event's ``id``, so a reconnecting page resumes from
the last line it had (``Last-Event-ID``), never from the start. Memory per reader is one chunk
(:data:`CHUNK`), whatever the log's size.

Other targets' lines come through the SDK (:meth:`tfcloud.JobHandle.logs`); their cursor is the number of lines
sent.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud import JobInfo

__all__ = ["CHUNK", "after", "before", "line_dict", "line_filter", "local_lines_file", "local_pids", "mark_hidden",
           "search", "tail", "text_line"]

#: Bytes read at a time (the most a reader holds, besides one line longer than that).
CHUNK = 256 * 1024
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def local_lines_file(handle: object) -> Path | None:
    """The file a job's lines are in on this machine (a handle that is a
    :class:`~tfcloud.backends.base.LinesFile`: a local job's); None for another's (read through the SDK)."""
    from tfcloud.view.following import lines_file

    return lines_file(handle)


def local_pids(info: JobInfo) -> dict[str, int] | None:
    """Each replica's process id on this machine (:attr:`ReplicaInfo.pid`: those started so far); None when none
    runs here (another target's job)."""
    pids = {r.name: r.pid for r in info.replicas if r.pid is not None}
    return pids or None


def line_dict(data: Any, *, noise: bool | None = None) -> dict[str, Any] | None:
    """One line as the page takes it (``r`` replica, ``x`` text, ``s`` stream, ``t`` time, ``n`` start-up
    noise), from the supervisor's JSON object or a :class:`~tfcloud.backends.base.LogLine`."""
    from tfcloud.view.logview import is_noise

    if isinstance(data, dict):
        try:
            replica, text = str(data["r"]), str(data["x"])
        except KeyError:
            return None
        stream, when = str(data.get("s", "stdout")), data.get("t")
    else:
        replica, text, stream, when = data.replica, data.text, data.stream, data.timestamp
    return {"r": replica, "x": text, "s": stream, "t": when,
            "n": is_noise(_ANSI.sub("", text)) if noise is None else noise}


def mark_hidden(lines: list[dict[str, Any]], hidden: Any) -> list[dict[str, Any]]:
    """Set each line's ``n`` (hidden unless "Show everything") with ``hidden``, a
    :class:`~tfcloud.view.noise.LineFilter` that has seen the stream's earlier lines in order: start-up noise, the
    whole of a TensorFlow protobuf dump, and tfcloud's launcher and ``runpy`` frames in a traceback, as in the
    terminal."""
    for line in lines:
        line["n"] = hidden.hides(line["r"], _ANSI.sub("", line["x"]))
    return lines


def line_filter() -> Any:
    """A new :class:`~tfcloud.view.noise.LineFilter` for one stream (frames kept with ``TFCLOUD_DEBUG=1``)."""
    from tfcloud.view.following import debugging
    from tfcloud.view.noise import LineFilter

    return LineFilter(show_frames=debugging())


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return line_dict(data) if isinstance(data, dict) else None


def after(path: Path, offset: int, *, limit: int = 500) -> tuple[list[dict[str, Any]], int]:
    """Up to ``limit`` whole lines from ``offset`` on, and the cursor after the last one (``offset`` when there
    is no whole line yet: a line being written is left for the next read)."""
    lines: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            while len(lines) < limit:
                data = f.read(CHUNK)
                if not data:
                    break
                end = data.rfind(b"\n")
                if end < 0:  # a line longer than a chunk: read on until its end
                    more = f.readline()
                    if not more.endswith(b"\n"):
                        break
                    data += more
                    end = len(data) - 1
                pos = 0
                while pos <= end and len(lines) < limit:
                    stop = data.index(b"\n", pos)
                    parsed = _parse(data[pos:stop])
                    if parsed is not None:
                        lines.append(parsed)
                    pos = stop + 1
                offset += pos
                f.seek(offset)
    except FileNotFoundError:
        pass
    return lines, offset


def before(path: Path, offset: int | None, n: int) -> tuple[list[dict[str, Any]], int]:
    """The last ``n`` whole lines that end at or before ``offset`` (a cursor; None: the end of the file's whole
    lines), and the offset where the first of them starts (0: there is nothing earlier). Reads back from
    ``offset`` a chunk at a time, so the cost is the window's size, not the log's."""
    end = _whole_end(path)[1] if offset is None else offset
    try:
        with open(path, "rb") as f:
            end = min(end, os.fstat(f.fileno()).st_size)
            start = end
            buffer = b""
            while start > 0 and buffer.count(b"\n") <= n:
                step = min(CHUNK, start)
                start -= step
                f.seek(start)
                buffer = f.read(step) + buffer
    except FileNotFoundError:
        return [], 0
    pieces = buffer.split(b"\n")[:-1]  # it ends at a line's end: the last piece is empty
    window = pieces[-n:] if n > 0 else []
    first = end - sum(len(p) + 1 for p in window)
    return [parsed for parsed in map(_parse, window) if parsed is not None], first


def tail(path: Path, n: int) -> tuple[list[dict[str, Any]], int, int]:
    """The last ``n`` lines, the offset where they start (0: nothing earlier) and the cursor after them."""
    lines, start = before(path, None, n)
    _, end = _whole_end(path)
    return lines, start, end


def _whole_end(path: Path) -> tuple[int, int]:
    """The file's size and the offset after its last whole line."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - CHUNK))
            data = f.read()
    except FileNotFoundError:
        return 0, 0
    cut = data.rfind(b"\n")
    return size, (max(0, size - CHUNK) + cut + 1) if cut >= 0 else max(0, size - len(data))


def search(lines: Iterator[dict[str, Any]], query: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The lines whose text (colour codes left out) holds ``query`` (case-insensitive): the first ``limit`` of
    them, and how many there are in all."""
    wanted = query.casefold()
    found: list[dict[str, Any]] = []
    count = 0
    for number, line in enumerate(lines, 1):
        if wanted in _ANSI.sub("", line["x"]).casefold():
            count += 1
            if len(found) < limit:
                found.append({**line, "line": number})
    return found, count


def file_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every line of the file, read a chunk at a time."""
    offset = 0
    while True:
        lines, offset_after = after(path, offset, limit=2000)
        if not lines and offset_after == offset:
            return
        yield from lines
        offset = offset_after


def text_line(line: dict[str, Any], width: int) -> str:
    """A line as the download has it: ``chief-0 | text`` (the terminal's prefix, no colour codes)."""
    return f"{line['r'].ljust(width)} | {_ANSI.sub('', line['x'])}\n"
