"""What an archive's bytes are, as Cloud Storage reports an object's: size, MD5 and CRC32C, computed while the
archive is written (:class:`HashingWriter`), so that a stored object at a content-addressed name is trusted only
when it holds these bytes (:meth:`ArchiveSums.matches`). Used for the ``--no-build`` package
(:mod:`tfcloud.google.staging.package`) and the build context staged for Cloud Build
(:mod:`tfcloud.google.staging.cloudbuild`)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["ArchiveSums", "HashingWriter"]


@dataclass(frozen=True, kw_only=True)
class ArchiveSums:
    """An archive's size and hashes as Cloud Storage reports them (base64 MD5 and CRC32C, big-endian)."""

    size: int
    md5: str
    crc32c: str

    def matches(self, blob: Any) -> bool:
        """Whether the stored object ``blob`` holds these bytes: same size, and same MD5 (when the object has
        one: composite objects have only a CRC32C), else same CRC32C. No hash at all: not trusted."""
        if blob.size is None or int(blob.size) != self.size:
            return False
        if blob.md5_hash:
            return bool(blob.md5_hash == self.md5)
        return bool(blob.crc32c) and blob.crc32c == self.crc32c


class HashingWriter:
    """A write-only file object that hashes what passes through it (MD5, CRC32C, size) on its way to ``target``
    (None: nowhere, to measure). The CRC32C needs ``google-crc32c`` (with ``tfcloud[cloud]``, which every upload
    needs); without it, as for a plan, it is left empty."""

    def __init__(self, target: IO[bytes] | None) -> None:
        self._crc: Any = None
        try:
            import google_crc32c

            self._crc = google_crc32c.Checksum()  # type: ignore[no-untyped-call]
        except ImportError:  # a plan without tfcloud[cloud]: size and MD5 only
            pass
        self._target = target
        self._md5 = hashlib.md5(usedforsecurity=False)
        self._size = 0

    def write(self, data: bytes) -> int:
        self._md5.update(data)
        if self._crc is not None:
            self._crc.update(data)
        self._size += len(data)
        if self._target is not None:
            self._target.write(data)
        return len(data)

    def flush(self) -> None:
        if self._target is not None:
            self._target.flush()

    def sums(self) -> ArchiveSums:
        """What has been written so far."""
        crc = base64.b64encode(self._crc.digest()).decode() if self._crc is not None else ""
        return ArchiveSums(size=self._size, md5=base64.b64encode(self._md5.digest()).decode(), crc32c=crc)
