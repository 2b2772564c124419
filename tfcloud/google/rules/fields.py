"""Google's documented rules on a custom job's own fields, as data (read 2026-11-26; each names its source in
:data:`tfcloud.google.rules.sources.SOURCES`): :data:`BOOT_DISK` (``DiskSpec``), :data:`TPU_POD_BASE` (the image
TensorFlow on a TPU Pod runs on), :data:`FLEX_START` (``Scheduling``), :data:`LABELS` and :data:`DISPLAY_NAME`.
The machines, accelerators and regions are in :mod:`tfcloud.google.rules.data` (``tfcloud machines`` reads those
only).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["BOOT_DISK", "DISPLAY_NAME", "FLEX_START", "LABELS", "TPU_POD_BASE", "BootDisk", "FlexStart", "LabelRules",
           "TpuPodBase"]


# -- boot disks --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class BootDisk:
    """``DiskSpec`` (source "disk-spec"): the types Google names and the size range."""

    types: frozenset[str] = frozenset({"pd-ssd", "pd-standard", "hyperdisk-balanced"})
    default_size_gb: int = 100
    min_size_gb: int = 100
    max_size_gb: int = 64000
    source: str = "disk-spec"


BOOT_DISK = BootDisk()

@dataclass(frozen=True, kw_only=True)
class TpuPodBase:
    """TensorFlow on a TPU Pod (a multi-host TPU slice), source "tpu-training" (its "TPU Pod" section): it "requires
    additional setup in the training container", done by a base image Vertex AI maintains, one per Python version,
    each in three multi-regions (``{us,europe,asia}-docker.pkg.dev/vertex-ai/training/NAME:latest``). The image
    runs the job's CMD: "Use CMD, not ENTRYPOINT, to avoid accidentally overriding the pod base image's
    ENTRYPOINT" (or the command as the container spec's ``args``). ``min_tensorflow``: the first TensorFlow whose
    TPU wheels support the image's Python ("TensorFlow 2.13 and greater support Python 3.10 or greater"; the
    ``-cp38`` image, for TensorFlow 2.12 and lower, is not listed: tensorflow-tpu starts at 2.16)."""

    name: str
    python: str
    multi_regions: tuple[str, ...]
    min_tensorflow: tuple[int, int]
    tag: str = "latest"
    source: str = "tpu-training"

    def uri(self, multi_region: str = "us") -> str:
        """The image in ``multi_region`` (``us``, ``europe`` or ``asia``)."""
        if multi_region not in self.multi_regions:
            raise ValueError(f"{self.name} is published in {', '.join(self.multi_regions)}, not {multi_region!r}")
        return f"{multi_region}-docker.pkg.dev/vertex-ai/training/{self.name}:{self.tag}"


TPU_POD_BASE = TpuPodBase(name="tf-tpu-pod-base-cp310", python="3.10", multi_regions=("us", "europe", "asia"),
                          min_tensorflow=(2, 13))


# -- capacity ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class FlexStart:
    """``Scheduling.strategy = FLEX_START`` (source "dws"): the GPUs it serves, its longest timeout and wait."""

    accelerators: frozenset[str]
    max_timeout_s: int
    max_wait_s: int
    source: str = "dws"


FLEX_START = FlexStart(
    accelerators=frozenset({"NVIDIA_L4", "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_H100_80GB",
                            "NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_B200"}),
    max_timeout_s=7 * 24 * 3600, max_wait_s=14 * 24 * 3600)


# -- names -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class LabelRules:
    """``labels`` (sources "labels" and "label-count"), Google's Labels requirements: at most 64 labels; keys of 1
    to 63 characters that start with a lowercase letter (international ones too: Unicode ``Ll`` or ``Lo``); keys
    and values of lowercase letters, numbers, ``_`` and ``-`` only (``[\\p{Ll}\\p{Lo}\\p{N}_-]``), values
    possibly empty. The proto allows 64 characters, the Labels overview 63: the table takes 63, the reading that
    refuses before a paid build."""

    max_labels: int = 64
    max_length: int = 63
    #: Unicode categories a key may start with, and those every other character may have (besides ``chars``):
    #: letters without case (``Lo``, ``Lm``: the Japanese ``チーム`` has a ``Lm``) count as lowercase.
    first_categories: frozenset[str] = frozenset({"Ll", "Lo"})
    categories: frozenset[str] = frozenset({"Ll", "Lo", "Lm", "Nd", "Nl", "No"})
    chars: str = "_-"
    source: str = "labels"

    def allows(self, text: str, *, key: bool) -> bool:
        """Whether ``text`` is a label key (``key``) or value by these rules."""
        if len(text) > self.max_length or (key and not text):
            return False
        if key and unicodedata.category(text[0]) not in self.first_categories:
            return False
        return all(c in self.chars or unicodedata.category(c) in self.categories for c in text)


LABELS = LabelRules()
#: ``display_name``: required, at most this many characters (source "display-name").
DISPLAY_NAME = 128
