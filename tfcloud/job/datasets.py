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

What ships is chosen by one walk (:func:`select_files`, for the plan and the upload alike): the secret deny-list
and content sniffing that images and packages follow keep credential files out and name them (a ``!path`` line
in the data directory's ``.dockerignore`` lets one in); links are followed and those that leave the directory
named; a symbolic link loop is refused. :func:`stage_data` does the uploading, with a progress bar (bytes and
rate) on the console.
"""

from __future__ import annotations

import hashlib
import json
import logging
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


__all__ = ["DATA_PREFIX", "STORE_DIR", "DataFiles", "DataSet", "DataUpload", "Manifest", "data_excludes",
           "describe", "job_data", "parse_data", "scan", "select_files", "stage_data",
           "transfer_progress"]

#: The variable a data set's path is in: ``TFCLOUD_DATA_<NAME>`` (the name in upper case).
DATA_PREFIX = "TFCLOUD_DATA_"
#: The data store's directory under a bucket or a shared directory.
STORE_DIR = "tfcloud-data"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
_GCS = re.compile(r"^gs://([a-z0-9][a-z0-9._-]{1,220}[a-z0-9])(/.*)?$")
_CHUNK = 1 << 20
logger = logging.getLogger("tfcloud")


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


@dataclass(frozen=True, kw_only=True)
class DataFiles:
    """What of a data set's directory ships (:func:`select_files`)."""

    files: tuple[tuple[str, Path, int], ...]  # (path in the data set, the file, its size), sorted by path
    kept_out: tuple[tuple[str, str], ...] = ()  # (path, why): the secret deny-list; a directory ends with /
    let_in: tuple[tuple[str, str], ...] = ()  # (path, why): on the deny-list, let in by a `!path` line
    outside_links: tuple[str, ...] = ()  # links to outside the directory: followed, what they reach ships
    dangling: tuple[str, ...] = ()  # links to nothing: left out

    def warnings(self, name: str) -> list[str]:
        """What a person should hear before data set ``name`` is shipped (the plan's warnings, one line each).
        Paths are escaped but not rich markup: print them as text."""
        from tfcloud.image.context import shown
        from tfcloud.image.gitignore import glob_escape

        out = []
        if self.kept_out:
            first = next((p for p, _ in self.kept_out if not p.endswith("/")), self.kept_out[0][0])
            out.append(f"Kept out of data set {name} (secret deny-list): "
                       + ", ".join(f"{shown(p)} ({why})" for p, why in self.kept_out)
                       + f". To ship a file, add a line `!path` for it to the data directory's .dockerignore "
                       f"(e.g. `!{shown(glob_escape(first))}`).")
        if self.let_in:
            out.append(f"Shipped with data set {name} by `!path` lines in its .dockerignore, despite the deny-list: "
                       + ", ".join(f"{shown(p)} ({why})" for p, why in self.let_in) + ".")
        if self.outside_links:
            out.append(f"Symbolic links in data set {name} that point outside its directory (followed: what they "
                       "reach is shipped): " + ", ".join(shown(p) for p in self.outside_links) + ".")
        if self.dangling:
            out.append(f"Symbolic links in data set {name} that point to nothing (left out): "
                       + ", ".join(shown(p) for p in self.dangling) + ".")
        return out


def select_files(data_set: DataSet, *, shipped: bool = True) -> DataFiles:
    """The files of a local data set, as the one walk that counts them for the plan and hashes them for the store.

    ``shipped`` (the data set goes to a data store): the secret deny-list and its content sniffing
    (:mod:`tfcloud.image.secretscan`, the rule images and packages follow) keep credential files out, unless a
    ``!path`` line without wildcards in the directory's own ``.dockerignore`` names them (the images' override,
    :func:`tfcloud.image.context.deny_list_overrides`; the file's other lines are not read); a symbolic link to a
    directory above it (a loop) is a :class:`ValidationError` naming the data set and the link. Links are
    followed, those that leave the directory too (named in :attr:`DataFiles.outside_links`); a link to nothing
    is left out and named. Not ``shipped`` (used in place): every file, a loop not followed."""
    from tfcloud.image.context import deny_list_overrides, read_dockerignore, shown
    from tfcloud.image.secretscan import SECRET_PATTERNS, secret_reason, secret_spec, sniff_secret

    root = Path(data_set.source)
    overrides, override_lines = deny_list_overrides(read_dockerignore(
        root / ".dockerignore", name=f"data {data_set.name}: .dockerignore")) if shipped else (None, ())
    deny = secret_spec()
    reasons = [r for _, r in SECRET_PATTERNS]
    files: list[tuple[str, Path, int]] = []
    kept_out: list[tuple[str, str]] = []
    let_in: list[tuple[str, str]] = []
    outside: list[str] = []
    dangling: list[str] = []

    def overridden(rel: str) -> bool:
        return overrides is not None and overrides.decide(rel) is True

    def deny_listed(rel: str, is_dir: bool, target: Path | None, allowed: frozenset[int]) -> str | None:
        if not shipped:
            return None
        reason = secret_reason(rel, is_dir, deny, reasons, allowed)
        if reason is None and target is not None:  # a link: what it points to, by its own path
            where = target.relative_to(root).as_posix() if target.is_relative_to(root) else target.as_posix()[1:]
            reason = secret_reason(where, is_dir, deny, reasons)
        return reason

    def walk(directory: Path, rel_dir: str, chain: frozenset[tuple[int, int]], inherited: str | None,
             allowed: frozenset[int]) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise ValidationError("data", "readable directories",
                                  f"<{data_set.name}: {shown(rel_dir or '.')}: {exc.strerror or exc}>",
                                  hint="Make it readable, or move it out of the data directory.") from None
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            path = Path(entry.path)
            target = None
            try:
                if entry.is_symlink():
                    target = Path(os.path.realpath(path))
                    if not target.exists():
                        dangling.append(rel)
                        continue
                    if not target.is_relative_to(root):
                        outside.append(rel)
                st = entry.stat()  # what a link points to
            except OSError:  # removed since the directory was read
                continue
            if entry.is_dir():
                key = (st.st_dev, st.st_ino)
                if key in chain:
                    if not shipped:
                        continue
                    raise ValidationError(
                        "data", "a directory without a symbolic link loop",
                        f"<{data_set.name}: {shown(rel)} -> {shown(str(target))}>",
                        hint="Remove the link or point it elsewhere: a data set is shipped file by file, and a "
                             "loop would ship its files again at every level.")
                reason = inherited or deny_listed(rel, True, target, allowed)
                inner = allowed
                if reason is not None and not overridden(rel):
                    if any(o.startswith(rel + "/") for o in override_lines):  # a !path line names something inside
                        kept, taken = len(kept_out), len(let_in)
                        walk(path, rel, chain | {key}, reason, allowed)
                        if len(let_in) == taken and len(kept_out) > kept:
                            del kept_out[kept:]
                            kept_out.append((rel + "/", reason))
                    else:
                        kept_out.append((rel + "/", reason))
                    continue
                if reason is not None:  # the directory is let in: so is what the same pattern names inside
                    let_in.append((rel + "/", reason))
                    index = deny.check_file(rel + "/").index
                    inner = allowed | {index} if index is not None and inherited is None else allowed
                walk(path, rel, chain | {key}, None, inner)
                continue
            if not entry.is_file():
                continue  # sockets, fifos, devices
            reason = (inherited or deny_listed(rel, False, target, allowed)
                      or (sniff_secret(path, st.st_size) if shipped else None))
            if reason is not None:
                if not overridden(rel):
                    kept_out.append((rel, reason))
                    continue
                let_in.append((rel, reason))
            files.append((rel, path, st.st_size))

    top = root.stat()
    walk(root, "", frozenset({(top.st_dev, top.st_ino)}), None, frozenset())
    return DataFiles(files=tuple(sorted(files)), kept_out=tuple(sorted(kept_out)), let_in=tuple(sorted(let_in)),
                     outside_links=tuple(sorted(outside)), dangling=tuple(sorted(dangling)))


def scan(data_set: DataSet, hashes: dict[str, list[Any]] | None = None, *,
         chosen: DataFiles | None = None) -> Manifest:
    """The files a data set ships (``chosen``, default :func:`select_files`'s), hashed. ``hashes``: path ->
    ``[size, mtime_ns, inode, sha256]`` from an earlier scan; a file whose size, modification time and inode are
    unchanged is not read again (as git's index and rsync judge a file unchanged). Updated in place."""
    files = []
    for rel, path, _ in (chosen or select_files(data_set)).files:
        try:
            st = path.stat()
        except OSError:  # removed since the walk
            continue
        key = [st.st_size, st.st_mtime_ns, st.st_ino]
        known = hashes.get(str(path)) if hashes is not None else None
        digest = known[3] if known is not None and known[:3] == key else _sha256(path)
        if hashes is not None:
            hashes[str(path)] = [*key, digest]
        files.append((rel, digest, st.st_size))
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


def describe(data: Iterable[DataSet], *, in_place: bool,
             store: str | None) -> tuple[list[dict[str, object]], list[str]]:
    """The plan's view of each data set: its variable, source, the files it ships and their size, what the
    secret deny-list keeps out and lets in, the links that point outside its directory or to nothing, and what
    submitting does with it (a plan reaches no network: what the store holds already is checked at submit);
    and the warnings those call for (:meth:`DataFiles.warnings`)."""
    out: list[dict[str, object]] = []
    warnings: list[str] = []
    for d in data:
        row: dict[str, object] = {"name": d.name, "variable": d.var, "source": d.source}
        if d.remote:
            row.update(files=None, size=None, upload="nothing: the replicas read it from Cloud Storage")
        else:
            chosen = select_files(d, shipped=not in_place)
            size = sum(s for _, _, s in chosen.files)
            row.update(files=len(chosen.files), size=size,
                       kept_out=[{"path": p, "reason": r} for p, r in chosen.kept_out],
                       let_in=[{"path": p, "reason": r} for p, r in chosen.let_in],
                       outside_links=list(chosen.outside_links), dangling_links=list(chosen.dangling))
            row["upload"] = ("nothing: used in place" if in_place else
                             f"to {store or '(no store set)'}: the files whose content is not there yet, at most "
                             f"{size} bytes (checked at submit)")
            warnings += chosen.warnings(d.name)
        out.append(row)
    return out, warnings


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
    chosen = [(d, select_files(d)) for d in local]  # first: a loop is refused before anything is uploaded
    for d, files in chosen:
        for warning in files.warnings(d.name):  # on the console if there is one, else logged
            if console is None:
                logger.warning(warning)
            else:
                console.print(warning, style="yellow", markup=False, highlight=False)
    hashes = _load_hashes(hash_cache)
    manifests = [(d, scan(d, hashes, chosen=files)) for d, files in chosen]
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
