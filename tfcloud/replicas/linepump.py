"""How the local supervisor (:mod:`tfcloud.replicas.supervisor`) pumps a replica's stdout and stderr into the job's
files: the bytes as printed into ``logs/<replica>.log``, and each line as one JSON object into ``lines.jsonl``
(``{"t": TIME, "r": REPLICA, "s": STREAM, "x": TEXT}``; the lines of one read of a pipe share their time).

It holds no secret values and needs none: a replica with secrets masks them itself, on the bytes its processes
write to fds 1 and 2, before they reach a pipe read here (:mod:`tfcloud.replicas.masking`, in the launcher).

Like the supervisor it uses the standard library only: the supervisor runs by path and imports it from its own
directory. docs/local.md ("Heavy output") says how a line travels and what that costs.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import IO, TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import selectors

__all__ = ["SMALL_READ", "LinePump", "Pipe", "names", "stderr_last", "widen"]

_MAX_PARTIAL = 64 * 1024
#: A read of a pipe: a quarter of a replica's stdout pipe, which is widened to :data:`_STDOUT_PIPE_BYTES` (where
#: the system lets it): a replica printing 2 kB lines waits on a full pipe after 500 of them, not 30, and a read
#: takes hundreds of lines (and their processing stays in the processor's cache). ``_read`` empties the pipe,
#: stdout before stderr: what a replica printed to stdout before a line to stderr comes before it (as with the
#: kernel's 64 KiB pipes, where the replica waits for the supervisor; tests/targets/local/test_local.py).
_READ_BYTES = 256 * 1024
_STDOUT_PIPE_BYTES = 1024 * 1024
#: The bytes JSON takes as they are in a string (all but ``"``, ``\\`` and control characters), and the newline
#: that splits lines: ``not raw.translate(None, _PLAIN)`` (``raw`` without them is empty) says ``raw``'s lines go
#: into lines.jsonl as they are.
_PLAIN = bytes(b for b in range(256) if (b >= 0x20 and b not in (0x22, 0x5C)) or b == 0x0A)
SMALL_READ = 16 * 1024
_GATHER_S = 0.002


def names(replica: str, stream: str) -> bytes:
    """A record of ``lines.jsonl`` between its time and its text: ``, "r": ..., "s": ..., "x": ``."""
    return f', "r": {json.dumps(replica, ensure_ascii=False)}, "s": {json.dumps(stream)}, "x": '.encode()


def _head(names: bytes) -> bytes:
    """A record up to its text, as json.dumps writes it, the time now: made once for a read's lines."""
    return b'{"t": ' + repr(round(time.time(), 3)).encode() + names


def widen(fd: int) -> None:
    """Make the pipe ``fd`` hold :data:`_STDOUT_PIPE_BYTES` (Linux's ``F_SETPIPE_SZ``); where the system refuses
    (``/proc/sys/fs/pipe-max-size``, a user's pipe pages spent) or has no such call, it keeps its size."""
    import fcntl

    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setting is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setting, _STDOUT_PIPE_BYTES)


def _queued(fd: int) -> int:
    """How many bytes wait in the pipe ``fd`` (FIONREAD); where that cannot be told, as if it were full."""
    import fcntl
    import termios

    try:
        return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder, signed=True)
    except (OSError, AttributeError):
        return SMALL_READ


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def stderr_last(pipe: Pipe) -> bool:
    return pipe.stream == "stderr"


class Source(Protocol):
    """The replica a pipe belongs to: its name and its log file (open while it runs)."""

    name: str
    log: IO[bytes] | None


class Pipe:
    """One output stream of one replica: splits bytes into lines."""

    def __init__(self, replica: Source, stream: str, fileobj: IO[bytes]) -> None:
        self.replica = replica
        self.stream = stream
        self.fileobj = fileobj
        self.partial = b""
        self.eof = False
        self.names = names(replica.name, stream)


