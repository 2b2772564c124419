"""Log lines for people: the one place that prints a job's :class:`~tfcloud.backends.base.LogLine` s.

Each replica gets a prefix (``chief-0 | ``, aligned to the longest replica name) and a colour that depends
only on its name, so ``chief-0`` looks the same in every run and in every backend. The replica's own text is
printed as is (never read as rich markup). Known TensorFlow start-up noise (absl, oneDNN, CPU features,
CUDA probing on machines without a GPU, gRPC and coordination-service set-up, a TF1 session's device scan and
rendezvous cleanup: :data:`~tfcloud.view.noise.NOISE`) is left off the terminal unless asked for (``tfcloud -v``),
and out of a failure's last lines; the replicas' log files keep every line. :func:`last_lines` reads a log
file's last lines; :func:`~tfcloud.view.outcome.tail` and :func:`~tfcloud.view.outcome.format_tail` (kept
here under their old names too) give a replica's last lines for failure messages.
"""

from __future__ import annotations

import collections
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.backends.base import LogBatch, LogLine
from tfcloud.view.noise import NOISE, is_noise
from tfcloud.view.outcome import format_tail, tail

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["FOLD_LINES", "FOLD_WINDOW_S", "NOISE", "Folder", "LogPrinter", "fold", "fold_key", "fold_label",
           "format_tail", "format_time", "is_noise", "last_lines", "print_lines", "print_tail", "replica_color", "tail"]

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


#: The longest a line waits for the other replicas to print it too (seconds): a replica that starts a few
#: seconds late (TensorFlow's do) still folds. A line is shown sooner once every replica printed it, or printed
#: something after it. Which lines fold is decided by their text, never by when they were printed.
FOLD_WINDOW_S = 5.0
#: How many lines of one replica a line waits behind at most for the other replicas (the window of lines, per
#: replica, over which lines fold by their text).
FOLD_LINES = 1000
#: Lines are written in batches: at most this long after they came in (seconds), or this many at once.
_FLUSH_S = 0.05
_FLUSH_LINES = 512
_TEXT_BYTES = 64 * 1024
#: Characters rich's Text leaves out of a line (bell, backspace, vertical tab, form feed, carriage return).
_CONTROL = dict.fromkeys((7, 8, 11, 12, 13))
_CONTROL_CHARS = tuple(map(chr, _CONTROL))


class _Group:
    """Lines with the same text (but for numbers) from several replicas, shown as one (the first; ``replicas``:
    who printed it; ``seq``: how many lines its first replica had printed before it)."""

    __slots__ = ("arrived", "index", "key", "line", "replicas", "seq")

    def __init__(self, line: LogLine, key: str, index: int, seq: int, arrived: float) -> None:
        self.line = line
        self.key = key
        self.replicas = [line.replica]
        self.index = index
        self.seq = seq
        self.arrived = arrived


_DIGIT = re.compile(r"\d")


def fold_key(text: str, replica: str = "") -> str:
    """What of a line must match for it to fold with another replica's: its words, each word with a digit in it
    as a wildcard (as Ray's log deduplication reads them: ``loss: 0.1740 - 915ms/epoch`` and ``loss: 0.1741 -
    930ms/epoch`` fold), but for a word naming ``replica`` itself (``I am worker-1`` stays its own)."""
    if not _DIGIT.search(text):
        return text
    return " ".join("\0" if _DIGIT.search(word) and not (replica and replica in word) else word
                    for word in text.split(" "))


