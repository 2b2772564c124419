"""Reading a local job's ``lines.jsonl`` in bulk: a read of the file (up to a MiB) becomes a few
:class:`~tfcloud.backends.base.LogBatch` es, with a handful of calls into C per read rather than a JSON parse and
an object per line.

The supervisor (:mod:`tfcloud.cluster.supervisor`) writes one JSON object per line, ``{"t": T, "r": R, "s": S,
"x": TEXT}``, and every line of one read of a replica's pipe shares ``t``, ``r`` and ``s``: its records begin
with the same text up to ``"x": "``. :func:`parse_batches` splits a read at the records' ends (a raw newline is
never inside a JSON string), reads each run's first record's head, takes the run's texts as they are (a text with
no backslash has nothing to unescape), and decodes only the texts that hold an escape. Anything else (a record
written otherwise, a torn write) sends the read through :mod:`json`, as a whole and then line by line.
"""

from __future__ import annotations

import itertools
import json
import operator
import re

from tfcloud.backends.base import LogBatch, LogLine

__all__ = ["parse_batches", "regroup"]

_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
#: The head of a record as the supervisor writes it: its time, replica and stream (names without escapes).
_HEAD = re.compile(rf'\{{"t": {_NUMBER}, "r": "([^"\\]*)", "s": "([^"\\]*)", "x": "')
_END = '"}\n'
#: Records longer than this (the read's first) are read record by record (:func:`_clean_runs`: one string a
#: record); shorter ones are split at once and cut in C (:func:`_runs`: two strings a record, fewer calls).
_LONG = 200


def parse_batches(data: bytes) -> list[LogBatch]:
    """The lines of ``data`` (whole lines of ``lines.jsonl``), as batches of consecutive lines that share a
    replica, a stream and a time, in order. A line that is not a record (a torn write) is left out."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    escapes = "\\" in text
    found = _clean_runs(text) if not escapes and text.find("\n") > _LONG else None
    if found is None:
        records = text.split(_END)
        if records.pop() == "":  # data ends with a record's end, as whole lines of the supervisor's do
            found = _runs(records, escapes=escapes)
    return found if found is not None else regroup(_parse_lines(data.split(b"\n")))


def _clean_runs(text: str) -> list[LogBatch] | None:
    """The records of ``text`` (no backslash in it: no text holds a quote or an escape), record after record with
    a few calls into C each and one string made (its text): a run's head is matched once, then each next record is
    checked to begin with it, and its text ends at the next quote, which must close the record. None when the
    records are not all as the supervisor writes them."""
    batches: list[LogBatch] = []
    find, startswith, size = text.find, text.startswith, len(text)
    pos = 0
    while pos < size:
        head = _HEAD.match(text, pos)
        if head is None or "\n" in head.group():
            return None
        start = head.group()
        texts: list[str] = []
        append = texts.append
        pos = head.end()
        while True:
            end = find('"', pos)
            if end < 0 or not startswith(_END, end):
                return None
            append(text[pos:end])
            pos = end + 3
            if not startswith(start, pos):
                break
            pos += len(start)
        batches.append(LogBatch(replica=head[2], texts=texts, stream=head[3], timestamp=float(head[1])))
    return batches


def _runs(records: list[str], *, escapes: bool) -> list[LogBatch] | None:
    """``records`` (each without its ``"}`` end) grouped by their head; None when one is not as the supervisor
    writes them. ``escapes``: some record holds a backslash (without, a text is taken as it is, once it is
    checked to hold no quote, with one search for a run)."""
    batches: list[LogBatch] = []
    i, n = 0, len(records)
    while i < n:
        head = _HEAD.match(records[i])
        if head is None:
            return None
        start = head.group()
        j = _run_end(records, i, start)
        texts = list(map(operator.itemgetter(slice(len(start), None)), records[i:j]))
        if escapes:
            unescaped = [_unescape(t) if "\\" in t or '"' in t else t for t in texts]
            if None in unescaped:
                return None
            texts = unescaped  # type: ignore[assignment]
        elif '"' in "".join(texts):  # a record with more than a text after its head
            return None
        batches.append(LogBatch(replica=head[2], texts=texts, stream=head[3], timestamp=float(head[1])))
        i = j
    return batches


def _run_end(records: list[str], i: int, start: str) -> int:
    """The end of the run of records from ``i`` on that begin with ``start`` (``records[i]`` does): found by
    galloping and halving (a run is one read of a pipe: hundreds of records), then checked with one call a record
    in C; a run that is not one block is walked record by record."""
    n = len(records)
    low, step = i, 1
    while low + step < n and records[low + step].startswith(start):
        low, step = low + step, step * 2
    high = min(low + step, n)
    while high - low > 1:  # records[low] begins with start; records[high] does not (or is the end)
        middle = (low + high) // 2
        if records[middle].startswith(start):
            low = middle
        else:
            high = middle
    if all(map(str.startswith, records[i:high], itertools.repeat(start))):
        return high
    j = i + 1
    while j < n and records[j].startswith(start):
        j += 1
    return j


def _unescape(text: str) -> str | None:
    """A JSON string's body, decoded; None when it is not one (a quote that ends it early: another record's shape)."""
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def regroup(lines: list[LogLine]) -> list[LogBatch]:
    """``lines`` as batches of consecutive lines with the same replica, stream and time."""
    batches: list[LogBatch] = []
    texts: list[str] = []
    key: tuple[str, str, float | None] | None = None
    for line in lines:
        this = (line.replica, line.stream, line.timestamp)
        if this != key:
            if key is not None:
                batches.append(LogBatch(replica=key[0], texts=texts, stream=key[1], timestamp=key[2]))
            key, texts = this, []
        texts.append(line.text)
    if key is not None:
        batches.append(LogBatch(replica=key[0], texts=texts, stream=key[1], timestamp=key[2]))
    return batches


def _parse_lines(chunks: list[bytes]) -> list[LogLine]:
    """The lines of ``chunks`` (lines of lines.jsonl), decoded as one JSON array: one call into the C parser for a
    whole read, not one per line. A batch with a line that is not JSON (a torn write) goes line by line."""
    chunks = [c for c in chunks if c.strip()]
    if not chunks:
        return []
    try:
        records = json.loads(b"[" + b",".join(chunks) + b"]")
    except ValueError:
        return [line for line in map(_parse_line, chunks) if line is not None]
    try:
        return [LogLine(replica=str(d["r"]), text=str(d["x"]), stream=str(d.get("s", "stdout")), timestamp=d.get("t"))
                for d in records]
    except (KeyError, TypeError, AttributeError):
        return [line for line in map(_parse_line, chunks) if line is not None]


def _parse_line(raw: bytes) -> LogLine | None:
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))  # str: json skips guessing the encoding
    except ValueError:
        return None
    if not isinstance(data, dict) or "r" not in data or "x" not in data:
        return None
    return LogLine(replica=str(data["r"]), text=str(data["x"]), stream=str(data.get("s", "stdout")),
                   timestamp=data.get("t"))
