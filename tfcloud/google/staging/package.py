"""The package stage (``--no-build``): a prepared job in, a Python source distribution in Cloud Storage out.

Instead of an image per change, the job's files travel as a source distribution in the staging bucket; each
replica runs the job's base image (:mod:`tfcloud.google.staging.baseimage`: TensorFlow and the requirements, built
once), whose bootstrap unpacks the package from ``/gcs/`` and runs ``python -m tfcloud_job.start``:

1. The files are those an image would get (:func:`tfcloud.image.context.collect_context`: ignore files honoured,
   secrets kept out) plus the same generated files (:func:`tfcloud.image.containerize.generated_files`: the launcher,
   the requirements, tfcloud's runtime package), under ``tfcloud_job/job/`` in the archive.
2. Beside them: the start module (``templates/package_start.py.j2``: runs the launcher in the job's files;
   nothing is installed at start), ``PKG-INFO``, and a ``pyproject.toml`` whose in-tree build backend
   (``templates/package_build.py.j2``) makes the wheel without setuptools or a download.
3. The archive is deterministic (sorted, fixed times and owners, gzip without a time stamp): the same files
   give the same bytes. Its version and object name carry the digest of its content, so an unchanged job
   finds its package in the bucket and uploads nothing (:func:`upload_package` looks first).

Faithful to the image path, and checked before the upload:

- A symlink inside the project reaches the replica as it reaches an image: a wheel holds no links, so a link
  to a directory (``data -> realdata``) or a file is shipped as a copy of what it points at; a link to something
  the context leaves out is dropped and named (:attr:`PackagePlan.dropped_links`).
- What the package cannot carry is refused by :func:`plan_package`, before anything is uploaded (and in a plan):
  a file name that is not UTF-8, a requirement that is a path on this machine (``-e ./mylib``, ``./mylib``).
- The archive is written to a temporary file (:meth:`PackagePlan.spool`), never held in memory; its size, MD5
  and CRC32C are computed on the way. A package already at its content-addressed name is trusted only when its
  size and hash (the object's ``md5Hash``, else ``crc32c``) match; a damaged one is uploaded again. Every
  Cloud Storage call is bounded by the retry deadline (``TFCLOUD_RETRY_DEADLINE``, :mod:`tfcloud.google.cloud.gcloud`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import posixpath
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tfcloud._version import __version__
from tfcloud.entry.launcher import LAUNCHER_NAME
from tfcloud.entry.templates import render, template_dir
from tfcloud.errors import SubmitError, ValidationError
from tfcloud.google.cloud.checksums import ArchiveSums, HashingWriter
from tfcloud.image.context import DEFAULT_WARN_SIZE, BuildContext, ContextFile, collect_context, format_size, shown
from tfcloud.image.dockerfile import TFCLOUD_PYTHON_DIR
from tfcloud.job.artifacts import PackageRef, PreparedJob
from tfcloud.job.datasets import data_excludes

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.google.cloud.gcloud import RetryPolicy

__all__ = ["PACKAGE_MODULE", "PACKAGE_NAME", "PACKAGE_PREFIX", "PackagePlan", "plan_package", "upload_package"]

logger = logging.getLogger("tfcloud")

PACKAGE_NAME = "tfcloud_job"
#: What each replica runs: ``python -m tfcloud_job.start ARGS``.
PACKAGE_MODULE = f"{PACKAGE_NAME}.start"
#: Where packages go in the staging bucket.
PACKAGE_PREFIX = "tfcloud/packages/"
_BACKEND = "_tfcloud_build"
#: The resumable upload's chunk (a multiple of 256 KiB, as Cloud Storage requires): what one request holds.
_CHUNK = 8 * 1024 * 1024
_LAYOUT = "tfcloud-package-v2"  # v2: links shipped as copies


@dataclass(frozen=True, kw_only=True)
class PackagePlan:
    """What :func:`plan_package` made: the job's files (``context``, as an image would get them), the archive's
    entries (``sdist``), the digest of its content and the file name (``tfcloud_job-0.0.0+DIGEST.tar.gz``)."""

    context: BuildContext
    sdist: BuildContext
    digest: str
    version: str
    #: links that point at something the context leaves out: not in the package (a wheel cannot hold a link)
    dropped_links: tuple[str, ...] = ()

    @property
    def filename(self) -> str:
        return f"{PACKAGE_NAME}-{self.version}.tar.gz"

    def object_name(self) -> str:
        return PACKAGE_PREFIX + self.filename

    def data(self) -> bytes:
        """The archive's bytes (the same files give the same bytes), in memory: for tests and small packages;
        :meth:`spool` writes it to a temporary file instead."""
        buffer = io.BytesIO()
        self.sdist.write_tar(buffer, compress=True)
        return buffer.getvalue()

    def measure(self) -> ArchiveSums:
        """The archive's size and hashes, computed as it is written to nowhere (nothing is kept)."""
        sink = HashingWriter(None)
        self.sdist.write_tar(sink, compress=True)  # type: ignore[arg-type]
        return sink.sums()

    @contextlib.contextmanager
    def spool(self) -> Iterator[tuple[IO[bytes], ArchiveSums]]:
        """The archive written to a temporary file (removed on exit), rewound, with its size and hashes."""
        with tempfile.TemporaryFile(prefix="tfcloud-package-") as f:
            sink = HashingWriter(f)
            self.sdist.write_tar(sink, compress=True)  # type: ignore[arg-type]
            f.flush()
            f.seek(0)
            yield f, sink.sums()

    def warnings(self, *, warn_size: int = DEFAULT_WARN_SIZE) -> list[str]:
        """What a person should hear before the package is uploaded (the plan says it too): secret files kept
        out, symlinks that leave the project and links dropped, its size over ``warn_size`` (as an image
        context's)."""
        out: list[str] = []
        if self.context.secrets:
            out.append("Kept out of the package (secret deny-list): "
                       + ", ".join(f"{shown(s.path)} ({s.reason})" for s in self.context.secrets)
                       + ". To let a file in, add a line `!path` for it to .dockerignore.")
        if self.context.outside_links:
            out.append("Dropped symlinks that point outside the project: "
                       + ", ".join(shown(p) for p in self.context.outside_links) + ".")
        if self.dropped_links:
            out.append("Dropped symlinks that point at files the package leaves out: "
                       + ", ".join(shown(p) for p in self.dropped_links) + ".")
        size = self.context.total_size
        if size > warn_size:
            entries = ", ".join(f"{shown(p)} {format_size(s)}" for p, s in self.context.biggest())
            out.append(f"The job's files are {format_size(size)} (more than {format_size(warn_size)}); biggest "
                       f"entries: {entries}. Add what the job does not need to .dockerignore.")
        return out


