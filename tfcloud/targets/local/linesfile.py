"""Reading a local job's ``lines.jsonl`` in bulk: a read of the file (128 KiB) becomes a few runs of lines (the
local backend makes each a :class:`~tfcloud.backends.base.LogBatch`), with a handful of calls into C per read and
per record rather than a JSON parse and an object per line. Imports nothing of tfcloud's.

The supervisor (:mod:`tfcloud.replicas.supervisor`) writes one JSON object per line, ``{"t": T, "r": R, "s": S,
"x": TEXT}``, and every line of one read of a replica's pipe shares ``t``, ``r`` and ``s``: its records begin
with the same text up to ``"x": "``. :func:`parse_runs` splits a read at the records' ends (a raw newline is
never inside a JSON string), reads each run's first record's head, takes the run's texts as they are (a text with
no backslash has nothing to unescape), and decodes only the texts that hold an escape. Anything else (a record
written otherwise, a torn write) sends the read through :mod:`json`, as a whole and then line by line.
"""

from __future__ import annotations

import itertools
import json
import operator
import re

__all__ = ["Run", "group", "parse_runs"]

#: Consecutive lines of one replica's stream read together: (replica, stream, time, texts).
Run = tuple[str, str, float | None, list[str]]
#: One line: (replica, stream, time, text).
_Line = tuple[str, str, float | None, str]

_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
#: The head of a record as the supervisor writes it: its time, replica and stream (names without escapes).
_HEAD = re.compile(rf'\{{"t": {_NUMBER}, "r": "([^"\\]*)", "s": "([^"\\]*)", "x": "')
_END = '"}\n'
#: Records longer than this (the read's first) are read record by record (:func:`_clean_runs`: one string a
#: record); shorter ones are split at once and cut in C (:func:`_runs`: two strings a record, fewer calls).
_LONG = 200


def parse_runs(data: bytes) -> list[Run]:
    """The lines of ``data`` (whole lines of ``lines.jsonl``), as runs of consecutive lines that share a replica,
    a stream and a time, in order. A line that is not a record (a torn write) is left out."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    escapes = "\\" in text
    found = _clean_runs(text) if not escapes and text.find("\n") > _LONG else None
    if found is None:
        records = text.split(_END)
        if records.pop() == "":  # data ends with a record's end, as whole lines of the supervisor's do
            found = _runs(records, escapes=escapes)
    return found if found is not None else group(_parse_lines(data.split(b"\n")))


def _clean_runs(text: str) -> list[Run] | None:
    """The records of ``text`` (no backslash in it: no text holds a quote or an escape), record after record with
    a few calls into C each and one string made (its text): a run's head is matched once, then each next record is
    checked to begin with it, and its text ends at the next quote, which must close the record. None when the
    records are not all as the supervisor writes them."""
    runs: list[Run] = []
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
        runs.append((head[2], head[3], float(head[1]), texts))
    return runs


def _runs(records: list[str], *, escapes: bool) -> list[Run] | None:
    """``records`` (each without its ``"}`` end) grouped by their head; None when one is not as the supervisor
    writes them. ``escapes``: some record holds a backslash (without, a text is taken as it is, once it is
    checked to hold no quote, with one search for a run)."""
    runs: list[Run] = []
    i, n = 0, len(records)
    while i < n:
        head = _HEAD.match(records[i])
        if head is None:
            return None
        start = head.group()
        j = _run_end(records, i, start)
        texts: list[str] = list(map(operator.itemgetter(slice(len(start), None)), records[i:j]))
        if escapes:
            unescaped = [_unescape(t) if "\\" in t or '"' in t else t for t in texts]
            if None in unescaped:
                return None
            texts = [t for t in unescaped if t is not None]
        elif '"' in "".join(texts):  # a record with more than a text after its head
            return None
        runs.append((head[2], head[3], float(head[1]), texts))
        i = j
    return runs


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


def group(lines: list[_Line]) -> list[Run]:
    """``lines`` as runs of consecutive lines with the same replica, stream and time."""
    runs: list[Run] = []
    for (replica, stream, when), same in itertools.groupby(lines, key=operator.itemgetter(0, 1, 2)):
        runs.append((replica, stream, when, [line[3] for line in same]))
    return runs


def _parse_lines(chunks: list[bytes]) -> list[_Line]:
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
        return [(str(d["r"]), str(d.get("s", "stdout")), d.get("t"), str(d["x"])) for d in records]
    except (KeyError, TypeError, AttributeError):
        return [line for line in map(_parse_line, chunks) if line is not None]


def _parse_line(raw: bytes) -> _Line | None:
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))  # str: json skips guessing the encoding
    except ValueError:
        return None
    if not isinstance(data, dict) or "r" not in data or "x" not in data:
        return None
    return str(data["r"]), str(data.get("s", "stdout")), data.get("t"), str(data["x"])