class Folder:
    """Folds the lines of a job's replicas into what reads as one program: a line joins the oldest waiting
    line of another replica with the same :func:`fold_key` that comes after the group of its own previous line
    (each replica's lines keep their order), whatever the time between them. A waiting line is let go, oldest
    first, once every replica printed it or something after it, once its replica printed :data:`FOLD_LINES`
    lines after it, or after ``wait`` seconds (:data:`FOLD_WINDOW_S`). ``replicas``: the job's replica names
    (pseudo-replicas without an index, Vertex AI's ``job`` or ``service``, are not waited for)."""

    def __init__(self, replicas: Sequence[str], *, wait: float = FOLD_WINDOW_S, lines: int = FOLD_LINES) -> None:
        self.names = sorted({r for r in replicas if r.rpartition("-")[2].isdigit()})
        self.wait = wait
        self.lines = lines
        self._pending: collections.deque[_Group] = collections.deque()
        self._open: dict[str, list[_Group]] = {}  # key -> its waiting groups, oldest first
        self._last: dict[tuple[str, str], int] = {}  # (replica, stream) -> the group its last line went to
        self._past: dict[str, int] = {}  # replica -> the newest group any of its lines went to
        self._seen: dict[str, int] = {}  # replica -> lines it printed
        self._index = 0

    def add(self, line: LogLine, now: float) -> None:
        """Fold ``line`` into a waiting group, or start one."""
        key = fold_key(line.text, line.replica)
        stream = (line.replica, line.stream)  # a replica's stdout and stderr come through two pipes: each in order
        after = self._last.get(stream, -1)
        seq = self._seen.get(line.replica, 0)
        self._seen[line.replica] = seq + 1
        for group in self._open.get(key, ()):
            if group.index > after and line.replica not in group.replicas:
                group.replicas.append(line.replica)
                self._went(stream, group.index)
                return
        group = _Group(line, key, self._index, seq, now)
        self._index += 1
        self._pending.append(group)
        self._open.setdefault(key, []).append(group)
        self._went(stream, group.index)

    def _went(self, stream: tuple[str, str], index: int) -> None:
        self._last[stream] = index
        self._past[stream[0]] = max(index, self._past.get(stream[0], -1))

    def _done(self, group: _Group, now: float) -> bool:
        return (now - group.arrived >= self.wait
                or self._seen[group.line.replica] - group.seq > self.lines
                or all(self._past.get(r, -1) > group.index for r in self.names if r not in group.replicas))

    def release(self, now: float, *, everything: bool = False) -> list[tuple[str, LogLine]]:
        """The lines done waiting, oldest first, each with its prefix's label (its replica, or ``N replicas``)."""
        out = []
        while self._pending and (everything or self._done(self._pending[0], now)):
            group = self._pending.popleft()
            same = self._open[group.key]
            same.remove(group)
            if not same:
                del self._open[group.key]
            out.append((group.replicas[0] if len(group.replicas) == 1 else fold_label(len(group.replicas)),
                        group.line))
        return out


def fold(lines: Iterable[LogLine], replicas: Sequence[str]) -> list[tuple[str, LogLine]]:
    """Every line of ``lines`` (all at hand: a finished job's) folded as :class:`Folder` folds them."""
    folder = Folder(replicas)
    for line in lines:
        folder.add(line, 0.0)
    return folder.release(0.0, everything=True)