def _start_module() -> str:
    return render("package_start.py.j2", version=__version__, module=PACKAGE_MODULE, launcher=LAUNCHER_NAME,
                  runtime=TFCLOUD_PYTHON_DIR)


def plan_package(job: PreparedJob, *, context_dir: Path | None = None,
                 tensorflow_version: str | None = None) -> PackagePlan:
    """The package of ``job``: its entries and digest (nothing is uploaded, nor the archive written:
    :meth:`PackagePlan.spool` writes it; ``tfcloud submit --no-build --dry-run`` shows it). Refuses, as a
    :class:`ValidationError`, what the package cannot carry: a requirement that is a path on this machine, a file
    name that is not UTF-8."""
    from tfcloud.image.containerize import generated_files

    root = Path(context_dir or job.workdir).resolve()
    _check_requirements(job)
    context = collect_context(root, generated=generated_files(job, root), exclude=data_excludes(job.spec.data, root))
    _check_names(context)
    start = _start_module()  # tf-keras and the requirements are the base image's (tfcloud.google.staging.baseimage)
    backend_template = (template_dir() / "package_build.py.j2").read_bytes()
    h = hashlib.sha256(f"{_LAYOUT}\n{context.digest()}\n".encode())
    h.update(start.encode())
    h.update(backend_template)
    digest = h.hexdigest()
    version = f"0.0.0+{digest[:32]}"
    top = f"{PACKAGE_NAME}-{version}"
    backend = render("package_build.py.j2", version=__version__, package=PACKAGE_NAME, version_string=version,
                     summary="A tfcloud job's files (tfcloud submit --no-build)")
    pkg_info = f"Metadata-Version: 2.1\nName: {PACKAGE_NAME}\nVersion: {version}\n"
    pyproject = (f'[build-system]\nrequires = []\nbuild-backend = "{_BACKEND}"\nbackend-path = ["."]\n')
    own = {
        "PKG-INFO": pkg_info, "pyproject.toml": pyproject, f"{_BACKEND}.py": backend,
        f"{PACKAGE_NAME}/__init__.py": "", f"{PACKAGE_NAME}/start.py": start,
    }
    entries = [ContextFile(path=f"{top}/{path}", size=len(text.encode()), data=text.encode())
               for path, text in own.items()]
    files, dropped = _without_links(context)
    for f in files:
        entries.append(ContextFile(path=f"{top}/{PACKAGE_NAME}/job/{f.path}", size=f.size, mode=f.mode,
                                   source=f.source, data=f.data))
    sdist = BuildContext(root=root, files=tuple(sorted(entries, key=lambda f: f.path)))
    return PackagePlan(context=context, sdist=sdist, digest=digest, version=version, dropped_links=dropped)


