"""The base image of a ``--no-build`` job: TensorFlow, the pinned packages and the requirements, built once.

Google's prebuilt TensorFlow training images stop at TensorFlow 2.17, past its end of availability
(:mod:`tfcloud.google.catalog.prebuilt`), so a build-free job cannot run on them. It runs instead on an image of its
own, made from what changes rarely, while the code (what changes often) goes to the staging bucket as a package
(:mod:`tfcloud.google.staging.package`):

1. :func:`plan_base_image`: the parent (``--parent-image``, else TensorFlow's published image for the TensorFlow
   the job was written against; TPU: Python plus ``tensorflow-tpu``), the TensorFlow the image must carry, tf-keras
   pinned to that release when the strategy needs it, the job's requirements, and a bootstrap
   (``templates/package_bootstrap.py.j2``), under ``templates/package_base.Dockerfile.j2``. The tag is the digest
   of all of them (``REPOSITORY/tfcloud-base:DIGEST``): the same inputs name the same image.
2. :func:`ensure_base_image`: one look-up in the registry (over HTTP, :func:`registry_has`: a code-only change
   needs no Docker engine); only when the tag is absent, the project's builder (the Docker engine, or Cloud Build
   with ``--image-build-bucket``) builds and pushes it. The build fails when the
   image's TensorFlow (or tf-keras) is not the one planned, so a replica never runs another.
3. :func:`container_command`: each pool's ``container_spec`` runs the bootstrap with the package's path under
   ``/gcs/`` (Vertex AI mounts Cloud Storage there with Cloud Storage FUSE); the bootstrap checks the versions
   again, unpacks the package and runs it. Nothing is installed at a replica's start.

Why ``container_spec`` and not ``python_package_spec``: Google's ``PythonPackageSpec.executor_image_uri`` must be
one of the prebuilt training images ("You must use an image from this list"), which no longer carry a supported
TensorFlow; a custom image runs as a custom container (docs/vertex.md, "Build-free jobs").
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud._version import __version__
from tfcloud.entry.templates import render
from tfcloud.errors import ConfigurationError
from tfcloud.google.staging.package import PACKAGE_MODULE
from tfcloud.image.context import BuildContext, ContextFile
from tfcloud.image.dockerfile import (
    DOCKERFILE_PATH,
    LIBTPU_INDEX,
    REQUIREMENTS_DIR,
    default_base_image,
    installed_tensorflow_version,
)
from tfcloud.job.artifacts import ImageRef, PreparedJob

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.image.builders import Builder

__all__ = ["BASE_IMAGE_NAME", "BOOTSTRAP", "BaseImagePlan", "container_command", "ensure_base_image",
           "gcs_path", "plan_base_image", "registry_has"]

BASE_IMAGE_NAME = "tfcloud-base"
_BASE_DIR = "/opt/tfcloud-base"
#: Where the bootstrap lies in the image (each replica's command).
BOOTSTRAP = f"{_BASE_DIR}/bootstrap.py"
_LAYOUT = "tfcloud-base-v1"


@dataclass(frozen=True, kw_only=True)
class BaseImagePlan:
    """The base image a ``--no-build`` job runs on: its URI (content-addressed), its parent, the TensorFlow it
    carries, the pinned packages and requirement files it installs, and its build context."""

    uri: str
    parent: str
    tensorflow: str
    tf_keras: str | None
    requirements: tuple[str, ...]  # the requirement files' paths in the context
    context: BuildContext
    digest: str

    def reason(self) -> str:
        """The plan's sentence: what the image holds and when it is built."""
        pins = f" and {self.tf_keras}" if self.tf_keras else ""
        reqs = " plus the job's requirements" if self.requirements else ""
        return (f"TensorFlow {self.tensorflow}{pins}{reqs} on {self.parent}; built and pushed once, only when "
                "the registry lacks this tag (a code-only change builds and pushes nothing)")


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _tf_keras_pin(tensorflow: str) -> str:
    """tf-keras for TensorFlow ``tensorflow``: the installed tf-keras when it is of the same release, else the
    newest of that release (tf-keras follows TensorFlow's numbers)."""
    try:
        installed = importlib.metadata.version("tf-keras")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed and _minor(installed) == _minor(tensorflow):
        return f"tf-keras=={installed}"
    return f"tf-keras~={_minor(tensorflow)}.0"


