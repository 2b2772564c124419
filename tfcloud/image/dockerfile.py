"""The Dockerfile of a job's image, rendered from ``templates/Dockerfile.j2`` by a pure function.

Layers, cheapest to change last: the base image; the requirements (their own layer, so a code-only change
reuses it); tf-keras when the launcher needs it and the base lacks it; tfcloud's own package (copied from
this machine into the context, never downloaded); the job's files; an exec-form entrypoint that runs the
launcher. No build argument or layer carries a secret.

TensorFlow on a multi-host TPU slice (a TPU Pod) is built FROM Vertex AI's TPU Pod base image and runs the launcher
as CMD, never ENTRYPOINT, which would override the base image's own (:func:`tpu_pod_base`; rule
``tpu-pod-tensorflow-image``, "Training with TPU accelerators", TPU Pod).
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

from tfcloud._version import __version__
from tfcloud.entry.launcher import LAUNCHER_NAME
from tfcloud.entry.templates import render
from tfcloud.errors import ConfigurationError

if TYPE_CHECKING:
    from tfcloud.google.catalog.prebuilt import Choice
    from tfcloud.job.spec import JobSpec

__all__ = [
    "DOCKERFILE_PATH",
    "IMAGE_WORKDIR",
    "LAUNCHER_COMMAND",
    "REQUIREMENTS_DIR",
    "REQUIREMENTS_PATH",
    "TFCLOUD_PYTHON_DIR",
    "default_base_image",
    "installed_tensorflow_version",
    "render_dockerfile",
    "tensorflow_tpu_requirement",
    "tf_keras_requirement",
    "tpu_pod_base",
]

#: Where tfcloud's generated files live in the build context.
DOCKERFILE_PATH = ".tfcloud/Dockerfile"
REQUIREMENTS_DIR = ".tfcloud/requirements"  # the requirements file and the files it includes (-r, -c)
REQUIREMENTS_PATH = f"{REQUIREMENTS_DIR}/requirements.txt"
TFCLOUD_PYTHON_DIR = ".tfcloud/python"
#: The job's working directory inside the image.
IMAGE_WORKDIR = "/app"
#: What the image runs: its ENTRYPOINT, or, on a TPU Pod base image, its CMD (and the container spec's ``args``).
LAUNCHER_COMMAND = ("python3", LAUNCHER_NAME)

#: TPU jobs: TensorFlow's official images carry no libtpu, so a TPU image is Python plus ``tensorflow-tpu``
#: (TensorFlow built for TPU VMs, which pulls libtpu from Google's libtpu index). docs/vertex.md, "TPUs".
TPU_BASE_IMAGE = "python:3.12-slim"
LIBTPU_INDEX = "https://storage.googleapis.com/libtpu-tf-releases/index.html"

_TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos")


def installed_tensorflow_version() -> str | None:
    """The installed TensorFlow's version (``tensorflow`` or one of its variant distributions), or None."""
    for dist in _TF_DISTRIBUTIONS:
        try:
            return importlib.metadata.version(dist).split("+", 1)[0]
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def default_base_image(*, gpu: bool, tensorflow_version: str | None = None, tpu: bool = False) -> str:
    """The official TensorFlow image for the installed TensorFlow (``-gpu`` when ``gpu``). No network.

    ``tpu``: :data:`TPU_BASE_IMAGE`, onto which the Dockerfile installs :func:`tensorflow_tpu_requirement`."""
    if tpu:
        return TPU_BASE_IMAGE
    version = tensorflow_version or installed_tensorflow_version()
    if version is None:
        raise ConfigurationError(
            "Cannot choose a base image: TensorFlow is not installed here, and no `parent_image` was given.",
            hint='Pass DockerConfig(parent_image="tensorflow/tensorflow:2.21.0") (CLI: --parent-image), '
            'or install TensorFlow: pip install "tfcloud[tensorflow]"',
        )
    return f"tensorflow/tensorflow:{version}{'-gpu' if gpu else ''}"


def tensorflow_tpu_requirement(tensorflow_version: str | None = None) -> str:
    """``tensorflow-tpu`` pinned to the newest published release not newer than the installed TensorFlow
    (:func:`tfcloud.google.catalog.prebuilt.tensorflow_tpu_release`: TensorFlow 2.21 has no TPU build; 2.20.0 is the
    newest)."""
    from tfcloud.google.catalog.prebuilt import tensorflow_tpu_release

    return f"tensorflow-tpu=={tensorflow_tpu_release(tensorflow_version or installed_tensorflow_version()).value}"


def tpu_pod_base(spec: JobSpec, tensorflow_version: str | None = None) -> Choice | None:
    """Vertex AI's TPU Pod base image when ``spec`` runs TensorFlow (a strategy the launcher sets up) on a multi-host
    TPU slice and brings no parent image of its own; None otherwise. The image then runs the launcher as CMD, and a
    request that passes arguments passes the whole command as ``args`` (:data:`LAUNCHER_COMMAND`)."""
    from tfcloud.job.spec import Strategy

    if spec.docker_config.parent_image or spec.strategy is Strategy.NONE:
        return None
    if not any(p.machine.is_tpu and p.machine.tpu_hosts > 1 for p in spec.pools):
        return None
    from tfcloud.google.catalog.prebuilt import tensorflow_tpu_release, tpu_pod_base_image

    release = tensorflow_tpu_release(tensorflow_version or installed_tensorflow_version()).value
    return tpu_pod_base_image(release)


def tf_keras_requirement(tensorflow_version: str | None = None) -> str:
    """The tf-keras requirement matching TensorFlow (tf-keras releases follow TensorFlow's numbers)."""
    try:
        return f"tf-keras=={importlib.metadata.version('tf-keras')}"
    except importlib.metadata.PackageNotFoundError:
        pass
    version = tensorflow_version or installed_tensorflow_version()
    if version is None:
        return "tf-keras"
    major_minor = ".".join(version.split(".")[:2])
    return f"tf-keras~={major_minor}.0"


def render_dockerfile(
    *,
    base_image: str,
    requirements: bool,
    tf_keras: str | None,
    launcher: str = LAUNCHER_NAME,
    workdir: str = IMAGE_WORKDIR,
    tensorflow_tpu: str | None = None,
    cmd: bool = False,
) -> str:
    """The Dockerfile's text.

    ``requirements``: the context has :data:`REQUIREMENTS_PATH` (and the files it includes, beside it);
    ``tf_keras``: the requirement to install when the base image lacks tf-keras (None when the launcher does
    not need it); tfcloud's package is expected under :data:`TFCLOUD_PYTHON_DIR` in the context.
    ``tensorflow_tpu``: the TensorFlow-for-TPU requirement to install first, with libtpu from
    :data:`LIBTPU_INDEX` (TPU jobs on :data:`TPU_BASE_IMAGE`). ``cmd``: the launcher is the image's CMD, not its
    ENTRYPOINT (a TPU Pod base image keeps its own ENTRYPOINT: :func:`tpu_pod_base`).
    """
    return render(
        "Dockerfile.j2",
        version=__version__,
        base_image=base_image,
        requirements=requirements,
        tf_keras=tf_keras,
        launcher=launcher,
        workdir=workdir,
        tensorflow_tpu=tensorflow_tpu,
        libtpu_index=LIBTPU_INDEX,
        command=LAUNCHER_COMMAND,
        cmd=cmd,
    )