class LinePump:
    """What the supervisor does with its replicas' pipes (it holds one): reads them (:meth:`drain`, stdout
    before stderr: :func:`stderr_last`), lets small reads gather (:meth:`gather`) and writes their lines
    (:meth:`emit`) to ``lines``, the job's ``lines.jsonl``, and their bytes to each replica's log file.
    ``selector``: where the pipes are registered (a pipe that ends is unregistered here). :attr:`dirty`: something
    was written since the owner last flushed (it resets it)."""

    def __init__(self, lines: IO[bytes], selector: selectors.BaseSelector) -> None:
        self.lines = lines
        self.selector = selector
        self.dirty = False

    def line(self, replica: str, stream: str, text: str) -> None:
        """One line of tfcloud's own (a restart) into ``lines.jsonl``."""
        self.lines.write(_head(names(replica, stream)) + json.dumps(text, ensure_ascii=False).encode() + b"}\n")
        self.dirty = True

    def emit(self, pipe: Pipe, raw: bytes) -> None:
        """The lines of ``raw`` (whole lines, each ending with its newline) into ``lines.jsonl``, a JSON object
        each: copied as they are when nothing needs escaping (nearly always: one ``translate`` to tell, one
        ``replace`` to make the records, no other copy), else through one ``json.dumps`` (a trailing carriage
        return dropped; bytes that are not UTF-8 become U+FFFD)."""
        head = _head(pipe.names)
        if not raw.translate(None, _PLAIN) and (raw.isascii() or _is_utf8(raw)):
            # 'a\nb\n' -> '{head}"a"}\n{head}"b"}\n{head}"': written without its last head.
            records = raw.replace(b"\n", b'"}\n' + head + b'"')
            self.lines.write(head + b'"')
            self.lines.write(memoryview(records)[:len(records) - len(head) - 1])
        else:
            texts = raw.decode("utf-8", errors="replace").split("\n")
            texts.pop()  # after the last newline
            if b"\r" in raw:
                texts = [text.rstrip("\r") for text in texts]
            # '["a"\n"b"]': a JSON string never holds a raw newline, so it only separates two items.
            items = json.dumps(texts, ensure_ascii=False, separators=("\n", ": "))[1:-1].encode()
            self.lines.write(b"".join((head, items.replace(b"\n", b"}\n" + head), b"}\n")))
        self.dirty = True

    def drain(self, pipe: Pipe) -> int:
        """Read ``pipe`` until it is empty (or ends): the bytes read."""
        total = 0
        while True:
            got = self.read(pipe)
            total += got
            if got < _READ_BYTES:
                return total

    def read(self, pipe: Pipe) -> int:
        """Read what ``pipe`` holds (:data:`_READ_BYTES` at most): the bytes read. Its whole lines go to
        ``lines.jsonl`` at once; the rest waits for the next read (or EOF, or to be longer than
        :data:`_MAX_PARTIAL`)."""
        try:
            data = os.read(pipe.fileobj.fileno(), _READ_BYTES)
        except BlockingIOError:
            return 0
        except OSError:
            data = b""
        if not data:
            pipe.eof = True
            self.selector.unregister(pipe.fileobj)
            pipe.fileobj.close()
            if pipe.partial:
                self.emit(pipe, pipe.partial + b"\n")
                assert pipe.replica.log is not None
                pipe.replica.log.write(b"\n")
                pipe.partial = b""
            return 0
        assert pipe.replica.log is not None
        pipe.replica.log.write(data)
        self.dirty = True
        cut = data.rfind(b"\n") + 1
        if not cut:
            pipe.partial += data
        elif cut == len(data) and not pipe.partial:  # whole lines (nearly always): no copy
            self.emit(pipe, data)
            pipe.partial = b""
        else:
            self.emit(pipe, pipe.partial + data[:cut] if pipe.partial else data[:cut])
            pipe.partial = data[cut:]
        if len(pipe.partial) > _MAX_PARTIAL:
            self.emit(pipe, pipe.partial + b"\n")
            pipe.partial = b""
        return len(data)

    def gather(self) -> None:
        """Wait up to :data:`_GATHER_S` for lines to gather (a replica prints a line at a time), less once a pipe
        holds :data:`SMALL_READ` (a stderr pipe keeps the kernel's 64 KiB: a replica printing 2 kB lines to it
        would soon wait on a full one)."""
        deadline = time.monotonic() + _GATHER_S
        fds = [key.fd for key in self.selector.get_map().values()]
        while True:
            time.sleep(_GATHER_S / 20)
            if time.monotonic() >= deadline or any(_queued(fd) >= SMALL_READ for fd in fds):
                return