def plan_base_image(job: PreparedJob, *, repository: str, tensorflow_version: str | None = None) -> BaseImagePlan:
    """The base image of ``job`` in ``repository``, computed without a builder (a dry run shows it).
    ``tensorflow_version``: the TensorFlow the job was written against (default: the installed one)."""
    from tfcloud.image.containerize import requirements_files
    from tfcloud.image.dockerfile import tensorflow_tpu_requirement, tpu_pod_base

    spec = job.spec
    installed = tensorflow_version or installed_tensorflow_version()
    tpu = spec.has_tpu and not spec.docker_config.parent_image
    tpu_requirement = tensorflow_tpu_requirement(installed) if tpu else None
    tensorflow = tpu_requirement.split("==", 1)[1] if tpu_requirement else installed
    if tensorflow is None:
        raise ConfigurationError(
            "Cannot plan the --no-build base image: TensorFlow is not installed here, so tfcloud does not know "
            "which TensorFlow the job needs.",
            hint='Install the TensorFlow the job uses (pip install "tfcloud[tensorflow]").')
    pod = tpu_pod_base(spec, installed)  # TensorFlow on a TPU Pod: its base image, the bootstrap as CMD
    parent = spec.docker_config.parent_image or (pod.value if pod else default_base_image(
        gpu=spec.has_gpu, tensorflow_version=tensorflow, tpu=spec.has_tpu))
    tf_keras = _tf_keras_pin(tensorflow) if spec.strategy.needs_tf_keras else None
    requirements = requirements_files(job)
    bootstrap = render("package_bootstrap.py.j2", version=__version__, tensorflow=tensorflow, tf_keras=tf_keras,
                       module=PACKAGE_MODULE)
    dockerfile = render("package_base.Dockerfile.j2", version=__version__, parent=parent, tensorflow=tensorflow,
                        tf_keras=tf_keras, tensorflow_tpu=tpu_requirement, libtpu_index=LIBTPU_INDEX,
                        requirements=bool(requirements), base_dir=_BASE_DIR, bootstrap=BOOTSTRAP,
                        cmd=pod is not None)
    files = {DOCKERFILE_PATH: dockerfile.encode(), ".tfcloud/base/bootstrap.py": bootstrap.encode(), **requirements}
    h = hashlib.sha256(f"{_LAYOUT}\n".encode())
    for path in sorted(files):
        h.update(f"{path}\n{len(files[path])}\n".encode())
        h.update(files[path])
    digest = h.hexdigest()
    context = BuildContext(root=Path(job.workdir).resolve(), files=tuple(
        ContextFile(path=path, size=len(data), data=data) for path, data in sorted(files.items())))
    return BaseImagePlan(uri=f"{repository.rstrip('/')}/{BASE_IMAGE_NAME}:{digest[:24]}", parent=parent,
                         tensorflow=tensorflow, tf_keras=tf_keras,
                         requirements=tuple(p for p in sorted(files) if p.startswith(f"{REQUIREMENTS_DIR}/")),
                         context=context, digest=digest)


def registry_has(uri: str) -> bool | None:
    """Whether the registry has ``uri``, asked over HTTP with no Docker engine (one ``HEAD``): a loopback registry
    as is, Artifact Registry (``*-docker.pkg.dev``) and ``gcr.io`` with Google's application-default token. None
    when it cannot be asked that way (another registry, no credentials, a refusal): the builder asks then."""
    from tfcloud.google.staging.cloudbuild import manifest_exists

    host = uri.split("/", 1)[0]
    name = host.rsplit(":", 1)[0]
    token = None
    if host.endswith(("-docker.pkg.dev", "gcr.io")):
        try:
            import google.auth
            import google.auth.transport.requests

            credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
            credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
            token = credentials.token
        except Exception:  # no google-auth, no credentials: the builder asks with Docker's
            return None
    elif not (name in ("localhost", "127.0.0.1") or name.startswith("127.")):
        return None
    try:
        return manifest_exists(uri, token=token, timeout=10)
    except ConfigurationError:
        return None


def ensure_base_image(plan: BaseImagePlan, *, builder: Callable[[], Builder], console: Console | None = None,
                      lookup: Callable[[str], bool | None] = registry_has) -> ImageRef:
    """``plan``'s image in its registry: found with one look-up (``lookup``, with no Docker engine; else the
    builder's), else built and pushed (once). ``builder`` makes the builder, only when it is needed (closed
    here)."""
    found = lookup(plan.uri)
    made: Builder | None = None
    try:
        if found is None:
            made = builder()
            found = made.exists(plan.uri, pushed=True)
        if found:
            _say(console, f"Base image {plan.uri} is up to date: nothing to build or push.")
            return ImageRef(uri=plan.uri, built=False)
        _say(console, f"Base image {plan.uri}: building it once ({plan.reason().split(';')[0]}).")
        made = made or builder()
        ref = made.build(plan.context, plan.uri, push=True)
    finally:
        if made is not None:
            made.close()
    _say(console, f"Base image {ref.uri} {'built' if ref.built else 'reused'} and pushed.")
    return ref


def gcs_path(uri: str) -> str:
    """``gs://BUCKET/OBJECT`` as a replica reads it: ``/gcs/BUCKET/OBJECT`` (Cloud Storage FUSE)."""
    return "/gcs/" + uri.removeprefix("gs://")


def container_command(package_uri: str) -> list[str]:
    """A pool's ``container_spec.command``: the base image's bootstrap with the package under ``/gcs/`` (the
    job's arguments follow as ``args``)."""
    return ["python3", BOOTSTRAP, gcs_path(package_uri)]


def _say(console: Console | None, message: str) -> None:
    if console is not None:
        console.print(message, markup=False, highlight=False)
    else:
        import logging

        logging.getLogger("tfcloud").info("%s", message)
