"""Data sets a job reads (``--data [NAME=]DIR``, ``run(data=...)``, ``[tool.tfcloud] data``), shipped once.

Each data set has a name and a source: a local directory or ``gs://BUCKET/PATH``. Every replica finds it at the
path in the variable ``TFCLOUD_DATA_<NAME>`` (``tfcloud.data("name")`` returns it):

- a target whose replicas run here (local: :attr:`Target.runs_here`) uses a local directory in place;
- any other target ships it to its data store (:meth:`Target.data_store`: ``gs://STAGING_BUCKET/tfcloud-data``
  on Vertex AI, ``OUTPUT_DIR/tfcloud-data`` on Ray) under content addresses: each file is stored once as
  ``objects/<sha256>``, and the data set as a manifest (``manifests/<sha256 of the manifest>.json``: each file's
  path, digest and size). A file whose content is in the store already is never uploaded again, and the data
  is never in the job's image or package (the build context leaves the directory out), so a data change does
  not rebuild the image and a code change does not upload the data again. The replica gets the manifest's URI;
  its launcher lays out the directory (:mod:`tfcloud.runtime.datamount`).
- a ``gs://`` source is never copied at submit: the replica reads it (on Vertex AI through Cloud Storage FUSE at
  ``/gcs/BUCKET/PATH``; elsewhere through the Cloud Storage client into a local cache).

:func:`stage_data` does the uploading, with a progress bar (bytes and rate) on the console.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ConfigurationError, ValidationError

if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["DATA_PREFIX", "STORE_DIR", "DataSet", "DataUpload", "Manifest", "data_excludes", "job_data",
           "parse_data", "scan", "stage_data", "transfer_progress"]

#: The variable a data set's path is in: ``TFCLOUD_DATA_<NAME>`` (the name in upper case).
DATA_PREFIX = "TFCLOUD_DATA_"
#: The data store's directory under a bucket or a shared directory.
STORE_DIR = "tfcloud-data"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
_GCS = re.compile(r"^gs://([a-z0-9][a-z0-9._-]{1,220}[a-z0-9])(/.*)?$")
_CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class DataSet:
    """One data set: its ``name`` (``TFCLOUD_DATA_<NAME>``) and ``source`` (an absolute local directory, or a
    ``gs://`` URI)."""

    name: str
    source: str

    @property
    def var(self) -> str:
        return DATA_PREFIX + self.name.upper()

    @property
    def remote(self) -> bool:
        return self.source.startswith("gs://")


def _default_name(source: str) -> str:
    base = source.rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_]", "_", base).strip("_") or "data"
    return name if name[0].isalpha() else f"d_{name}"


def parse_data(value: object) -> tuple[DataSet, ...]:
    """Check ``--data`` / ``run(data=...)``: ``"DIR"``, ``"NAME=DIR"`` (or ``gs://BUCKET/PATH`` for DIR), a list of
    those, or a mapping NAME -> DIR (the setting). Each local directory must exist; names are unique."""
    if value is None:
        return ()
    items: list[tuple[str | None, str]] = []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        items = [(k, v) for k, v in value.items()] if all(isinstance(k, str) and isinstance(v, (str, os.PathLike))
                                                          for k, v in value.items()) else []
        if not items and value:
            raise ValidationError("data", "a table of NAME = \"DIR\"", value)
        items = [(k, os.fspath(v)) for k, v in items]
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, os.PathLike):
                item = os.fspath(item)
            if not isinstance(item, str):
                raise ValidationError("data", "directories (DIR or NAME=DIR, or gs://BUCKET/PATH)", item)
            key, sep, rest = item.partition("=")
            if sep and _NAME.match(key):
                items.append((key, rest))
            elif sep and key and "/" not in key and not item.startswith("gs://") and not _is_dir(item):
                # NAME=DIR with a name that is not one (my-set=DIR): the name is what is wrong, not the path
                raise ValidationError("data", "NAME=DIR with a name of letters, digits and _ (first a letter), at "
                                      "most 63", key, hint=f"Name it so: --data {_suggest(key)}={rest}.")
            else:
                items.append((None, item))
    else:
        raise ValidationError("data", "a directory, NAME=DIR, or a list of them", value)
    out: list[DataSet] = []
    for name, source in items:
        if name is not None and not _NAME.match(name):
            raise ValidationError("data", "a name of letters, digits and _ (first a letter), at most 63", name)
        if source.startswith("gs://"):
            match = _GCS.match(source)
            if match is None:
                raise ValidationError("data", "gs://BUCKET/PATH with a valid bucket name", source)
            resolved = source.rstrip("/")
        else:
            try:  # a name the file system refuses (too long, ...) is no directory either
                path = Path(source).expanduser()
                found = path.is_dir()
                resolved = str(path.resolve()) if found else ""
            except (OSError, RuntimeError, ValueError):
                found = False
            if not found:
                raise ValidationError("data", "an existing directory (or gs://BUCKET/PATH)", source,
                                      hint="Check the path; a relative one is read from the current directory.")
        data_set = DataSet(name=name or _default_name(resolved), source=resolved)
        if data_set.var == "TFCLOUD_DATA_CACHE":
            raise ValidationError("data", "a name other than cache (TFCLOUD_DATA_CACHE is the replicas' cache)",
                                  data_set.name, hint="Name it: --data NAME=DIR.")
        if any(d.var == data_set.var for d in out):
            raise ValidationError("data", f"one data set per name ({data_set.var} is given twice)", source,
                                  hint="Name them: --data train=DIR1 --data eval=DIR2.")
        out.append(data_set)
    return tuple(out)


