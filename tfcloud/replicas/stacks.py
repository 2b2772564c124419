"""Every thread's Python stack of a running replica, as its launcher writes them on a signal.

The launcher (templates/launcher.py.j2) registers :mod:`faulthandler` for :data:`DUMP_SIGNAL` on the file that
:data:`STACKS_VAR` names, once it is ready (it writes the file under a temporary name and renames it: a replica
whose file is absent has no handler yet, and the signal would kill it). :func:`dump` sends the signal and reads
what the launcher appended. faulthandler writes from its C signal handler, so a replica wedged in native code that
holds the GIL still answers; a stopped one (SIGSTOP, a debugger) does not until it continues.

Standard library only: the supervisor imports it by path (its sibling), like :mod:`linepump`.
"""

from __future__ import annotations

import os
import signal
import time

#: The variable that tells a replica's launcher where to write its stacks.
STACKS_VAR = "TFCLOUD_STACKS_FILE"
#: The directory of a local job that holds one such file per replica.
STACKS_DIR = "stacks"
#: The signal the launcher dumps on (faulthandler.register); a script that uses it itself replaces the dump.
DUMP_SIGNAL = signal.SIGUSR1
#: How long :func:`dump` waits for the dump by default.
DUMP_WAIT_S = 3.0
_POLL_S = 0.05


def ready(path: str | os.PathLike[str]) -> bool:
    """Whether the launcher that writes to ``path`` has its handler in place (the file exists)."""
    return os.path.exists(path)


def dump(pid: int, path: str | os.PathLike[str], *, wait_s: float = DUMP_WAIT_S) -> str | None:
    """Signal ``pid`` and return the stacks its launcher appended to ``path``: None when the launcher is not ready,
    the process is gone or stopped, or nothing came within ``wait_s`` seconds. Each dump ends once the file has
    stopped growing for two polls (faulthandler writes it in one go from its signal handler)."""
    if not ready(path):
        return None
    try:
        before = os.path.getsize(path)
        os.kill(pid, DUMP_SIGNAL)
    except (OSError, ValueError):
        return None
    deadline = time.monotonic() + wait_s
    size, still = before, 0
    while time.monotonic() < deadline:
        time.sleep(_POLL_S)
        try:
            now = os.path.getsize(path)
        except OSError:
            return None
        if now > before and now == size:
            still += 1
            if still >= 2:
                break
        else:
            still = 0
        size = now
    if size <= before:
        return None
    with open(path, "rb") as f:
        f.seek(before)
        return f.read(size - before).decode("utf-8", "replace")


def is_stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped (SIGSTOP, a debugger): it dumps nothing until it continues (Linux; else False)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] in (b"T", b"t")
