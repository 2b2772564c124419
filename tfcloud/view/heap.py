"""How a process that moves a lot of log text keeps its memory: glibc's ``malloc`` hands a freed block of 128 KiB
or more back to the system at once and maps a fresh one for the next, so that every read of a log (128 KiB) and
every string made from it costs page faults (measured: a copy of 40 MB of 2 kB lines took 30 ms so, 8 ms with
the memory kept; ``benchmarks/bench_logs.py``). :func:`keep_freed_memory` asks ``malloc`` to keep such blocks for
reuse: blocks up to 4 MiB come from the heap, and up to 64 MiB of freed heap stays mapped.

Called by the ``tfcloud`` command while it streams logs (a process of tfcloud's own), never in a user's Python
process (a notebook keeps ``malloc``'s defaults). The local supervisor takes the same settings in its own
three-line copy (``tfcloud.replicas.supervisor._keep_freed_memory``): it runs by path and may not import this.
"""

from __future__ import annotations

import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_BYTES = 4 << 20
_TRIM_BYTES = 64 << 20


def keep_freed_memory() -> bool:
    """Ask glibc's ``malloc`` to keep freed blocks for reuse (see the module); whether it took the settings
    (False off Linux, or with a C library without ``mallopt``, where nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES))