def _is_dir(text: str) -> bool:
    try:
        return Path(text).expanduser().is_dir()
    except (OSError, ValueError):
        return False


def _suggest(name: str) -> str:
    """``my-set`` → ``my_set``: a name :data:`_NAME` takes, for the hint."""
    fixed = re.sub(r"[^A-Za-z0-9_]", "_", name)[:63]
    return fixed if fixed[:1].isalpha() else f"d_{fixed}"[:63]


def job_data(value: object, *, env: Mapping[str, str]) -> tuple[DataSet, ...]:
    """The gate's step for ``--data``: the checked data sets (:func:`parse_data`), none with a variable ``env``
    sets. (Where local ones go: :func:`store_for`.)"""
    data_sets = parse_data(value)
    for d in data_sets:
        if d.var in env:
            raise ValidationError("data", f"a name whose variable {d.var} --env does not set too", d.name)
    return data_sets


def store_for(data_sets: Sequence[DataSet], *, target: str, in_place: bool, store: str | None) -> str | None:
    """The one rule for where a job's local data sets go, from what the ``target`` declares: its data store
    (``store``: :meth:`Target.data_store`), or None when none ships (``in_place``: a target whose replicas read
    them here, :attr:`Target.runs_here`; or no local data set). A target that ships them with no store is
    refused (:class:`ValidationError`), by the gate and by the data stage alike."""
    if in_place or all(d.remote for d in data_sets):
        return None
    if store is None:
        raise ValidationError("data", f"a place on the {target} target to ship local data sets to", None,
                              hint="Vertex AI: set a staging bucket (--staging-bucket, TFCLOUD_STAGING_BUCKET); "
                                   "Ray: --output-dir gs://BUCKET/PATH or a directory every node reaches.")
    return store


def data_flags(value: object) -> list[str]:
    """``--data`` arguments for ``run(data=value)`` (a study's rerun command)."""
    if isinstance(value, Mapping):
        return [arg for name, path in value.items() for arg in ("--data", f"{name}={os.fspath(path)}")]
    items = [value] if isinstance(value, (str, os.PathLike)) else value if isinstance(value, (list, tuple)) else []
    return [arg for item in items for arg in ("--data", os.fspath(item))]


def data_excludes(data: Iterable[DataSet], root: Path) -> tuple[str, ...]:
    """The data sets' directories inside ``root``, as paths relative to it: left out of images and packages."""
    out = []
    for d in data:
        if not d.remote and Path(d.source).is_relative_to(root.resolve()):
            rel = Path(d.source).relative_to(root.resolve()).as_posix()
            if rel != ".":
                out.append(rel)
    return tuple(out)


