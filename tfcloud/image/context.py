"""The build context: the files a job's image needs, and nothing else.

:func:`collect_context` walks the entry point's directory (or a ``--context`` directory) and keeps what the
job needs. In order:

1. **Default excludes** (:data:`DEFAULT_EXCLUDES`): version control, virtualenvs (any directory holding a
   ``pyvenv.cfg`` or ``conda-meta``, whatever its name), caches, ``.ipynb_checkpoints``, build outputs.
   A ``!pattern`` in ``.dockerignore`` can bring back the pattern-based ones (not virtualenvs).
2. **Ignore files**: every ``.gitignore`` (the root's and nested ones, relative to their directory), with
   gitignore's rules (pathspec's gitwildmatch); then the root's ``.dockerignore``, with Docker's own rules
   (:mod:`tfcloud.image.dockerignore`: patterns relative to the root, so ``*.csv`` keeps ``data/x.csv``), which has
   the last word wherever one of its lines matches.
3. **Secret deny-list** (:mod:`tfcloud.image.secretscan`: :data:`SECRET_PATTERNS`, plus what it finds by content:
private
   keys, JSON keys of any size, token-shaped lines in rc files): kept out whatever the ignore files say, and
   named in :attr:`BuildContext.secrets`, unless a ``!path`` line of ``.dockerignore`` without wildcards
   names the file or a directory above it (then it is named in :attr:`BuildContext.let_in`). A
   ``.dockerignore`` line Docker refuses is a :class:`ValidationError`; an invalid ``.gitignore`` line is
   skipped, as git does.
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
import stat
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tfcloud.config.docsite import page
from tfcloud.errors import BuildError, ValidationError
from tfcloud.image.dockerignore import DockerIgnore, DockerIgnoreError, DockerPattern
from tfcloud.image.gitignore import gitignore_spec, glob_escape, has_negation, read_lines, rebase, valid_lines
from tfcloud.image.secretscan import SECRET_PATTERNS, secret_reason, secret_spec, sniff_secret

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_WARN_SIZE",
    "SECRET_PATTERNS",
    "BuildContext",
    "ContextFile",
    "ExcludedSecret",
    "collect_context",
    "deny_list_overrides",
    "format_size",
    "read_dockerignore",
    "shown",
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
            h.update(self.link.encode("utf-8", "surrogateescape"))
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
    """A file on the secret deny-list (kept out, or let in by a ``!path`` line), and why."""

    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class BuildContext:
    """The files of one image build. Build it with :func:`collect_context`."""

    root: Path
    files: tuple[ContextFile, ...]  # sorted by path
    secrets: tuple[ExcludedSecret, ...] = ()
    outside_links: tuple[str, ...] = ()
    let_in: tuple[ExcludedSecret, ...] = ()  # on the deny-list, let in by a ``!path`` line in .dockerignore

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
        """What a person should hear before this context is built (one line each): secrets kept out, and let
        in, links dropped, size. Paths are escaped (:func:`shown`) but not rich markup: print them as text."""
        out: list[str] = []
        if self.secrets:
            names = ", ".join(f"{shown(s.path)} ({s.reason})" for s in self.secrets)
            first = next((s.path for s in self.secrets if not s.path.endswith("/")), self.secrets[0].path)
            example = shown(glob_escape(first))
            out.append(f"Kept out of the image (secret deny-list): {names}. To let a file in, add a line "
                       f"`!path` for it to .dockerignore (e.g. `!{example}`).")
        if self.let_in:
            names = ", ".join(f"{shown(s.path)} ({s.reason})" for s in self.let_in)
            out.append(f"Let into the image by `!path` lines in .dockerignore, despite the deny-list: {names}.")
        if self.outside_links:
            out.append(
                "Dropped symlinks that point outside the build context: "
                + ", ".join(shown(p) for p in self.outside_links) + "."
            )
        size = self.size_warning(warn_size=warn_size)
        return [*out, size] if size else out

    def size_warning(self, *, warn_size: int = DEFAULT_WARN_SIZE) -> str | None:
        """The context's size over ``warn_size``, with its biggest entries; None under it."""
        if self.total_size <= warn_size:
            return None
        entries = ", ".join(f"{shown(p)} {format_size(s)}" for p, s in self.biggest())
        return (f"The build context is {format_size(self.total_size)} (more than {format_size(warn_size)}); "
                f"biggest entries: {entries}. Add what the image does not need to .dockerignore.")

    @functools.cached_property
    def _digest(self) -> str:
        h = hashlib.sha256(b"tfcloud-context-v1\n")
        for f in self.files:
            kind = "l" if f.is_link else "f"
            try:
                content = f.content_digest()
            except OSError as exc:
                raise ValidationError(
                    "build context", "readable files", f"<{shown(f.path)}: {exc.strerror or exc}>",
                    hint=f"Make it readable, or keep it out of the image with a line `/{shown(f.path)}` "
                         "in .dockerignore.",
                ) from exc
            h.update(f"{f.path}\0{kind}\0{f.mode:o}\0{content}\n".encode("utf-8", "surrogateescape"))
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
                        f"Could not add {shown(f.path)} to the build context: {exc}. "
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


