"""The build context: the files a job's image needs, and nothing else.

:func:`collect_context` walks the entry point's directory (or a ``--context`` directory) and keeps what the
job needs. In order:

1. **Default excludes** (:data:`DEFAULT_EXCLUDES`): version control, virtualenvs (any directory holding a
   ``pyvenv.cfg`` or ``conda-meta``, whatever its name), caches, ``.ipynb_checkpoints``, build outputs.
   A ``!pattern`` in ``.dockerignore`` can bring back the pattern-based ones (not virtualenvs).
2. **Ignore files**: every ``.gitignore`` (the root's and nested ones, relative to their directory), then the
   root's ``.dockerignore``, which has the last word. Both use gitwildmatch semantics (pathspec).
3. **Secret deny-list** (:data:`SECRET_PATTERNS`, plus private keys and service-account JSON keys found by
   content): always kept out, whatever the ignore files say, and named in :attr:`BuildContext.secrets`.
4. **Symlinks** inside the tree are kept as links; links that leave the tree (or dangle) are dropped and
   named in :attr:`BuildContext.outside_links`.

``generated`` files (the launcher, a converted notebook, the Dockerfile, tfcloud's own package) are added on
top and win over a user file at the same path. :meth:`BuildContext.write_tar` writes the context
deterministically (sorted, fixed mtime, uid/gid 0, normalised modes), so the same files give the same bytes
and the same :meth:`BuildContext.digest`.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import logging
import os
import re
import stat
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tfcloud.errors import BuildError, ValidationError

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_WARN_SIZE",
    "SECRET_PATTERNS",
    "BuildContext",
    "ContextFile",
    "ExcludedSecret",
    "collect_context",
    "format_size",
]

logger = logging.getLogger("tfcloud")

#: Above this total size, :meth:`BuildContext.warnings` names the biggest entries.
DEFAULT_WARN_SIZE = 100 * 1000 * 1000

#: The fixed modification time of every entry in the tar stream (1980-01-01, as reproducible builds use).
TAR_MTIME = 315532800

#: Excluded unless a ``.dockerignore`` re-includes them (gitwildmatch lines, applied before the ignore files).
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    ".tox/",
    ".nox/",
    "__pycache__/",
    "*.py[cod]",
    ".ipynb_checkpoints/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".eggs/",
    "*.egg-info/",
    "/build/",
    "/dist/",
    "node_modules/",
    ".idea/",
    ".vscode/",
    ".DS_Store",
    "/.tfcloud/",  # tfcloud's own generated files go there
)

#: Never in a context, whatever the ignore files say: (gitwildmatch line, what it is).
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    (".env", "environment file"),
    (".env.*", "environment file"),
    ("*.pem", "private key or certificate"),
    ("*.key", "private key"),
    ("*.p12", "key store"),
    ("*.pfx", "key store"),
    ("*.jks", "key store"),
    ("id_rsa", "SSH private key"),
    ("id_dsa", "SSH private key"),
    ("id_ecdsa", "SSH private key"),
    ("id_ed25519", "SSH private key"),
    (".ssh/", "SSH directory"),
    (".netrc", "credentials file"),
    ("_netrc", "credentials file"),
    (".pgpass", "credentials file"),
    (".pypirc", "credentials file"),
    (".boto", "credentials file"),
    (".aws/", "AWS credentials"),
    ("**/.docker/config.json", "Docker credentials"),
    ("**/.config/gcloud/", "gcloud configuration"),
    (".gcloud/", "gcloud configuration"),
    ("**/gcloud/credentials.db", "gcloud credentials"),
    ("**/gcloud/access_tokens.db", "gcloud credentials"),
    ("**/gcloud/legacy_credentials/", "gcloud credentials"),
    ("application_default_credentials.json", "gcloud credentials"),
)

#: Templates that look like secrets by name but hold none.
_SECRET_ALLOWED = (".env.example", ".env.sample", ".env.template", ".env.dist")

#: Files up to this size are also checked by content (private keys, service-account JSON keys).
_SNIFF_SIZE = 64 * 1024
_PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_SERVICE_ACCOUNT = re.compile(rb'"type"\s*:\s*"service_account"')

_FILE_MODE = 0o644
_EXEC_MODE = 0o755


@dataclass(frozen=True, kw_only=True)
class ContextFile:
    """One entry of the context. ``path`` is relative and POSIX-style; exactly one of ``source`` (a file on
    disk), ``data`` (a generated file) and ``link`` (a symlink's target, relative) is set."""

    path: str
    size: int
    mode: int = _FILE_MODE
    source: Path | None = None
    data: bytes | None = field(default=None, repr=False)
    link: str | None = None

    @property
    def is_link(self) -> bool:
        return self.link is not None

    def content_digest(self) -> str:
        """sha256 of the content (of the link target's name for a symlink)."""
        h = hashlib.sha256()
        if self.link is not None:
            h.update(self.link.encode())
        elif self.data is not None:
            h.update(self.data)
        else:
            assert self.source is not None
            with open(self.source, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        return h.hexdigest()


@dataclass(frozen=True, kw_only=True)
class ExcludedSecret:
    """A file the secret deny-list kept out, and why."""

    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class BuildContext:
    """The files of one image build. Build it with :func:`collect_context`."""

    root: Path
    files: tuple[ContextFile, ...]  # sorted by path
    secrets: tuple[ExcludedSecret, ...] = ()
    outside_links: tuple[str, ...] = ()

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def file_count(self) -> int:
        return len(self.files)

    def get(self, path: str) -> ContextFile | None:
        for f in self.files:
            if f.path == path:
                return f
        return None

    def biggest(self, n: int = 5) -> tuple[tuple[str, int], ...]:
        """The ``n`` biggest top-level entries (a directory counts with everything under it)."""
        sizes: dict[str, int] = {}
        for f in self.files:
            top, sep, _ = f.path.partition("/")
            key = top + "/" if sep else top
            sizes[key] = sizes.get(key, 0) + f.size
        return tuple(sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:n])

    def summary(self) -> str:
        return f"{self.file_count} files, {format_size(self.total_size)}"

    def warnings(self, *, warn_size: int = DEFAULT_WARN_SIZE) -> list[str]:
        """What a person should hear before this context is built: secrets kept out, links dropped, size."""
        out: list[str] = []
        if self.secrets:
            names = ", ".join(f"{s.path} ({s.reason})" for s in self.secrets)
            out.append(f"Kept out of the image (secret deny-list): {names}.")
        if self.outside_links:
            out.append(
                "Dropped symlinks that point outside the build context: " + ", ".join(self.outside_links) + "."
            )
        if self.total_size > warn_size:
            entries = ", ".join(f"{p} {format_size(s)}" for p, s in self.biggest())
            out.append(
                f"The build context is {format_size(self.total_size)} (more than {format_size(warn_size)}); "
                f"biggest entries: {entries}. Add what the image does not need to .dockerignore."
            )
        return out

    @functools.cached_property
    def _digest(self) -> str:
        h = hashlib.sha256(b"tfcloud-context-v1\n")
        for f in self.files:
            kind = "l" if f.is_link else "f"
            h.update(f"{f.path}\0{kind}\0{f.mode:o}\0{f.content_digest()}\n".encode())
        return h.hexdigest()

    def digest(self) -> str:
        """sha256 (hex) of the paths, modes and contents: equal digests mean equal tar streams."""
        return self._digest

    def write_tar(self, fileobj: IO[bytes], *, compress: bool = False) -> None:
        """Write the context as a tar stream (gzip-compressed when ``compress``), deterministically."""
        if compress:
            with gzip.GzipFile(fileobj=fileobj, mode="wb", mtime=0, filename="", compresslevel=6) as gz:
                self._write_tar(gz)  # type: ignore[arg-type]
        else:
            self._write_tar(fileobj)

    def _write_tar(self, fileobj: IO[bytes]) -> None:
        with tarfile.open(fileobj=fileobj, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            written_dirs: set[str] = set()
            for f in self.files:
                parts = f.path.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    d = "/".join(parts[:i])
                    if d not in written_dirs:
                        written_dirs.add(d)
                        tar.addfile(_tarinfo(d, tarfile.DIRTYPE, _EXEC_MODE))
                if f.link is not None:
                    info = _tarinfo(f.path, tarfile.SYMTYPE, 0o777)
                    info.linkname = f.link
                    tar.addfile(info)
                    continue
                info = _tarinfo(f.path, tarfile.REGTYPE, f.mode)
                info.size = f.size
                if f.data is not None:
                    tar.addfile(info, io.BytesIO(f.data))
                    continue
                assert f.source is not None
                try:
                    with open(f.source, "rb") as src:
                        tar.addfile(info, src)
                except OSError as exc:
                    raise BuildError(
                        f"Could not add {f.path} to the build context: {exc}. "
                        "Did it change while the context was being written?"
                    ) from exc


def _tarinfo(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = TAR_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def format_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError  # pragma: no cover


def _spec(lines: Iterable[str]) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _rebase(lines: Iterable[str], prefix: str) -> list[str]:
    """Turn a nested ``.gitignore``'s lines (relative to ``prefix/``) into root-relative lines."""
    out = []
    for raw in lines:
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        body = line[1:] if neg else line
        anchored = "/" in body.rstrip("/")
        body = body.lstrip("/")
        rebased = f"{prefix}/{body}" if anchored else f"{prefix}/**/{body}"
        out.append(("!" if neg else "") + "/" + rebased)
    return out


def _has_negation(lines: Iterable[str]) -> bool:
    return any(line.strip().startswith("!") for line in lines)


def _secret_reason(rel: str, is_dir: bool, secret_spec: Any, reasons: list[str]) -> str | None:
    if rel.rsplit("/", 1)[-1] in _SECRET_ALLOWED:
        return None
    result = secret_spec.check_file(rel + "/" if is_dir else rel)
    if result.include and result.index is not None:
        return str(reasons[result.index])
    return None


def _sniff_secret(path: Path, size: int) -> str | None:
    if size > _SNIFF_SIZE or size == 0:
        return None
    try:
        head = path.read_bytes()
    except OSError:
        return None
    if _PRIVATE_KEY.search(head):
        return "private key"
    if path.suffix == ".json" and b'"private_key"' in head and _SERVICE_ACCOUNT.search(head):
        return "service-account key"
    return None


def _is_virtualenv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir()


def collect_context(
    root: Path,
    *,
    generated: Mapping[str, bytes] = {},
    executable: Iterable[str] = (),
) -> BuildContext:
    """The build context for ``root``: its files minus excludes and secrets, plus ``generated`` files.

    ``generated`` maps relative POSIX paths to contents; ``executable`` names generated paths to mark 0o755.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValidationError("context", "an existing directory", str(root))
    root = root.resolve()

    dockerignore = _read_lines(root / ".dockerignore")
    docker_spec = _spec(dockerignore) if dockerignore else None
    secret_spec = _spec(p for p, _ in SECRET_PATTERNS)
    secret_reasons = [r for _, r in SECRET_PATTERNS]

    files: dict[str, ContextFile] = {}
    secrets: list[ExcludedSecret] = []
    outside: list[str] = []

    # Each directory's rules: the defaults plus every .gitignore from the root down to it.
    base_lines = list(DEFAULT_EXCLUDES) + _read_lines(root / ".gitignore")
    negations = _has_negation(dockerignore) or _has_negation(base_lines)

    def excluded(rel: str, is_dir: bool, spec: Any) -> bool:
        probe = rel + "/" if is_dir else rel
        if docker_spec is not None:
            res = docker_spec.check_file(probe)
            if res.index is not None:
                return bool(res.include)
        return bool(spec.match_file(probe))

    def walk(directory: Path, rel_dir: str, lines: list[str], spec: Any) -> None:
        nonlocal negations
        if rel_dir:
            nested = _read_lines(directory / ".gitignore")
            if nested:
                lines = lines + _rebase(nested, rel_dir)
                spec = _spec(lines)
                negations = negations or _has_negation(nested)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            logger.warning("Cannot read %s: %s", directory, exc)
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            path = Path(entry.path)
            if entry.is_symlink():
                target = Path(os.path.realpath(path))
                if not target.exists() or not target.is_relative_to(root):
                    outside.append(rel)
                    continue
                is_dir = target.is_dir()
                if excluded(rel, is_dir, spec):
                    continue
                reason = _secret_reason(rel, is_dir, secret_spec, secret_reasons)
                if reason is None and not is_dir:
                    reason = _secret_reason(target.relative_to(root).as_posix(), False, secret_spec,
                                            secret_reasons)
                if reason is not None:
                    secrets.append(ExcludedSecret(path=rel, reason=reason))
                    continue
                link = os.path.relpath(target, path.parent)
                files[rel] = ContextFile(path=rel, size=0, mode=0o777, link=Path(link).as_posix())
                continue
            if entry.is_dir(follow_symlinks=False):
                if _is_virtualenv(path):
                    continue
                reason = _secret_reason(rel, True, secret_spec, secret_reasons)
                if reason is not None:
                    if not excluded(rel, True, spec):
                        secrets.append(ExcludedSecret(path=rel + "/", reason=reason))
                    continue
                if excluded(rel, True, spec) and not negations:
                    continue
                walk(path, rel, lines, spec)
                continue
            if not entry.is_file(follow_symlinks=False):
                continue  # sockets, fifos, devices
            if excluded(rel, False, spec):
                continue
            st = entry.stat(follow_symlinks=False)
            reason = _secret_reason(rel, False, secret_spec, secret_reasons) or _sniff_secret(path, st.st_size)
            if reason is not None:
                secrets.append(ExcludedSecret(path=rel, reason=reason))
                continue
            mode = _EXEC_MODE if st.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else _FILE_MODE
            files[rel] = ContextFile(path=rel, size=st.st_size, mode=mode, source=path)

    walk(root, "", base_lines, _spec(base_lines))

    exec_paths = set(executable)
    for rel, data in generated.items():
        clean = Path(rel).as_posix().lstrip("/")
        if clean.startswith("../") or clean in ("", "."):
            raise ValidationError("generated", "a relative path inside the context", rel)
        # A generated file replaces whatever the user had at that path (file or directory).
        for existing in [p for p in files if p == clean or p.startswith(clean + "/")]:
            del files[existing]
        mode = _EXEC_MODE if clean in exec_paths else _FILE_MODE
        files[clean] = ContextFile(path=clean, size=len(data), mode=mode, data=bytes(data))

    for s in secrets:
        logger.warning("Kept out of the build context (%s): %s", s.reason, s.path)
    return BuildContext(
        root=root,
        files=tuple(files[p] for p in sorted(files)),
        secrets=tuple(sorted(secrets, key=lambda s: s.path)),
        outside_links=tuple(sorted(outside)),
    )