class LogPrinter:
    """Prints log lines with a coloured, aligned ``replica | `` prefix on one rich console, in batches (one write
    per batch, not one rich call per line: rich costs ~105 µs a call). ``replicas``: the job's replica names, so
    that the prefix has its final width from the first line.

    What people see of a multi-replica job reads like one program: a line that several replicas print alike
    (the same words; words with digits in them may differ: :func:`fold_key`) is shown once, the first replica's,
    its prefix saying how many (``3 replicas | Epoch 1/5``), however late a replica starts (:class:`Folder`);
    lines that differ in a word are never folded, and each replica's own lines keep their order.
    ``all_replicas``: every line of every replica instead (``--all-replicas``, ``-v``).
    ``show_noise``: print known TensorFlow start-up noise and whole protobuf dumps too
    (:class:`~tfcloud.view.noise.LineFilter`); ``show_frames``: keep tfcloud's launcher and ``runpy`` frames in a
    traceback (``TFCLOUD_DEBUG=1``); ``hidden`` counts the lines left off. ``timestamps``: each line with the
    time it was printed (UTC, ISO 8601, after the prefix). ``json_lines``: one JSON object per line instead
    (``time``, ``replica``, ``text``, ``stream``; every line, noise too, nothing folded). ``through_rich``: print
    each batch with ``console.print`` (a console under a live display) instead of writing to its file; left
    None, a notebook's console gets one output that grows (:class:`NotebookLog`). Call :meth:`close` (or use it
    as a context manager) to print what is still waiting. ``last``: only the last ``last`` lines as they read
    (folded), written on :meth:`close` (``logs --tail N``; :attr:`kept` counts them)."""

    def __init__(self, console: Console | None = None, *, replicas: Sequence[str] = (),
                 show_noise: bool = False, timestamps: bool = False, json_lines: bool = False,
                 all_replicas: bool = False, show_frames: bool = False, window: float = FOLD_WINDOW_S,
                 through_rich: bool | None = None, last: int | None = None) -> None:
        import threading

        from tfcloud.view.noise import LineFilter

        if console is None:
            from rich.console import Console

            console = Console(highlight=False, soft_wrap=True)
        self.console = console
        self.show_noise = show_noise or json_lines
        self.timestamps = timestamps
        self.json_lines = json_lines
        self.hidden = 0
        self.window = window
        self.through_rich = bool(through_rich)
        #: In a notebook, one output that grows (a display updated in place), not an output per batch.
        self._notebook = NotebookLog() if through_rich is None and console.is_jupyter else None
        self._filter = LineFilter(show_noise=self.show_noise, show_frames=show_frames or json_lines)
        # Only replicas (role-index) print alike; pseudo-replicas (Vertex AI's "job", "service") never fold.
        self._replicas = len({r for r in replicas if r.rpartition("-")[2].isdigit()})
        self._fold = not (all_replicas or json_lines) and self._replicas > 1
        self._folder = Folder(replicas, wait=window) if self._fold else None
        names = [*replicas, fold_label(self._replicas)] if self._fold else list(replicas)
        self._width = max((len(r) for r in names), default=0)
        self._shown: dict[str, collections.deque[str]] = {}
        self.last = last
        #: With ``last``: the last lines (prefix label, line), written on close.
        self.kept: collections.deque[tuple[str, LogLine]] = collections.deque(maxlen=max(last or 0, 0))
        self._out: list[tuple[str, LogLine]] = []  # (prefix label, line) waiting to be written
        self._text: list[str] = []  # batches made into text, waiting to be written
        self._text_size = 0
        self._prefixes: dict[tuple[str, int], str] = {}
        self._lock = threading.RLock()
        self._timer: threading.Thread | None = None
        self._closed = threading.Event()

    def __enter__(self) -> LogPrinter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def shown_tail(self, replica: str, n: int = 20) -> list[str]:
        """The last ``n`` (at most 20) lines of ``replica`` this printer showed (folded ones too): a failure
        message need not repeat them."""
        return list(self._shown.get(replica, ()))[-n:]

    def print(self, line: LogLine) -> None:
        """Take one line: it is written with the next batch (at most :data:`_FLUSH_S` later, or, when several
        replicas may print it, once they did or :data:`FOLD_WINDOW_S` passed)."""
        with self._lock:
            if self._filter.hides(line.replica, line.text):
                self.hidden += 1
                return
            self._remember(line.replica, [line.text])
            self._queue(line)
            self._schedule()

    def _remember(self, replica: str, texts: list[str]) -> None:
        """Keep the last 20 of ``texts`` as what ``replica`` showed (:meth:`shown_tail`)."""
        shown = self._shown.get(replica)
        if shown is None:
            shown = self._shown[replica] = collections.deque(maxlen=20)
        shown.extend(texts[-20:])

    def _queue(self, line: LogLine) -> None:
        """``line`` waits to be written: to be folded with other replicas' same lines, or in turn."""
        if self._folder is not None:
            now = time.monotonic()
            self._folder.add(line, now)
            self._out.extend(self._folder.release(now))
        else:
            self._out.append((line.replica, line))

    def _schedule(self) -> None:
        """Write what waits once there is enough of it; else it is written every :data:`_FLUSH_S`."""
        if self.last is not None:
            self.kept.extend(self._out)  # written on close
            self._out = []
        elif len(self._out) >= _FLUSH_LINES:
            self._write()
        elif self._timer is None:
            self._start_timer()

    def print_batch(self, batch: LogBatch) -> None:
        """Take a batch of one replica's lines (:class:`~tfcloud.backends.base.LogBatch`, as a local job's are
        read): filtered with a few calls for the batch, and, unless they wait to be folded, made into text with
        one join, written with the batches that follow it in one write (64 KiB, or at most :data:`_FLUSH_S`
        later), never one call per line."""
        with self._lock:
            texts = self._filter.kept(batch.replica, list(batch.texts))
            self.hidden += len(batch.texts) - len(texts)
            if not texts:
                return
            self._remember(batch.replica, texts)
            if (self._fold or self.json_lines or self.through_rich or self._notebook is not None
                    or self.last is not None):
                for text in texts:
                    self._queue(LogLine(replica=batch.replica, text=text, stream=batch.stream,
                                        timestamp=batch.timestamp))
                self._schedule()
                return
            if self._out:
                self._write()  # lines that wait go first
            if self.console.quiet:
                return
            prefix = self._prefix(batch.replica)
            if self.timestamps:
                prefix += self._dim(format_time(batch.timestamp) + " ")
            # One join makes the whole text (the first line gets its prefix, the last its newline, beforehand):
            # no second copy of a batch that may be a few hundred kB.
            texts[0] = prefix + texts[0]
            texts[-1] += "\n"
            out = ("\n" + prefix).join(texts)
            if any(c in out for c in _CONTROL_CHARS):
                out = out.translate(_CONTROL)
            # Written with the batches after it (one read of a local job's lines is a few batches) once they
            # are 64 KiB, or by the thread that writes what waits (every _FLUSH_S), or on flush and close.
            self._text.append(out)
            self._text_size += len(out)
            if self._text_size >= _TEXT_BYTES:
                self._write()
            elif self._timer is None:
                self._start_timer()

    def flush(self) -> None:
        """Write every line taken so far, waiting ones too."""
        with self._lock:
            self.settle()
            if self.last is not None:
                self._out = [*self.kept, *self._out][-self.last:] if self.last > 0 else []
                self.kept.clear()
            self._write()

    def settle(self) -> None:
        """Let every line that waits to be folded go (to be written next, or kept with ``last``)."""
        with self._lock:
            if self._folder is not None:
                self._out.extend(self._folder.release(time.monotonic(), everything=True))
            if self.last is not None:
                self.kept.extend(self._out)
                self._out = []

    def close(self) -> None:
        """:meth:`flush`, and stop the thread that writes waiting lines while none come in."""
        self._closed.set()
        self.flush()

    def _start_timer(self) -> None:
        import threading

        self._timer = threading.Thread(target=self._tick, name="tfcloud-log-printer", daemon=True)
        self._timer.start()

    def _tick(self) -> None:
        """Write what waits while no new line comes in (a quiet job's last lines, a group whose window passed)."""
        while not self._closed.wait(_FLUSH_S):
            with self._lock:
                now = time.monotonic()
                if self._folder is not None:
                    self._out.extend(self._folder.release(now))
                if self.last is not None:
                    continue
                if self._out or self._text:
                    self._write()

    def _write(self) -> None:
        if self._text:  # batches' text, older than any line in _out
            text, self._text, self._text_size = "".join(self._text), [], 0
            self.console.file.write(text)
            self.console.file.flush()
        batch, self._out = self._out, []
        if not batch or self.console.quiet:
            return
        if self.json_lines:
            self.console.file.write("".join(json.dumps(line.to_dict(), ensure_ascii=False) + "\n"
                                            for _, line in batch))
            self.console.file.flush()
            return
        if self._notebook is not None:
            self._notebook.add([f"{label:<{self._width}} | {line.text.translate(_CONTROL)}" for label, line in batch])
            return
        if self.through_rich:
            self._print_rich(batch)
            return
        parts = []
        for label, line in batch:
            parts.append(self._prefix(label))
            if self.timestamps:
                parts.append(self._dim(format_time(line.timestamp) + " "))
            parts.append(line.text.translate(_CONTROL))
            parts.append("\n")
        self.console.file.write("".join(parts))
        self.console.file.flush()

    def _print_rich(self, batch: list[tuple[str, LogLine]]) -> None:
        from rich.text import Text

        text = Text()
        for i, (label, line) in enumerate(batch):
            if i:
                text.append("\n")
            self._width = max(self._width, len(label))
            text.append(f"{label:<{self._width}} | ", style=_label_color(label))
            if self.timestamps:
                text.append(f"{format_time(line.timestamp)} ", style="dim")
            text.append(line.text)
        self.console.print(text, soft_wrap=True, highlight=False, markup=False, emoji=False)

    def _prefix(self, label: str) -> str:
        """``label`` padded to the column's width, with ``| ``, in its colour (rendered once per label)."""
        self._width = max(self._width, len(label))
        key = (label, self._width)
        found = self._prefixes.get(key)
        if found is None:
            found = self._prefixes[key] = self._render(f"{label:<{self._width}} | ", _label_color(label))
        return found

    def _dim(self, text: str) -> str:
        return self._render(text, "dim")

    def _render(self, text: str, style: str) -> str:
        if not self.console.is_terminal or self.console.color_system is None or self.console.no_color:
            return text
        from rich.text import Text

        with self.console.capture() as captured:
            self.console.print(Text(text, style=style), end="", soft_wrap=True, highlight=False, markup=False)
        return captured.get()


