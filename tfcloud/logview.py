"""Log lines for people: the one place that prints a job's :class:`~tfcloud.backends.base.LogLine` s.

Each replica gets a prefix (``chief-0 | ``, aligned to the longest replica name) and a colour that depends
only on its name, so ``chief-0`` looks the same in every run and in every backend. The replica's own text is
printed as is (never read as rich markup). :func:`tail` and :func:`format_tail` give a replica's last lines
for failure messages.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.backends.base import LogLine

__all__ = ["LogPrinter", "format_tail", "last_lines", "print_lines", "replica_color", "tail"]

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
    colour)."""
    role, _, index = replica.rpartition("-")
    if not role or not index.isdigit():
        role, index = replica, "0"
    palette = _ROLE_COLORS.get(role, _OTHER_COLORS)
    return palette[int(index) % len(palette)]


class LogPrinter:
    """Prints log lines with a coloured, aligned ``replica | `` prefix on one rich console."""

    def __init__(self, console: Console | None = None, *, replicas: Sequence[str] = ()) -> None:
        if console is None:
            from rich.console import Console

            console = Console(highlight=False, soft_wrap=True)
        self.console = console
        self._width = max((len(r) for r in replicas), default=0)

    def print(self, line: LogLine) -> None:
        from rich.text import Text

        self._width = max(self._width, len(line.replica))
        text = Text(f"{line.replica:<{self._width}} | ", style=replica_color(line.replica))
        text.append(line.text)
        self.console.print(text, soft_wrap=True, highlight=False, markup=False, emoji=False)


def print_lines(lines: Iterable[LogLine], console: Console | None = None, *,
                replicas: Sequence[str] = ()) -> None:
    """Print every line of ``lines`` as it arrives (``lines`` may be a follow stream)."""
    printer = LogPrinter(console, replicas=replicas)
    for line in lines:
        printer.print(line)


def tail(lines: Iterable[LogLine], n: int = 20, *, replica: str | None = None) -> list[LogLine]:
    """The last ``n`` lines of ``lines`` (of one replica when ``replica`` is given)."""
    kept: collections.deque[LogLine] = collections.deque(maxlen=max(n, 0))
    for line in lines:
        if replica is None or line.replica == replica:
            kept.append(line)
    return list(kept)


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


def format_tail(replica: str, lines: Sequence[str]) -> str:
    """``lines`` as a block for an error message: a heading, then each line with the replica's prefix."""
    if not lines:
        return f"{replica} printed nothing."
    body = "\n".join(f"  {replica} | {line}" for line in lines)
    return f"Last {len(lines)} line{'s' if len(lines) != 1 else ''} of {replica}:\n{body}"