def _without_links(context: BuildContext) -> tuple[list[ContextFile], tuple[str, ...]]:
    """The context's files with every symlink replaced by a copy of what it points at (a wheel holds no links;
    the image holds the link and its target, so the job sees the same files): a file link by the file, a
    directory link by the files under the directory, links through links followed. Links whose target the
    context leaves out: dropped, named in the second value."""
    regular = {f.path: f for f in context.files if f.link is None}
    links = {f.path: posixpath.normpath(posixpath.join(posixpath.dirname(f.path), f.link))
             for f in context.files if f.link is not None}

    def resolve(path: str, depth: int = 0) -> str:
        """``path`` with its leading components that are links replaced by their targets (40 levels, as Linux)."""
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            head = "/".join(parts[:i])
            if head in links and depth < 40:
                return resolve("/".join([links[head], *parts[i:]]).strip("/"), depth + 1)
        return path

    out = dict(regular)
    dropped: list[str] = []
    for link in sorted(links):
        target = resolve(link)
        if target in regular:
            out[link] = _copy(regular[target], link)
            continue
        inside = [p for p in regular if p.startswith(target + "/")]
        # files reached through a link inside the linked directory too
        inside += [p for p in links if p.startswith(target + "/") and resolve(p) in regular]
        if not inside:
            dropped.append(link)
            continue
        for path in inside:
            source = regular[resolve(path)]
            out[link + path[len(target):]] = _copy(source, link + path[len(target):])
    return [out[p] for p in sorted(out)], tuple(dropped)


def _copy(f: ContextFile, path: str) -> ContextFile:
    return ContextFile(path=path, size=f.size, mode=f.mode, source=f.source, data=f.data)


def _check_names(context: BuildContext) -> None:
    """Every name in the package is UTF-8 text: a wheel's and a tar's names are (a name read from disk that is
    not holds surrogate escapes)."""
    for f in context.files:
        try:
            f.path.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                "build context", "file names in UTF-8 (a --no-build package stores its names as UTF-8)",
                f"<{shown(f.path)}>",
                hint="Rename the file, or keep it out of the job with a line for it in .dockerignore.") from None