class NotebookLog:
    """A job's lines in a notebook: one output area, updated in place as lines come (IPython's display with a
    ``display_id``), holding the last :attr:`keep` lines; the cell stays small however long the job talks, and
    says how many lines there were and where the rest are (``job.logs()``)."""

    keep = 200

    def __init__(self) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=self.keep)
        self.count = 0
        self._handle: object = None

    def add(self, lines: list[str]) -> None:
        from IPython.display import display

        self.lines.extend(lines)
        self.count += len(lines)
        bundle = self.bundle()
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)  # type: ignore[no-untyped-call]
        else:
            self._handle.update(bundle, raw=True)  # type: ignore[attr-defined]

    def bundle(self) -> dict[str, str]:
        """The output's text and HTML: the last lines, and a note when some are left out."""
        import html

        text = "\n".join(self.lines)
        note = ""
        if self.count > len(self.lines):
            note = (f"The last {len(self.lines):,} of {self.count:,} lines; job.logs() (or tfcloud logs JOB) has "
                    "every one.")
        body = (f"<pre style='max-height:24em;overflow:auto;margin:0'>{html.escape(text)}</pre>"
                + (f"<div><small>{html.escape(note)}</small></div>" if note else ""))
        return {"text/plain": (note + "\n" if note else "") + text, "text/html": body}


