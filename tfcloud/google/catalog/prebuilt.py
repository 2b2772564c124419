"""What Google publishes for TensorFlow jobs: TensorFlow for TPU VMs (``tensorflow-tpu`` on PyPI), which TPU base
images install, and Vertex AI's prebuilt TensorFlow training containers with their end of availability (all past:
``--no-build`` no longer uses them). Both are tables with their source and date; a lookup picks the newest entry
not newer than the TensorFlow installed here (a job never runs on a newer TensorFlow than it was written against),
and says which it picked and why (:class:`Choice`), so a plan can print it.

Update the tables when Google publishes more: the dates say when they were read.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

__all__ = ["END_OF_AVAILABILITY", "PREBUILT_TRAINING", "PREBUILT_TRAINING_SOURCE", "TENSORFLOW_TPU_RELEASES",
           "TENSORFLOW_TPU_SOURCE", "Choice", "prebuilt_available", "prebuilt_training_image",
           "tensorflow_tpu_release", "tpu_pod_base_image"]

#: ``tensorflow-tpu`` releases on PyPI, newest patch of each minor release.
TENSORFLOW_TPU_SOURCE = "PyPI, tensorflow-tpu release history (read 2026-11-25: 2.16.1 to 2.20.0; no 2.21)"
TENSORFLOW_TPU_RELEASES: dict[tuple[int, int], str] = {
    (2, 16): "2.16.2",
    (2, 17): "2.17.1",
    (2, 18): "2.18.0",
    (2, 19): "2.19.1",
    (2, 20): "2.20.0",
}

#: Vertex AI's prebuilt TensorFlow training containers (``pythonPackageSpec.executorImageUri``), by TensorFlow
#: minor release and device: the image name under ``{us,europe,asia}-docker.pkg.dev/vertex-ai/training/``.
#: tfcloud runs none of them any more (``--no-build`` runs the job's own base image:
#: :mod:`tfcloud.google.staging.baseimage`); the table stays for the docs and the rules, with each image's end of
#: availability.
PREBUILT_TRAINING_SOURCE = ("Vertex AI docs, \"Prebuilt containers for custom training\" (cloud.google.com/vertex-ai/"
                            "docs/training/pre-built-containers) and \"Supported frameworks\" (cloud.google.com/"
                            "vertex-ai/docs/supported-frameworks-list; read 2026-11-25: TensorFlow 2.17 is the newest, "
                            "Python 3.10; TPU: 2.15)")
PREBUILT_TRAINING: dict[tuple[int, int], dict[str, str]] = {
    (2, 14): {"cpu": "tf-cpu.2-14.py310", "gpu": "tf-gpu.2-14.py310"},
    (2, 15): {"cpu": "tf-cpu.2-15.py310", "gpu": "tf-gpu.2-15.py310", "tpu": "tf-tpu.2-15.cp310"},
    (2, 16): {"cpu": "tf-cpu.2-16.py310", "gpu": "tf-gpu.2-16.py310"},
    (2, 17): {"cpu": "tf-cpu.2-17.py310", "gpu": "tf-gpu.2-17.py310"},
}
#: End of availability ("you can no longer use images for this framework version"), by image name, from the
#: "Supported frameworks" table (read 2026-11-25). An image whose date was not read is taken as past its end: it
#: is older than TensorFlow 2.17, whose date has passed (the reading that refuses before a paid build).
END_OF_AVAILABILITY: dict[str, str | None] = {
    "tf-cpu.2-17.py310": "2026-07-11", "tf-gpu.2-17.py310": "2026-07-11", "tf-tpu.2-15.cp310": "2025-10-23",
    "tf-cpu.2-16.py310": None, "tf-gpu.2-16.py310": None, "tf-cpu.2-15.py310": None, "tf-gpu.2-15.py310": None,
    "tf-cpu.2-14.py310": None, "tf-gpu.2-14.py310": None,
}


def prebuilt_available(name: str, *, on: dt.date) -> bool:
    """Whether Vertex AI still serves the prebuilt image ``name`` on the day ``on`` (an unread date: no)."""
    end = END_OF_AVAILABILITY.get(name)
    return end is not None and on <= dt.date.fromisoformat(end)


@dataclass(frozen=True, kw_only=True)
class Choice:
    """What was picked (a version or an image URI) and the sentence that says why."""

    value: str
    version: str  # the TensorFlow minor release it carries, "2.17"
    reason: str


def _minor(version: str | None) -> tuple[int, int] | None:
    if not version:
        return None
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _newest_not_newer(table: dict[tuple[int, int], object], installed: tuple[int, int] | None) -> tuple[int, int]:
    known = sorted(table)
    if installed is None:
        return known[-1]
    fitting = [minor for minor in known if minor <= installed]
    return fitting[-1] if fitting else known[0]


def tensorflow_tpu_release(tensorflow_version: str | None) -> Choice:
    """The ``tensorflow-tpu`` release for TensorFlow ``tensorflow_version`` (the installed one): the newest
    published not newer than it (the oldest known when it is older than all of them)."""
    installed = _minor(tensorflow_version)
    minor = _newest_not_newer(dict.fromkeys(TENSORFLOW_TPU_RELEASES), installed)
    release = TENSORFLOW_TPU_RELEASES[minor]
    shown = f"TensorFlow {tensorflow_version}" if tensorflow_version else "no TensorFlow"
    same = installed == minor
    reason = (f"tensorflow-tpu {release}: the TPU build of the installed TensorFlow" if same else
              f"tensorflow-tpu {release}: the newest published not newer than {shown} installed here")
    return Choice(value=release, version=f"{minor[0]}.{minor[1]}", reason=f"{reason} ({TENSORFLOW_TPU_SOURCE}).")


def _registry(region: str | None) -> str:
    """The prebuilt images' Artifact Registry host nearest ``region``."""
    area = (region or "").split("-", 1)[0]
    if area == "europe":
        return "europe-docker.pkg.dev"
    if area in ("asia", "australia"):
        return "asia-docker.pkg.dev"
    return "us-docker.pkg.dev"


