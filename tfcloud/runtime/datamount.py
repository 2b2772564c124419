"""Data sets inside a replica: ``tfcloud.data("name")`` and the launcher's :func:`mount_all`.

The replica's ``TFCLOUD_DATA_<NAME>`` variables say where each data set is (:mod:`tfcloud.job.datasets` sets them):

- a local directory: used as it is;
- a tfcloud manifest (``.../tfcloud-data/manifests/<sha256>.json``, in ``gs://`` or a shared directory): the
  launcher lays the data set out as a directory of symbolic links, one per file, to its content-addressed
  object: under ``/gcs/BUCKET/...`` where Cloud Storage FUSE mounts the bucket (Vertex AI: "Cloud Storage
  FUSE", every custom job sees its project's buckets under ``/gcs/``), else in a local cache filled through the
  Cloud Storage client (the emulator, whose replicas have no ``/gcs/``; a local or Ray replica with a ``gs://``
  store), or in the shared directory itself;
- ``gs://BUCKET/PATH``: ``/gcs/BUCKET/PATH`` where mounted, else a local copy in the cache (files whose size
  matches are not fetched again).

The variable is then set to the directory. The cache is ``TFCLOUD_DATA_CACHE``, else ``~/.cache/tfcloud/data``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from tfcloud.google.cloud import storage  # imports no Google library until a client is made

__all__ = ["data", "mount_all"]

DATA_PREFIX = "TFCLOUD_DATA_"
_GCS_ROOT = "/gcs"


def data(name: str) -> str:
    """The directory where the data set ``name`` is in this replica (``--data name=DIR``)."""
    value = os.environ.get(DATA_PREFIX + name.upper())
    if value is None:
        given = sorted(k[len(DATA_PREFIX):].lower() for k in os.environ
                       if k.startswith(DATA_PREFIX) and k != "TFCLOUD_DATA_CACHE")
        raise KeyError(f"No data set {name!r} in this job (it has: {', '.join(given) or 'none'}); "
                       f"pass --data {name}=DIR to tfcloud submit.")
    return value


def _cache() -> Path:
    return Path(os.environ.get("TFCLOUD_DATA_CACHE") or Path.home() / ".cache" / "tfcloud" / "data")


def _split(uri: str) -> tuple[str, str]:
    bucket, _, name = uri[len("gs://"):].partition("/")
    return bucket, name


def _mounted(uri: str) -> Path | None:
    """``/gcs/BUCKET/NAME`` when Cloud Storage FUSE shows it here, else None."""
    bucket, name = _split(uri)
    path = Path(_GCS_ROOT) / bucket / name
    return path if path.exists() else None


def _client() -> Any:
    return storage.client()


def _fetch(client: Any, uri: str, target: Path, size: int | None = None, stamp: int | None = None) -> Path:
    """``uri``'s object at ``target`` (kept when it is there already with ``size`` bytes and, given ``stamp``
    (the object's update time in ns), that modification time: a rewritten object of the same size is fetched
    again)."""
    if target.is_file() and (size is None or target.stat().st_size == size) \
            and (stamp is None or target.stat().st_mtime_ns == stamp):
        return target
    bucket, name = _split(uri)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    os.close(fd)
    client.bucket(bucket).blob(name).download_to_filename(tmp)
    if stamp is not None:
        os.utime(tmp, ns=(stamp, stamp))
    os.replace(tmp, target)
    return target


def _stamp(blob: Any) -> int | None:
    """The object's update time in ns, at its microsecond precision (what a local copy's mtime is set to)."""
    updated = blob.updated
    return None if updated is None else round(updated.timestamp() * 1_000_000) * 1000


class _Reader:
    """Objects of ``gs://`` as local files: under ``/gcs/`` where Cloud Storage FUSE shows them, else fetched
    through the Cloud Storage client into the cache (made on first need)."""

    def __init__(self) -> None:
        self.client: Any = None

    def _storage(self) -> Any:
        if self.client is None:
            self.client = _client()
        return self.client

    def read(self, uri: str) -> bytes:
        mounted = _mounted(uri)
        if mounted is not None:
            return mounted.read_bytes()
        bucket, name = _split(uri)
        return bytes(self._storage().bucket(bucket).blob(name).download_as_bytes())

    def object(self, uri: str, digest: str, size: int) -> Path:
        mounted = _mounted(uri)
        if mounted is not None:
            return mounted
        return _fetch(self._storage(), uri, _cache() / "objects" / digest, size)

    def tree(self, uri: str) -> Path:
        mounted = _mounted(uri)
        if mounted is not None and mounted.is_dir():
            return mounted
        client = self._storage()
        bucket, name = _split(uri)
        root = _cache() / "gcs" / bucket / name
        prefix = name.rstrip("/") + "/" if name else ""
        present = set()
        for blob in client.list_blobs(bucket, prefix=prefix):
            if not blob.name.endswith("/"):
                present.add(_fetch(client, f"gs://{bucket}/{blob.name}", root / blob.name[len(prefix):], blob.size,
                                   _stamp(blob)))
        root.mkdir(parents=True, exist_ok=True)
        for path in [p for p in root.rglob("*") if p.is_file() and p not in present]:
            path.unlink()  # gone from the bucket since an earlier copy
        return root

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _manifest_set(uri: str, reader: _Reader) -> str:
    store = uri.rsplit("/manifests/", 1)[0]
    import hashlib

    digest = hashlib.sha256(uri.encode()).hexdigest()[:32]  # the links point into this store: one tree per URI
    tree = _cache() / "sets" / digest
    if tree.is_dir() and all(p.exists() for p in tree.rglob("*")):  # laid out already, every link resolves
        return str(tree)
    remote = store.startswith("gs://")
    manifest = json.loads(reader.read(uri) if remote else Path(uri).read_bytes())
    tmp = Path(tempfile.mkdtemp(dir=_mkdir(tree.parent), prefix=f".{digest}-"))
    for entry in manifest["files"]:
        sha, size = str(entry["sha256"]), int(entry["size"])
        source = reader.object(f"{store}/objects/{sha}", sha, size) if remote else Path(store) / "objects" / sha
        link = tmp / entry["path"]
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source, link)
    import shutil

    if tree.is_dir() and not all(p.exists() for p in tree.rglob("*")):  # its store is gone: lay it out again
        shutil.rmtree(tree, ignore_errors=True)
    try:
        os.rename(tmp, tree)
    except OSError:  # another replica laid it out first: the same links
        shutil.rmtree(tmp, ignore_errors=True)
    return str(tree)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def mount_all(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Lay out every data set whose variable names a manifest or a ``gs://`` URI, and set the variable to its
    directory. Returns name -> directory for those it changed."""
    environ = os.environ if environ is None else environ
    reader = _Reader()
    done = {}
    for key in sorted(environ):
        if not key.startswith(DATA_PREFIX) or key == "TFCLOUD_DATA_CACHE":
            continue
        value = environ[key]
        if "/tfcloud-data/manifests/" in value and value.endswith(".json"):
            path = _manifest_set(value, reader)
        elif value.startswith("gs://"):
            path = str(reader.tree(value))
        else:
            continue
        environ[key] = path
        done[key[len(DATA_PREFIX):].lower()] = path
    reader.close()
    return done