def _check_requirements(job: PreparedJob) -> None:
    """A requirement that is a path on this machine (``-e ./mylib``, ``./mylib``, ``file:...``) cannot be installed
    where the package runs: refused before anything is uploaded, naming the file and line."""
    from tfcloud.entry.requirements import local_path_requirements

    found = local_path_requirements(job.spec.requirements_txt, job.requirements)
    if found:
        text, source = found[0]
        raise ValidationError(
            "requirements_txt", "requirements pip can install from an index or a URL where the --no-build package "
            "runs (not paths on this machine)", f"<{source}: {text!r}>",
            hint="Put the library's code in the project beside the script (it travels with the job's files and "
                 "imports from there), or install it from an index or a URL.")


def upload_package(plan: PackagePlan, *, storage: Any, bucket: str, console: Console | None = None,
                   policy: RetryPolicy | None = None) -> PackageRef:
    """Put ``plan``'s archive in ``gs://BUCKET/tfcloud/packages/`` unless the same bytes are there already: its
    :class:`PackageRef`. ``storage``: a ``google.cloud.storage.Client``; ``policy``: the retry deadline that bounds
    every Cloud Storage call together (the look, the upload, the check after it).

    A stored object at the package's name is trusted only when its size and hash match the archive's; a damaged
    one is replaced (conditionally on its generation). Errors: :class:`ConfigurationError` (no such bucket, no
    access), :class:`SubmitError` (refused, or still failing at the deadline: nothing was submitted)."""
    from tfcloud.google.cloud.gcloud import RetryPolicy, StorageDeadline

    name = bucket.removeprefix("gs://").strip("/")
    uri = f"gs://{name}/{plan.object_name()}"
    deadline = StorageDeadline(policy or RetryPolicy(), uri=uri)
    for line in plan.warnings():
        _say(console, line)
    with plan.spool() as (archive_file, archive):
        blob = storage.bucket(name).blob(plan.object_name())
        stored = deadline.call(lambda retry, timeout: storage.bucket(name).get_blob(
            plan.object_name(), retry=retry, timeout=timeout), what=f"Looking for the job's package at {uri}")
        generation = 0
        if stored is not None:
            if archive.matches(stored):
                _say(console, f"Package {uri} is up to date: nothing to upload.")
                return PackageRef(uri=uri, module=PACKAGE_MODULE, digest=plan.digest, size=archive.size,
                                  uploaded=0)
            generation = int(stored.generation)
            _say(console, f"Package {uri} is stored but damaged (its size or hash differs from the job's files): "
                          "uploading it again.")
        blob.md5_hash = archive.md5  # Cloud Storage checks the bytes it receives against it
        blob.chunk_size = _CHUNK  # a resumable upload reads one chunk at a time (its default chunk: 100 MiB)

        def upload(retry: Any, timeout: float) -> None:
            archive_file.seek(0)
            blob.upload_from_file(archive_file, size=archive.size, content_type="application/gzip",
                                  if_generation_match=generation, retry=retry, timeout=timeout)

        from google.api_core import exceptions as gexc

        # PreconditionFailed: another submission wrote it a moment ago (or a retry found our own first try's
        # object): checked below like any other
        with contextlib.suppress(gexc.PreconditionFailed):
            deadline.call(upload, what=f"Uploading the job's package to {uri}")
        stored = deadline.call(lambda retry, timeout: storage.bucket(name).get_blob(
            plan.object_name(), retry=retry, timeout=timeout), what=f"Checking the job's package at {uri}")
        if stored is None or not archive.matches(stored):
            raise SubmitError(f"The job's package at {uri} does not hold what was uploaded (its size or hash "
                              "differs); nothing was submitted.",
                              hint=f"Look at it with `gcloud storage objects describe {uri}`, then submit again.")
    _say(console, f"Package {uri} uploaded ({format_size(archive.size)}; {plan.context.summary()}).")
    return PackageRef(uri=uri, module=PACKAGE_MODULE, digest=plan.digest, size=archive.size, uploaded=archive.size)


def _say(console: Console | None, message: str) -> None:
    if console is not None:
        console.print(message, markup=False, highlight=False)
    else:
        logger.info("%s", message)