# --- manifests ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Manifest:
    """A directory's files: ``(relative path, sha256, size)`` each, sorted by path."""

    files: tuple[tuple[str, str, int], ...]

    def to_bytes(self) -> bytes:
        return json.dumps({"version": 1, "files": [{"path": p, "sha256": d, "size": s} for p, d, s in self.files]},
                          sort_keys=True, separators=(",", ":")).encode()

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.to_bytes()).hexdigest()

    @property
    def size(self) -> int:
        return sum(s for _, _, s in self.files)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def scan(directory: Path, hashes: dict[str, list[Any]] | None = None) -> Manifest:
    """Every regular file under ``directory`` (symbolic links followed; hidden files too), hashed. ``hashes``:
    path -> ``[size, mtime_ns, inode, sha256]`` from an earlier scan; a file whose size, modification time and
    inode are unchanged is not read again (as git's index and rsync judge a file unchanged). Updated in place."""
    files = []
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=True):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_file():
                continue
            st = path.stat()
            key = [st.st_size, st.st_mtime_ns, st.st_ino]
            known = hashes.get(str(path)) if hashes is not None else None
            digest = known[3] if known is not None and known[:3] == key else _sha256(path)
            if hashes is not None:
                hashes[str(path)] = [*key, digest]
            files.append((path.relative_to(directory).as_posix(), digest, st.st_size))
    return Manifest(files=tuple(sorted(files)))