def prebuilt_training_image(tensorflow_version: str | None, *, device: str, region: str | None = None) -> Choice:
    """Vertex AI's prebuilt TensorFlow training image for ``device`` (``cpu``, ``gpu`` or ``tpu``): the newest
    listed not newer than TensorFlow ``tensorflow_version``, from the registry nearest ``region`` (for the docs and
    the rules: whether it is still available is :func:`prebuilt_available`)."""
    installed = _minor(tensorflow_version)
    table = {minor: images for minor, images in PREBUILT_TRAINING.items() if device in images}
    minor = _newest_not_newer(dict.fromkeys(table), installed)
    name = table[minor][device]
    uri = f"{_registry(region)}/vertex-ai/training/{name}:latest"
    shown = f"TensorFlow {tensorflow_version}" if tensorflow_version else "no TensorFlow"
    newest = "" if installed == minor else f" (the newest prebuilt for {device.upper()} not newer than {shown} " \
                                           "installed here)"
    end = END_OF_AVAILABILITY.get(name) or "not read (taken as past)"
    return Choice(value=uri, version=f"{minor[0]}.{minor[1]}",
                  reason=f"runs on TensorFlow {minor[0]}.{minor[1]}{newest}, Python 3.10: {name}, end of "
                         f"availability {end} ({PREBUILT_TRAINING_SOURCE}).")


def tpu_pod_base_image(tensorflow_tpu: str, *, region: str | None = None) -> Choice:
    """Vertex AI's TPU Pod base image (:data:`tfcloud.google.rules.TPU_POD_BASE`, rule ``tpu-pod-tensorflow-image``)
    for TensorFlow on a multi-host TPU slice, from the registry nearest ``region``, onto which the image installs
    ``tensorflow-tpu`` release ``tensorflow_tpu``. Raises :class:`~tfcloud.errors.ConfigurationError` when that
    release is older than the image's Python supports (none of :data:`TENSORFLOW_TPU_RELEASES` is)."""
    from tfcloud.errors import ConfigurationError
    from tfcloud.google.rules import SOURCES, TPU_POD_BASE

    minor = _minor(tensorflow_tpu)
    if minor is None or minor < TPU_POD_BASE.min_tensorflow:
        want = ".".join(map(str, TPU_POD_BASE.min_tensorflow))
        raise ConfigurationError(
            f"Cannot build a TPU Pod image: TensorFlow on a multi-host TPU slice runs on {TPU_POD_BASE.name} "
            f"(Python {TPU_POD_BASE.python}), whose TPU TensorFlow starts at {want}; received tensorflow-tpu "
            f"{tensorflow_tpu} ({SOURCES[TPU_POD_BASE.source]}).",
            hint=f"Install TensorFlow {want} or newer here, or pass a parent image that sets up the TPU Pod "
                 "(--parent-image).")
    area = _registry(region).split("-", 1)[0]
    uri = TPU_POD_BASE.uri(area)
    return Choice(value=uri, version=f"{minor[0]}.{minor[1]}",
                  reason=f"TensorFlow on a multi-host TPU slice (a TPU Pod) runs on Vertex AI's TPU Pod base image "
                         f"{uri} (Python {TPU_POD_BASE.python}), the command as CMD, not ENTRYPOINT (rule "
                         f"tpu-pod-tensorflow-image; {SOURCES[TPU_POD_BASE.source]}).")
