"""Secret values masked on a byte stream: what a replica's launcher does to every byte its process tree writes to
file descriptors 1 and 2 (``templates/launcher.py.j2`` carries a copy of this module: a replica may have no
tfcloud to import, so it uses the standard library only, no ``from __future__`` import, and starts nothing when
imported).

:class:`ByteMasker` masks a stream fed in pieces of any size exactly as if it had the whole stream at once: each
value (:data:`MIN_LENGTH` bytes or more) becomes :data:`MASK`, the longest value first where several start at one
place. It writes everything at once except a tail that may be the beginning of a value (shorter than the longest
value), so a value split over writes, written byte by byte or on a line of any length is masked, and a line
without a value is not held back. :func:`route_output` sends fds 1 and 2 through one each: a pipe in their place
(inherited by every process this one starts) and a thread that masks what comes out of it onto the original.
docs/data.md ("Secrets") says what is and is not masked.
"""

import atexit
import contextlib
import os
import re
import select
import sys
import threading
import time
from collections.abc import Iterable

__all__ = ["MASK", "MIN_LENGTH", "ByteMasker", "Router", "route_output"]

#: What a value becomes.
MASK = b"****"
#: Shorter values are not masked: they would mask ordinary text.
MIN_LENGTH = 4
_READ_BYTES = 64 * 1024
#: At exit: how long to wait for the pipes to empty (a process the replica started may still write).
_DRAIN_S = 5.0


class ByteMasker:
    """Masks ``values`` in a stream fed by :meth:`feed` and ended by :meth:`flush`."""

    def __init__(self, values: Iterable[bytes]) -> None:
        self.values = sorted({v for v in values if len(v) >= MIN_LENGTH}, key=lambda v: (-len(v), v))
        self.pattern = re.compile(b"|".join(re.escape(v) for v in self.values)) if self.values else None
        self.pending = b""

    def feed(self, data: bytes) -> bytes:
        """The masked bytes that may be written now: all that was fed but a tail that may begin a value."""
        if self.pattern is None:
            return data
        raw = self.pending + data
        hold = self._hold(raw)
        out: list[bytes] = []
        done = 0
        for match in self.pattern.finditer(raw):
            if match.start() >= hold:  # a longer value may start here: the next bytes tell
                break
            out += (raw[done : match.start()], MASK)
            done = match.end()
        if done < hold:
            out.append(raw[done:hold])
            done = hold
        self.pending = raw[done:]
        return b"".join(out)

    def flush(self) -> bytes:
        """The stream ended: the masked tail."""
        tail, self.pending = self.pending, b""
        return self.pattern.sub(MASK, tail) if self.pattern is not None else tail

    def _hold(self, raw: bytes) -> int:
        """Where the tail of ``raw`` that may begin a value starts: the first ``i`` where ``raw[i:]`` is a proper
        prefix of a value (``len(raw)`` where none is). Before it, every match is final."""
        end = len(raw)
        hold = end
        last = raw[-1:]
        for value in self.values:
            size = min(len(value) - 1, end)  # the longest prefix of value that ends with raw's last byte
            while size > 0:
                size = value.rfind(last, 0, size) + 1
                if size and raw.endswith(value[:size]):
                    hold = min(hold, end - size)
                    break
                size -= 1
        return hold


class _Route:
    """One pipe: what the replica's processes write into it, masked onto ``target`` (the original fd)."""

    def __init__(self, read_fd: int, target: int, values: Iterable[bytes]) -> None:
        self.read_fd = read_fd
        self.target = target
        self.masker = ByteMasker(values)
        self.open = True
        self.broken = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and not self.broken:
            try:
                view = view[os.write(self.target, view) :]
            except BlockingIOError:
                select.select([], [self.target], [])
            except OSError:  # nobody reads the original any more: drop what comes, so no writer waits
                self.broken = True

    def pump(self) -> None:
        """Read what the pipe holds (until it is empty, or ends) and write it masked."""
        while True:
            try:
                data = os.read(self.read_fd, _READ_BYTES)
            except BlockingIOError:
                return
            if not data:
                self.write(self.masker.flush())
                self.open = False
                os.close(self.read_fd)
                return
            self.write(self.masker.feed(data))

    def queued(self) -> int:
        """The bytes that wait in the pipe (FIONREAD)."""
        import fcntl
        import termios

        return int.from_bytes(fcntl.ioctl(self.read_fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)


class Router:
    """fds 1 and 2 routed through masking pipes (:func:`route_output` makes one); :meth:`close` at exit."""

    def __init__(self, routes: list[_Route]) -> None:
        self.routes = routes
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="tfcloud-masking", daemon=True)

    def _run(self) -> None:
        while True:
            reading = [route for route in self.routes if route.open]
            if not reading:
                return
            select.select([route.read_fd for route in reading], [], [])
            with self.lock:  # stdout before stderr: what was printed to stdout before a line to stderr stays so
                for route in reading:
                    route.pump()

    def close(self) -> None:
        """Python's streams flushed, wait (:data:`_DRAIN_S` at most) until the pipes are read, and write the masked
        tails of the pipes that are empty. A pipe that still holds bytes at the deadline (its reader was slow, or a
        process the replica started still writes) keeps its tail: that tail may be the beginning of a value whose
        rest waits in the pipe, so it is masked with what follows it, or lost at exit, never written in clear. The
        pipes stay in place: what a daemon thread prints later is masked, or lost at exit. A forked child that
        exits through Python has no thread to wait for: it returns."""
        if os.getpid() != self.pid:
            return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        deadline = time.monotonic() + _DRAIN_S
        while True:
            with self.lock:
                routes = [route for route in self.routes if route.open]
                empty = [route for route in routes if route.queued() == 0]
                if time.monotonic() >= deadline or len(empty) == len(routes):
                    for route in empty:
                        route.write(route.masker.flush())
                    return
            time.sleep(0.005)


def route_output(values: Iterable[bytes], *, fds: tuple[int, int] = (1, 2)) -> Router:
    """Put a pipe in the place of ``fds`` (stdout and stderr: one pipe for both where they are one file, so their
    order is kept) and mask what comes out of it onto the originals, from a daemon thread; at exit the pipes are
    drained (:meth:`Router.close`, registered with atexit first, so it runs after the exit handlers the script
    registers)."""
    values = list(values)
    for fd in fds:
        try:
            os.fstat(fd)
        except OSError:  # closed: what is written there goes nowhere, as it would have
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    stats = [os.fstat(fd) for fd in fds]
    shared = (stats[0].st_dev, stats[0].st_ino) == (stats[1].st_dev, stats[1].st_ino)
    routes = []
    for fd in fds[:1] if shared else fds:
        read_fd, write_fd = os.pipe()
        target = os.dup(fd)  # not inherited: the processes the replica starts get the pipe
        os.dup2(write_fd, fd)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        routes.append(_Route(read_fd, target, values))
    if shared:
        os.dup2(fds[0], fds[1])
    router = Router(routes)
    router.thread.start()
    atexit.register(router.close)
    return router
