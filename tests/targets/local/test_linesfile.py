"""A local job's ``lines.jsonl`` in bulk (issue 33): the supervisor writes a read of a pipe with one write, the
client reads the file a read at a time in runs. Both are checked against the rule they replace, one JSON object
per line (``json.dumps``/``json.loads``), on lines that have everything to escape, and on files written otherwise."""

from __future__ import annotations

import io
import json
import random
import selectors

import pytest

from tfcloud.backends.base import BatchedLogs, LogLine
from tfcloud.replicas import linepump
from tfcloud.targets.local.linesfile import parse_runs

#: Lines with what JSON escapes, what it does not, and what a split at quotes or newlines could be misled by.
TRICKY = [b"plain", b"", b'he said "hi"', b"back\\slash", b"tab\there", b"progress\r", b"\x1b[31mred\x1b[0m",
          "caf\u00e9 \u20ac \u2028 \U0001f600".encode(), b"bad utf-8 \xff\xfe", b'", "', b'"}', b'{"t": 1, "r": "x"}',
          b"x" * 5000, b"\x00\x07\x08\x0b\x0c"]


class _Replica:
    name = "chief-0"
    log = io.BytesIO()


class _Pipe:
    def __init__(self, replica: str = "chief-0", stream: str = "stdout") -> None:
        self.replica = _Replica()
        self.replica.name = replica
        self.stream = stream
        self.names = linepump.names(replica, stream)


def _written(*reads: tuple[_Pipe, bytes]) -> bytes:
    """What the supervisor writes to lines.jsonl for these reads (each: whole lines joined by newlines; the
    supervisor takes them with the newline that ends the last)."""
    lines = io.BytesIO()
    pump = linepump.LinePump(lines, selectors.DefaultSelector())
    for pipe, raw in reads:
        pump.emit(pipe, raw + b"\n")  # type: ignore[arg-type]
    return lines.getvalue()


def _one_by_one(data: bytes) -> list[LogLine]:
    """The rule the bulk reading replaces: each line of the file through json.loads."""
    lines = []
    for raw in data.split(b"\n"):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        lines.append(LogLine(replica=record["r"], text=record["x"], stream=record["s"], timestamp=record["t"]))
    return lines


def _read(data: bytes) -> list[LogLine]:
    return [LogLine(replica=replica, text=text, stream=stream, timestamp=when)
            for replica, stream, when, texts in parse_runs(data) for text in texts]


def test_the_supervisor_writes_each_line_as_json_dumps_would() -> None:
    for raw in TRICKY:
        data = _written((_Pipe(), raw))
        [record] = [json.loads(line) for line in data.split(b"\n")[:-1]]
        assert list(record) == ["t", "r", "s", "x"]
        assert record["x"] == raw.decode("utf-8", errors="replace").rstrip("\r"), raw
    # A read of many lines: one record each, in order, whatever each holds.
    joined = b"\n".join(TRICKY)
    records = [json.loads(line) for line in _written((_Pipe(), joined)).split(b"\n")[:-1]]
    assert [r["x"] for r in records] == [t.decode("utf-8", errors="replace").rstrip("\r") for t in TRICKY]


def test_random_reads_round_trip_in_order() -> None:
    rng = random.Random(33)
    alphabet = b'ab"\\\n\r\t\x00\x1b\xc3\xa9\xff ,}{:x'
    pipes = [_Pipe("chief-0"), _Pipe("chief-0", "stderr"), _Pipe("worker-1")]
    for _ in range(300):
        reads = []
        for _ in range(rng.randint(1, 6)):
            size = rng.choice((5, 40, 600))
            reads.append((rng.choice(pipes), bytes(rng.choice(alphabet) for _ in range(rng.randint(0, size)))))
        data = _written(*reads)
        assert _read(data) == _one_by_one(data)


@pytest.mark.parametrize("width", [40, 2048])
def test_runs_are_the_reads_of_a_pipe(width: int) -> None:
    """Every line of one read shares its head: a batch; the next read (another time or pipe) starts another,
    even when a later read has the same head as an earlier one (two reads in the same millisecond)."""
    text = b"\n".join(b"%08d " % i + b"x" * (width - 9) for i in range(50))
    stdout, stderr = _Pipe(), _Pipe("chief-0", "stderr")
    data = _written((stdout, text), (stderr, b"oops"), (stdout, text))
    runs = parse_runs(data)
    assert [(stream, len(texts)) for _, stream, _, texts in runs] == [("stdout", 50), ("stderr", 1), ("stdout", 50)]
    assert _read(data) == _one_by_one(data)


def test_a_file_written_otherwise_is_read_as_json() -> None:
    """Records in another key order, with extra keys, spaces, or a torn line: the same lines as json.loads gives
    (a torn line is left out)."""
    data = (b'{"x": "a", "r": "chief-0", "s": "stdout", "t": 1.5}\n'
            b'{"t": 2, "r": "chief-0", "s": "stdout", "x": "b", "extra": "c"}\n'
            b'{"t": 3, "r": "chief-0", "s": "stdout", "x": "c"}\n'
            b'{"t": 3, "r": "chief-0", "s": "stdout", "x": "torn\n'
            b'{"t":4,"r":"chief-0","s":"stdout","x":"d"}\n')
    assert [line.text for line in _read(data)] == ["a", "b", "c", "d"]
    long = b'{"t": 1.0, "r": "chief-0", "s": "stdout", "x": "' + b"y" * 500 + b'", "more": 1}\n'
    assert [line.text for line in _read(long * 3)] == ["y" * 500] * 3


def test_a_local_job_hands_its_lines_in_batches(tmp_path: object) -> None:
    from tfcloud.targets.local.backend import LocalJob

    assert issubclass(LocalJob, BatchedLogs)