def fold_label(replicas: int) -> str:
    """The prefix of a line that ``replicas`` replicas printed alike (``3 replicas``)."""
    return f"{replicas} replicas"


def _label_color(label: str) -> str:
    return "dim" if label.endswith(" replicas") else replica_color(label)


def format_time(timestamp: float | None) -> str:
    """``2026-11-23T14:05:00.123Z`` (UTC, milliseconds; always 24 characters: dashes when unknown)."""
    if timestamp is None:
        return "-" * 24
    import datetime as dt

    when = dt.datetime.fromtimestamp(timestamp, dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def print_lines(lines: Iterable[LogLine], console: Console | None = None, *,
                replicas: Sequence[str] = (), show_noise: bool = False, timestamps: bool = False,
                json_lines: bool = False, all_replicas: bool = False, show_frames: bool = False) -> None:
    """Print every line of ``lines`` as it arrives (``lines`` may be a follow stream), known start-up noise
    only with ``show_noise`` (:class:`LogPrinter` for the rest)."""
    with LogPrinter(console, replicas=replicas, show_noise=show_noise, timestamps=timestamps,
                    json_lines=json_lines, all_replicas=all_replicas, show_frames=show_frames) as printer:
        for line in lines:
            printer.print(line)


def print_tail(fetch: Callable[[int], Iterable[LogLine]], n: int, console: Console | None = None, *,
               replicas: Sequence[str] = (), **options: Any) -> None:
    """Print the last ``n`` lines of a job as they read (folded, noise left off: ``logs --tail N``), not its last
    ``n`` lines as printed. ``fetch(k)``: the job's last ``k`` lines; asked for ``n`` a replica first, then for
    four times as many until the last ``n`` lines read the same twice running (a replica that printed late
    folds with lines before the first window) or the job has no more."""
    ask = max(n, 1) * max(len(replicas), 1)
    before: list[tuple[str, str]] | None = None
    while True:
        got = list(fetch(ask))
        printer = LogPrinter(console, replicas=replicas, last=n, **options)
        for line in got:
            printer.print(line)
        printer.settle()
        now = [(label, line.text) for label, line in printer.kept]
        if len(got) < ask or (now == before and len(now) >= n):
            printer.close()
            return
        before, ask = now, ask * 4


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