def read_dockerignore(path: Path, *, name: str = ".dockerignore") -> DockerIgnore:
    """A root's ``.dockerignore`` (Docker's rules, :mod:`tfcloud.image.dockerignore`); a line Docker refuses is a
    :class:`ValidationError` naming it (``name``: how the message names the file)."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return DockerIgnore(patterns=())
    try:
        return DockerIgnore.parse(text)
    except DockerIgnoreError as exc:
        raise ValidationError(
            f"{name} line {exc.number}", "a pattern Docker accepts", shown(exc.line),
            hint=f"Docker refuses {exc.reason}. Remove the line, or escape a literal `!`, `[` or `\\` with a backslash "
                 "(`\\!name`); see " + page("containers") + ".",
        ) from None


def deny_list_overrides(docker: DockerIgnore) -> tuple[DockerIgnore, tuple[str, ...]]:
    """The one override of the secret deny-list (an image's, a package's, a data set's): the ``!path`` lines of
    ``docker`` without wildcards let in what they name (a ``!*.json`` does not). Returns them as patterns whose
    :meth:`~DockerIgnore.decide` is True for what they name (and what lies under it), and as paths."""
    lines = tuple(p.literal for p in docker.patterns if p.exclusion and p.literal is not None)
    return DockerIgnore(patterns=tuple(DockerPattern.compile(glob_escape(line), exclusion=False)
                                       for line in lines)), lines


def shown(path: str) -> str:
    """A path as a person should see it: bytes that are not UTF-8 and control characters escaped."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text)


def _is_virtualenv(path: Path) -> bool:
    try:
        return (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir()
    except OSError:  # a directory this user cannot search: the walk says so
        return False


def collect_context(
    root: Path,
    *,
    generated: Mapping[str, bytes] = {},
    executable: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> BuildContext:
    """The build context for ``root``: its files minus excludes and secrets, plus ``generated`` files.

    ``generated`` maps relative POSIX paths to contents; ``executable`` names generated paths to mark 0o755;
    ``exclude`` names relative POSIX paths left out whatever the ignore files say (``--data`` directories,
    shipped apart: :func:`tfcloud.job.datasets.data_excludes`).
    Raises :class:`ValidationError` for a ``.dockerignore`` line that is not a valid pattern.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValidationError("context", "an existing directory", str(root))
    root = root.resolve()

    docker = read_dockerignore(root / ".dockerignore")
    overrides, override_lines = deny_list_overrides(docker)
    deny = secret_spec()
    secret_reasons = [r for _, r in SECRET_PATTERNS]

    left_out = frozenset(exclude)
    files: dict[str, ContextFile] = {}
    secrets: list[ExcludedSecret] = []
    let_in: list[ExcludedSecret] = []
    outside: list[str] = []

    # Each directory's rules: the defaults plus every .gitignore from the root down to it.
    base_lines = list(DEFAULT_EXCLUDES) + valid_lines(read_lines(root / ".gitignore"), ".gitignore")
    negations = has_negation(base_lines)  # a .gitignore `!` line (the .dockerignore's: may_bring_back_under)

    def excluded(rel: str, is_dir: bool, spec: Any) -> bool:
        decision = docker.decide(rel)  # Docker's rules: relative to the root, the last matching line decides
        if decision is not None:
            return decision
        return bool(spec.match_file(rel + "/" if is_dir else rel))

    def overridden(rel: str, is_dir: bool) -> bool:
        return overrides.decide(rel) is True

    def secret(rel: str, is_dir: bool, reason: str | None) -> bool:
        """Record a deny-listed entry (kept out, or let in by a ``!path`` line); True when it is kept out."""
        if reason is None:
            return False
        if overridden(rel, is_dir):
            let_in.append(ExcludedSecret(path=rel + "/" if is_dir else rel, reason=reason))
            return False
        secrets.append(ExcludedSecret(path=rel + "/" if is_dir else rel, reason=reason))
        return True

    def walk(directory: Path, rel_dir: str, lines: list[str], spec: Any, inherited: str | None = None,
             allowed: frozenset[int] = frozenset()) -> None:
        """``inherited``: the deny-list reason of a directory walked only for the ``!path`` lines under it;
        ``allowed``: the deny-list patterns of directories above that a ``!path`` line let in."""
        nonlocal negations
        if rel_dir:
            nested = valid_lines(read_lines(directory / ".gitignore"), f"{rel_dir}/.gitignore")
            if nested:
                lines = lines + rebase(nested, rel_dir)
                spec = gitignore_spec(lines)
                negations = negations or has_negation(nested)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:  # as Docker's own context walk does: refused, not an image without it
            where = f"{shown(rel_dir)}/" if rel_dir else "."
            raise ValidationError(
                "build context", "readable files and directories", f"<{where}: {exc.strerror or exc}>",
                hint=f"Make it readable, or keep it out of the image with a line `/{where}` in .dockerignore.",
            ) from None
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if rel in left_out:
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                target = Path(os.path.realpath(path))
                if not target.exists() or not target.is_relative_to(root):
                    outside.append(rel)
                    continue
                is_dir = target.is_dir()
                if excluded(rel, is_dir, spec):
                    continue
                reason = inherited or secret_reason(rel, is_dir, deny, secret_reasons, allowed)
                if reason is None and not is_dir:
                    reason = secret_reason(target.relative_to(root).as_posix(), False, deny,
                                            secret_reasons)
                if secret(rel, is_dir, reason):
                    continue
                link = os.path.relpath(target, path.parent)
                files[rel] = ContextFile(path=rel, size=0, mode=0o777, link=Path(link).as_posix())
                continue
            if entry.is_dir(follow_symlinks=False):
                if _is_virtualenv(path):
                    continue
                reason = inherited or secret_reason(rel, True, deny, secret_reasons, allowed)
                if reason is not None and not overridden(rel, True):
                    if any(o.startswith(rel + "/") for o in override_lines):
                        # a !path line may name something inside: look, and if it does not, name the directory
                        kept, taken = len(secrets), len(let_in)
                        walk(path, rel, lines, spec, reason, allowed)
                        if len(let_in) == taken and len(secrets) > kept:
                            del secrets[kept:]
                            secrets.append(ExcludedSecret(path=rel + "/", reason=reason))
                    elif not excluded(rel, True, spec):
                        secrets.append(ExcludedSecret(path=rel + "/", reason=reason))
                    continue
                if reason is not None:
                    let_in.append(ExcludedSecret(path=rel + "/", reason=reason))
                    index = deny.check_file(rel + "/").index
                    inner = allowed | {index} if index is not None else allowed
                else:
                    inner = allowed
                if excluded(rel, True, spec) and not negations and not docker.may_bring_back_under(rel):
                    continue
                walk(path, rel, lines, spec, None, inner)
                continue
            if not entry.is_file(follow_symlinks=False):
                continue  # sockets, fifos, devices
            if excluded(rel, False, spec):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError as exc:  # removed since the directory was read
                logger.debug("Skipped %s: %s", shown(rel), exc)
                continue
            except OSError as exc:  # a directory that can be listed but not searched (mode r without x)
                raise ValidationError(
                    "build context", "readable files and directories", f"<{shown(rel)}: {exc.strerror or exc}>",
                    hint=f"Make it readable, or keep it out of the image with a line `/{shown(rel)}` in "
                         ".dockerignore.") from None
            reason = (inherited or secret_reason(rel, False, deny, secret_reasons, allowed)
                      or sniff_secret(path, st.st_size))
            if secret(rel, False, reason):
                continue
            mode = _EXEC_MODE if st.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) else _FILE_MODE
            files[rel] = ContextFile(path=rel, size=st.st_size, mode=mode, source=path)

    walk(root, "", base_lines, gitignore_spec(base_lines))

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
        logger.debug("Kept out of the build context (%s): %s", s.reason, shown(s.path))
    return BuildContext(
        root=root,
        files=tuple(files[p] for p in sorted(files)),
        secrets=tuple(sorted(secrets, key=lambda s: s.path)),
        outside_links=tuple(sorted(outside)),
        let_in=tuple(sorted(let_in, key=lambda s: s.path)),
    )