def _load_hashes(path: Path | None) -> dict[str, list[Any]] | None:
    if path is None:
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _save_hashes(path: Path | None, hashes: dict[str, list[Any]] | None) -> None:
    if path is None or hashes is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(hashes, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a cache: the next scan reads the files again
        pass


def count_files(directory: Path) -> tuple[int, int]:
    """(files, bytes) under ``directory``, without hashing (the plan's figures)."""
    count = size = 0
    for dirpath, _, filenames in os.walk(directory, followlinks=True):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file():
                count += 1
                size += path.stat().st_size
    return count, size


def describe(data: Iterable[DataSet], *, in_place: bool, store: str | None) -> list[dict[str, object]]:
    """The plan's view of each data set: its variable, source, files and size, and what submitting does with
    it (a plan reaches no network: what the store holds already is checked at submit)."""
    out: list[dict[str, object]] = []
    for d in data:
        row: dict[str, object] = {"name": d.name, "variable": d.var, "source": d.source}
        if d.remote:
            row.update(files=None, size=None, upload="nothing: the replicas read it from Cloud Storage")
        else:
            files, size = count_files(Path(d.source))
            row.update(files=files, size=size)
            row["upload"] = ("nothing: used in place" if in_place else
                             f"to {store or '(no store set)'}: the files whose content is not there yet, at most "
                             f"{size} bytes (checked at submit)")
        out.append(row)
    return out


# --- stores -------------------------------------------------------------------------------------------------------
class _GcsStore:
    """``gs://BUCKET/PREFIX``: objects/<sha256>, manifests/<sha256>.json."""

    def __init__(self, root: str, storage: Any) -> None:
        match = _GCS.match(root)
        assert match is not None
        self.root = root.rstrip("/")
        self.bucket = storage.bucket(match.group(1))
        self.prefix = (match.group(2) or "").strip("/")

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def existing(self) -> set[str]:
        prefix = self._key("objects/")
        return {blob.name[len(prefix):] for blob in self.bucket.client.list_blobs(self.bucket, prefix=prefix)}

    def put_file(self, digest: str, path: Path, advance: Callable[[int], None]) -> None:
        from tfcloud.google.cloud.storage import upload_if_absent

        with open(path, "rb") as f:
            upload_if_absent(self.bucket.blob(self._key(f"objects/{digest}")), _Counting(f, advance),
                             size=path.stat().st_size, content_type="application/octet-stream")

    def put_manifest(self, digest: str, data: bytes) -> str:
        self.bucket.blob(self._key(f"manifests/{digest}.json")).upload_from_string(
            data, content_type="application/json")
        return f"{self.root}/manifests/{digest}.json"


class _DirStore:
    """A directory every node reaches (Ray's output directory): objects/<sha256>, manifests/<sha256>.json."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def existing(self) -> set[str]:
        objects = self.root / "objects"
        return {p.name for p in objects.iterdir()} if objects.is_dir() else set()

    def put_file(self, digest: str, path: Path, advance: Callable[[int], None]) -> None:
        target = self.root / "objects" / digest
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{digest}.{os.getpid()}")
        with open(path, "rb") as src, open(tmp, "wb") as dst:
            while chunk := src.read(_CHUNK):
                dst.write(chunk)
                advance(len(chunk))
        os.replace(tmp, target)
        shutil.copymode(path, target)

    def put_manifest(self, digest: str, data: bytes) -> str:
        target = self.root / "manifests" / f"{digest}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return str(target)


class _Counting:
    """A file object that reports how many bytes were read from it."""

    def __init__(self, f: Any, advance: Callable[[int], None]) -> None:
        self._f = f
        self._advance = advance

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._f.read(size)
        self._advance(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


# --- staging --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class DataUpload:
    """What staging one data set did: its files and bytes, and how many of each were uploaded now."""

    name: str
    files: int
    size: int
    uploaded_files: int
    uploaded_bytes: int
    uri: str


def stage_data(data: Iterable[DataSet], store_root: str, *, storage: Any = None, console: Console | None = None,
               hash_cache: Path | None = None) -> tuple[dict[str, str], list[DataUpload]]:
    """Ship each local data set to the store at ``store_root`` (``gs://...`` with a ``storage.Client``, else a
    directory): the files whose content is not there yet, then the manifest. Returns the replicas' variables
    (``TFCLOUD_DATA_<NAME>`` -> the manifest's URI; a ``gs://`` source as it is) and what was uploaded.
    ``hash_cache``: a file that keeps each file's digest between submissions (:func:`scan`)."""
    local = [d for d in data if not d.remote]
    env = {d.var: d.source for d in data if d.remote}
    if not local:
        return env, []
    if store_root.startswith("gs://"):
        if storage is None:
            raise ConfigurationError("Uploading --data to Cloud Storage needs a storage client.")
        store: _GcsStore | _DirStore = _GcsStore(store_root, storage)
    else:
        store = _DirStore(store_root)
    hashes = _load_hashes(hash_cache)
    manifests = [(d, scan(Path(d.source), hashes)) for d in local]
    _save_hashes(hash_cache, hashes)
    existing = store.existing()
    todo: dict[str, Path] = {}
    for d, manifest in manifests:
        for rel, digest, _ in manifest.files:
            if digest not in existing and digest not in todo:
                todo[digest] = Path(d.source) / rel
    sizes = {digest: path.stat().st_size for digest, path in todo.items()}
    with transfer_progress(console, sum(sizes.values()), f"Uploading data to {store_root}") as advance:
        for digest, path in todo.items():
            store.put_file(digest, path, advance)
    reports = []
    for d, manifest in manifests:
        uri = store.put_manifest(manifest.digest, manifest.to_bytes())
        env[d.var] = uri
        new = {digest for _, digest, _ in manifest.files if digest in todo}
        reports.append(DataUpload(name=d.name, files=len(manifest.files), size=manifest.size,
                                  uploaded_files=sum(1 for _, digest, _ in manifest.files if digest in new),
                                  uploaded_bytes=sum(s for _, digest, s in manifest.files if digest in new), uri=uri))
        new.clear()
    if console is not None:
        from tfcloud.image.context import format_size

        for r in reports:
            console.print(f"Data {r.name}: {r.files} files, {format_size(r.size)}; uploaded {r.uploaded_files} "
                          f"({format_size(r.uploaded_bytes)}), the rest already there: {r.uri}",
                          markup=False, highlight=False)
    return env, reports


class transfer_progress:
    """A rich progress bar (bytes, rate) on ``console`` while uploading; nothing without a console or bytes."""

    def __init__(self, console: Console | None, total: int, what: str) -> None:
        self.console = console
        self.total = total
        self.what = what
        self.bar: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if self.console is None or self.total == 0:
            return lambda n: None
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(),
                            TransferSpeedColumn(), TimeRemainingColumn(), console=self.console, transient=False)
        self.bar.start()
        task = self.bar.add_task(self.what, total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
