"""A job's training curves for the dashboard: the scalars in its TensorBoard log directory, read without TensorFlow.

A job writes TensorBoard event files under ``AIP_TENSORBOARD_LOG_DIR`` (``<output dir>/logs``: Keras's
``TensorBoard`` callback, ``tf.summary.scalar``). An event file is a sequence of TFRecords (a little-endian
uint64 length, its masked CRC, the bytes, their masked CRC) each holding an ``Event`` protocol buffer
(``tensorflow/core/util/event.proto``): ``wall_time`` (1, double), ``step`` (2, int64), ``summary`` (5) whose
``value``\\s (1) carry a ``tag`` (1) and either ``simple_value`` (2, float; TF1) or a ``tensor`` (8,
``tensorflow/core/framework/tensor.proto``: ``dtype`` 1, ``tensor_content`` 4, ``float_val`` 5,
``double_val`` 6, ``int64_val`` 10) holding one number (TF2). Only those fields are decoded; a record that is
cut short (being written) is read again next time.

:class:`Curves` keeps, per file, the offset read so far: each poll reads only what was added. A series keeps
at most :data:`MAX_POINTS` points (every other one is dropped when it is full).
"""

from __future__ import annotations

import struct
import threading
from pathlib import Path
from typing import Any

__all__ = ["MAX_FILES", "MAX_POINTS", "Curves", "decode_event"]

#: The most points kept per series.
MAX_POINTS = 2000
#: The most event files read per job.
MAX_FILES = 64
_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_INT64, _DT_HALF = 1, 2, 3, 9, 19


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of a message: ints for varints, bytes otherwise."""
    found = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        found.append((number, wire, value))
    return found


def _tensor_number(data: bytes) -> float | None:
    dtype, content, floats, doubles, ints = _DT_FLOAT, b"", b"", b"", []
    for number, wire, value in _fields(data):
        if number == 1 and wire == 0:
            dtype = value
        elif number == 4 and wire == 2:
            content = value
        elif number == 5:
            floats += value  # packed (2) or one (5): four bytes each either way
        elif number == 6:
            doubles += value
        elif number == 10 and wire == 0:
            ints.append(value)
    if content:
        formats = {_DT_FLOAT: "<f", _DT_DOUBLE: "<d", _DT_INT32: "<i", _DT_INT64: "<q", _DT_HALF: "<e"}
        form = formats.get(dtype)
        if form is None or len(content) != struct.calcsize(form):
            return None
        return float(struct.unpack(form, content)[0])
    if floats[:4]:
        return float(struct.unpack("<f", floats[:4])[0])
    if doubles[:8]:
        return float(struct.unpack("<d", doubles[:8])[0])
    return float(ints[0]) if ints else None


def decode_event(record: bytes) -> list[tuple[str, int, float, float]]:
    """The scalars of one serialized ``Event``: (tag, step, value, wall time) each."""
    wall, step, values = 0.0, 0, []
    for number, wire, value in _fields(record):
        if number == 1 and wire == 1:
            wall = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            step = value
        elif number == 5 and wire == 2:
            for vnum, vwire, item in _fields(value):
                if vnum != 1 or vwire != 2:
                    continue
                tag, scalar = None, None
                for inum, iwire, part in _fields(item):
                    if inum == 1 and iwire == 2:
                        tag = part.decode("utf-8", "replace")
                    elif inum == 2 and iwire == 5:
                        scalar = float(struct.unpack("<f", part)[0])
                    elif inum == 8 and iwire == 2:
                        scalar = _tensor_number(part)
                if tag is not None and scalar is not None:
                    values.append((tag, step, scalar))
    return [(tag, s, v, wall) for tag, s, v in values]


class Curves:
    """The scalars under one job's TensorBoard log directory, read incrementally (see the module)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.series: dict[str, list[tuple[int, float, float]]] = {}
        self._offsets: dict[Path, int] = {}
        self._lock = threading.Lock()

    def read(self) -> dict[str, list[tuple[int, float, float]]]:
        """Every series so far (``run/tag`` → [(step, value, wall time)]), after reading what was added."""
        with self._lock:
            try:
                files = sorted(p for p in self.log_dir.rglob("*tfevents*") if p.is_file())[:MAX_FILES]
            except OSError:
                files = []
            for path in files:
                self._read_file(path)
            return {name: list(points) for name, points in sorted(self.series.items())}

    def _read_file(self, path: Path) -> None:
        run = path.parent.relative_to(self.log_dir).as_posix()
        offset = self._offsets.get(path, 0)
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                while True:
                    head = f.read(12)
                    if len(head) < 12:
                        break
                    (size,) = struct.unpack("<Q", head[:8])
                    body = f.read(size + 4)
                    if len(body) < size + 4:
                        break
                    offset += 12 + size + 4
                    try:
                        scalars = decode_event(body[:size])
                    except (ValueError, IndexError, struct.error):
                        continue
                    for tag, step, value, wall in scalars:
                        self._add(tag if run == "." else f"{run}/{tag}", (step, value, wall))
        except OSError:
            return
        self._offsets[path] = offset

    def _add(self, name: str, point: tuple[int, float, float]) -> None:
        points = self.series.setdefault(name, [])
        points.append(point)
        if len(points) > MAX_POINTS:
            del points[1:-1:2]
