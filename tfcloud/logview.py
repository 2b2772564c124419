"""Log lines for people: the one place that prints a job's :class:`~tfcloud.backends.base.LogLine` s.

Each replica gets a prefix (``chief-0 | ``, aligned to the longest replica name) and a colour that depends
only on its name, so ``chief-0`` looks the same in every run and in every backend. The replica's own text is
printed as is (never read as rich markup). Known TensorFlow start-up noise (absl, oneDNN, CPU features,
CUDA probing on machines without a GPU, gRPC and coordination-service set-up, a TF1 session's device scan and
rendezvous cleanup: :data:`~tfcloud.noise.NOISE`) is left off the terminal unless asked for (``tfcloud -v``),
and out of a failure's last lines; the replicas' log files keep every line. :func:`last_lines` reads a log
file's last lines; :func:`~tfcloud.backends.base.tail` and :func:`~tfcloud.backends.base.format_tail` (kept
here under their old names too) give a replica's last lines for failure messages.
"""

from __future__ import annotations

import collections
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.backends.base import LogLine, format_tail, tail
from tfcloud.noise import NOISE, is_noise

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["NOISE", "LogPrinter", "format_tail", "format_time", "is_noise", "last_lines", "print_lines",
           "replica_color", "tail"]

_ROLE_COLORS: dict[str, tuple[str, ...]] = {
    "chief": ("bold cyan",),
    "worker": ("green", "magenta", "blue", "yellow", "bright_green", "bright_magenta", "bright_blue",
               "bright_yellow"),
    "ps": ("red", "bright_red"),
    "evaluator": ("bright_cyan",),
}
_OTHER_COLORS = ("white", "bright_white")


def replica_color(replica: str) -> str:
    """A stable rich colour for a replica name like ``worker-1`` (its role picks the palette, its index the
    colour; a study's trial's replica, ``3/worker-1``, as ``worker-1``)."""
    role, _, index = replica.rpartition("/")[2].rpartition("-")
    if not role or not index.isdigit():
        role, index = replica, "0"
    palette = _ROLE_COLORS.get(role, _OTHER_COLORS)
    return palette[int(index) % len(palette)]


class LogPrinter:
    """Prints log lines with a coloured, aligned ``replica | `` prefix on one rich console. ``replicas``: the
    job's replica names, so that the prefix has its final width from the first line. ``show_noise``: print
    known TensorFlow start-up noise too (:func:`is_noise`); ``hidden`` counts the lines left off.
    ``timestamps``: each line with the time it was printed (UTC, ISO 8601, after the prefix). ``json_lines``:
    one JSON object per line instead (``time``, ``replica``, ``text``, ``stream``; every line, noise too)."""

    def __init__(self, console: Console | None = None, *, replicas: Sequence[str] = (),
                 show_noise: bool = False, timestamps: bool = False, json_lines: bool = False) -> None:
        if console is None:
            from rich.console import Console

            console = Console(highlight=False, soft_wrap=True)
        self.console = console
        self.show_noise = show_noise or json_lines
        self.timestamps = timestamps
        self.json_lines = json_lines
        self.hidden = 0
        self._width = max((len(r) for r in replicas), default=0)
        self._shown: dict[str, collections.deque[str]] = {}

    def shown_tail(self, replica: str, n: int = 20) -> list[str]:
        """The last ``n`` (at most 20) lines of ``replica`` this printer printed: a failure message need not
        repeat them."""
        return list(self._shown.get(replica, ()))[-n:]

    def print(self, line: LogLine) -> None:
        from rich.text import Text

        if not self.show_noise and is_noise(line.text):
            self.hidden += 1
            return
        self._shown.setdefault(line.replica, collections.deque(maxlen=20)).append(line.text)
        if self.json_lines:
            self.console.file.write(json.dumps(line.to_dict(), ensure_ascii=False) + "\n")
            self.console.file.flush()
            return
        self._width = max(self._width, len(line.replica))
        text = Text(f"{line.replica:<{self._width}} | ", style=replica_color(line.replica))
        if self.timestamps:
            text.append(f"{format_time(line.timestamp)} ", style="dim")
        text.append(line.text)
        self.console.print(text, soft_wrap=True, highlight=False, markup=False, emoji=False)


def format_time(timestamp: float | None) -> str:
    """``2026-11-23T14:05:00.123Z`` (UTC, milliseconds; always 24 characters: dashes when unknown)."""
    if timestamp is None:
        return "-" * 24
    import datetime as dt

    when = dt.datetime.fromtimestamp(timestamp, dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def print_lines(lines: Iterable[LogLine], console: Console | None = None, *,
                replicas: Sequence[str] = (), show_noise: bool = False, timestamps: bool = False,
                json_lines: bool = False) -> None:
    """Print every line of ``lines`` as it arrives (``lines`` may be a follow stream), known start-up noise
    only with ``show_noise`` (:class:`LogPrinter` for ``timestamps`` and ``json_lines``)."""
    printer = LogPrinter(console, replicas=replicas, show_noise=show_noise, timestamps=timestamps,
                         json_lines=json_lines)
    for line in lines:
        printer.print(line)


def last_lines(path: Path, n: int = 20, *, block: int = 8192) -> list[str]:
    """The last ``n`` lines of a text file, read from its end (a log file can be large)."""
    if n <= 0:
        return []
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            data = b""
            pos = end
            while pos > 0 and data.count(b"\n") <= n:
                step = min(block, pos)
                pos -= step
                f.seek(pos)
                data = f.read(step) + data
    except FileNotFoundError:
        return []
    text = data.decode("utf-8", errors="replace")
    return text.splitlines()[-n:]
