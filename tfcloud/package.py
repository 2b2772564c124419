"""The package stage (``--no-build``): a prepared job in, a Python source distribution in Cloud Storage out.

Instead of an image per change, the job's files travel as a source distribution in the staging bucket; each
replica runs the job's base image (:mod:`tfcloud.baseimage`: TensorFlow and the requirements, built once), whose
bootstrap unpacks the package from ``/gcs/`` and runs ``python -m tfcloud_job.start``:

1. The files are those an image would get (:func:`tfcloud.context.collect_context`: ignore files honoured,
   secrets kept out) plus the same generated files (:func:`tfcloud.containerize.generated_files`: the launcher,
   the requirements, tfcloud's runtime package), under ``tfcloud_job/job/`` in the archive.
2. Beside them: the start module (``templates/package_start.py.j2``: runs the launcher in the job's files;
   nothing is installed at start), ``PKG-INFO``, and a ``pyproject.toml`` whose in-tree build backend
   (``templates/package_build.py.j2``) makes the wheel without setuptools or a download.
3. The archive is deterministic (sorted, fixed times and owners, gzip without a time stamp): the same files
   give the same bytes. Its version and object name carry the digest of its content, so an unchanged job
   finds its package in the bucket and uploads nothing (:func:`upload_package` looks first).
"""

from __future__ import annotations

import hashlib
import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud._version import __version__
from tfcloud.artifacts import PackageRef, PreparedJob
from tfcloud.context import BuildContext, ContextFile, collect_context, format_size
from tfcloud.dockerfile import TFCLOUD_PYTHON_DIR
from tfcloud.errors import ConfigurationError, SubmitError
from tfcloud.launcher import LAUNCHER_NAME
from tfcloud.templates import render, template_dir

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["PACKAGE_MODULE", "PACKAGE_NAME", "PACKAGE_PREFIX", "PackagePlan", "plan_package", "upload_package"]

logger = logging.getLogger("tfcloud")

PACKAGE_NAME = "tfcloud_job"
#: What each replica runs: ``python -m tfcloud_job.start ARGS``.
PACKAGE_MODULE = f"{PACKAGE_NAME}.start"
#: Where packages go in the staging bucket.
PACKAGE_PREFIX = "tfcloud/packages/"
_BACKEND = "_tfcloud_build"
_LAYOUT = "tfcloud-package-v1"


@dataclass(frozen=True, kw_only=True)
class PackagePlan:
    """What :func:`plan_package` made: the job's files (``context``, as an image would get them), the archive's
    entries (``sdist``), the digest of its content and the file name (``tfcloud_job-0.0.0+DIGEST.tar.gz``)."""

    context: BuildContext
    sdist: BuildContext
    digest: str
    version: str

    @property
    def filename(self) -> str:
        return f"{PACKAGE_NAME}-{self.version}.tar.gz"

    def object_name(self) -> str:
        return PACKAGE_PREFIX + self.filename

    def data(self) -> bytes:
        """The archive's bytes (the same files give the same bytes)."""
        buffer = io.BytesIO()
        self.sdist.write_tar(buffer, compress=True)
        return buffer.getvalue()


def _start_module() -> str:
    return render("package_start.py.j2", version=__version__, module=PACKAGE_MODULE, launcher=LAUNCHER_NAME,
                  runtime=TFCLOUD_PYTHON_DIR)


def plan_package(job: PreparedJob, *, context_dir: Path | None = None,
                 tensorflow_version: str | None = None) -> PackagePlan:
    """The package of ``job``, computed in memory (nothing is uploaded; ``tfcloud submit --no-build --dry-run``
    shows it)."""
    from tfcloud.containerize import generated_files

    root = Path(context_dir or job.workdir).resolve()
    context = collect_context(root, generated=generated_files(job, root))
    start = _start_module()  # tf-keras and the requirements are the base image's (tfcloud.baseimage)
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
    for f in context.files:
        entries.append(ContextFile(path=f"{top}/{PACKAGE_NAME}/job/{f.path}", size=f.size, mode=f.mode,
                                   source=f.source, data=f.data, link=f.link))
    sdist = BuildContext(root=root, files=tuple(sorted(entries, key=lambda f: f.path)))
    return PackagePlan(context=context, sdist=sdist, digest=digest, version=version)


def upload_package(plan: PackagePlan, *, storage: Any, bucket: str, console: Console | None = None) -> PackageRef:
    """Put ``plan``'s archive in ``gs://BUCKET/tfcloud/packages/`` unless it is there already (one look-up):
    its :class:`PackageRef`. ``storage``: a ``google.cloud.storage.Client``."""
    from google.api_core import exceptions as gexc

    name = bucket.removeprefix("gs://").strip("/")
    uri = f"gs://{name}/{plan.object_name()}"
    blob = storage.bucket(name).blob(plan.object_name())
    try:
        if blob.exists():
            _say(console, f"Package {uri} is up to date: nothing to upload.")
            return PackageRef(uri=uri, module=PACKAGE_MODULE, digest=plan.digest, size=blob.size or 0, uploaded=0)
    except gexc.NotFound as exc:
        raise ConfigurationError(f"The staging bucket gs://{name} does not exist.",
                                 hint=f"Create it (gcloud storage buckets create gs://{name}), or set "
                                      "TFCLOUD_STAGING_BUCKET to one that does.") from exc
    except gexc.GoogleAPICallError as exc:
        raise ConfigurationError(f"Cannot read the staging bucket gs://{name}: {exc.message}") from exc
    data = plan.data()
    try:
        blob.upload_from_string(data, content_type="application/gzip", if_generation_match=0)
    except gexc.PreconditionFailed:
        pass  # another submission uploaded the same package a moment ago: same name, same bytes
    except gexc.NotFound as exc:
        raise ConfigurationError(f"The staging bucket gs://{name} does not exist.",
                                 hint=f"Create it (gcloud storage buckets create gs://{name}).") from exc
    except gexc.GoogleAPICallError as exc:
        raise SubmitError(f"Uploading the job's package to gs://{name} failed: {exc.message}") from exc
    _say(console, f"Package {uri} uploaded ({format_size(len(data))}; {plan.context.summary()}).")
    return PackageRef(uri=uri, module=PACKAGE_MODULE, digest=plan.digest, size=len(data), uploaded=len(data))


def _say(console: Console | None, message: str) -> None:
    if console is not None:
        console.print(message, markup=False, highlight=False)
    else:
        logger.info("%s", message)
