"""How big a Ray job's working directory may be, checked before anything is submitted.

Ray's dashboard takes a job's ``working_dir`` as one zip upload and refuses a request body over 100 MiB (HTTP
413, "Maximum request body size 104857600 exceeded": measured 2026-11-26 with Ray 2.x, TESTBED.md §6), after the
submission has started and without saying what is big. :func:`check_size` says it first, naming the largest
entries and the ignore file that would leave them out. The files' own total is an upper bound of what most
directories zip to; only over it is the directory zipped (into nothing: only the size is kept) to see.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.errors import ConfigurationError

if TYPE_CHECKING:
    from tfcloud.image.context import BuildContext

__all__ = ["RAY_MAX_UPLOAD", "check_size"]

#: The largest request body Ray's dashboard accepts (the zipped working directory), in bytes.
RAY_MAX_UPLOAD = 100 * 1024 * 1024


class _Counter:
    """A write-only file that keeps only how many bytes went in (zipfile writes its archive here)."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        pass


def zipped_size(context: BuildContext, *, stop_after: int) -> int:
    """About what the context's files zip to (deflate, as Ray packs a working directory); counting stops once
    past ``stop_after``."""
    sink = _Counter()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:  # type: ignore[call-overload]
        for entry in context.files:
            if entry.link is not None:
                continue
            data = entry.data if entry.data is not None else (Path(entry.source).read_bytes()
                                                              if entry.source is not None else b"")
            archive.writestr(entry.path, data)
            if sink.size > stop_after:
                break
    return sink.size


def check_size(context: BuildContext, root: Path, *, limit: int = RAY_MAX_UPLOAD) -> None:
    """A :class:`ConfigurationError` (exit 2, before anything is submitted) when the job's working directory
    zips to more than ``limit`` bytes: its size, its biggest entries, and the ignore file that leaves them out."""
    from tfcloud.image.context import format_size, shown

    if context.total_size <= limit:
        return
    zipped = zipped_size(context, stop_after=limit)
    if zipped <= limit:
        return
    biggest = context.biggest()
    entries = ", ".join(f"{shown(path)} {format_size(size)}" for path, size in biggest)
    top = shown(biggest[0][0]) if biggest else "data/"
    raise ConfigurationError(
        f"The job's working directory ({root}) is {format_size(context.total_size)}, more than "
        f"{format_size(limit)} zipped: Ray's dashboard refuses a working directory over "
        f"{format_size(limit)}. Nothing was submitted.",
        hint=f"Its biggest entries: {entries}. Leave out what the job does not read with a line for each in "
             f"{root / '.dockerignore'} (e.g. `{top}`; .gitignore files count too), or put the data where "
             "every node reaches it (a shared path, gs://...).")
