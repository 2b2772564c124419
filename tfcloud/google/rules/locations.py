"""Google's "Vertex AI locations" page as data (source "locations": the copy last updated 2026-04-10, read whole on
2026-11-26): the regions it lists under "Available locations" and its "Using accelerators" table, transcribed as
the page gives them. :mod:`tfcloud.google.rules.data` takes the training regions and each accelerator's regions
from here.

- :data:`AVAILABLE_LOCATIONS`: the regions of "Available locations" (every one but ``asia-south2`` also has a row
  with "Custom model training" in "Feature availability"; ``asia-south2`` has no row there, and the accelerator
  table lists H200 for training in it);
- :data:`ACCELERATORS_BY_REGION`: region → the page's accelerator labels → whether the page offers it for training
  (False where it marks the label †, "isn't available for training"; its other marks, \\*, + and ‡, concern
  inference and notebooks and are not kept);
- :data:`PAGE_NAMES`: the page's labels → ``AcceleratorType`` names (tfcloud's ``TPU_V6E``, none for TPU7x and the
  TPU Pods, which tfcloud's catalog does not offer);
- :data:`REFUSED_THOUGH_LISTED`: a region the page lists for an accelerator's training that tfcloud refuses, and the
  read page that disagrees;
- :data:`SDK_ONLY_REGIONS`: the regions the SDK's ``SUPPORTED_REGIONS`` names and the page does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["ACCELERATORS_BY_REGION", "AVAILABLE_LOCATIONS", "PAGE_NAMES", "REFUSED_THOUGH_LISTED",
           "SDK_ONLY_REGIONS", "training_regions"]

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: "Available locations": the regions Vertex AI is available in, by the page's geographies.
AVAILABLE_LOCATIONS: frozenset[str] = _words("""
    us-east5 us-south1 us-central1 us-west4 us-west2 us-east1 us-east4 us-west1 us-west3
    northamerica-northeast1 northamerica-northeast2
    southamerica-west1 southamerica-east1
    africa-south1
    europe-west1 europe-north1 europe-west3 europe-west2 europe-southwest1 europe-west8 europe-west4 europe-west9
    europe-west12 europe-central2 europe-west6
    asia-east2 asia-southeast2 australia-southeast2 asia-south1 asia-south2 asia-northeast2 asia-northeast3
    asia-southeast1 australia-southeast1 asia-east1 asia-northeast1
    me-central2 me-central1 me-west1
""")

#: "Using accelerators", row by row in the page's order; "†" after a label: not available for training.
_TABLE = {
    "asia-east1": "L4†, P100, T4, TPU v2, V100, H100 Mega",
    "asia-east2": "T4",
    "asia-northeast1": "A100 40GB†, H100, H100 Mega, B200, L4†, T4, TPU v6e",
    "asia-northeast3": "A100 40GB, H100, L4, T4",
    "asia-south1": "H100, L4, T4, H200",
    "asia-south2": "H200, RTX PRO 6000",
    "asia-southeast1": "A100 40GB, A100 80GB, B200, H100, H100 Mega, L4, P4, T4, RTX PRO 6000",
    "asia-southeast2": "T4",
    "australia-southeast1": "H100 Mega, P4, T4",
    "europe-central2": "T4",
    "europe-north1": "H100 Mega",
    "europe-west1": "H100, H100 Mega, H200, L4†, P100, T4",
    "europe-west2": "H100, L4, T4",
    "europe-west3": "H100, H100 Mega, L4†, T4",
    "europe-west4": "A100 40GB, A100 80GB, H100, H100 Mega, H200, B200, L4, P4, T4, V100, P100, RTX PRO 6000, "
                    "TPU v2, TPU v2 Pod, TPU v3, TPU v3 Pod, TPU v5e†, TPU v6e",
    "europe-west6": "L4†",
    "me-central2": "L4",
    "me-west1": "A100 40GB, A100 80GB†, T4†",
    "northamerica-northeast1": "P4, T4",
    "northamerica-northeast2": "H100, L4",
    "southamerica-east1": "T4",
    "southamerica-west1": "T4†, TPU v6e",
    "us-central1": "A100 40GB, A100 80GB, B200, H100, H100 Mega, GB200, H200, L4, P4, P100, T4, RTX PRO 6000, "
                   "TPU v2, TPU v2 Pod, TPU v3, TPU v5e, TPU v6e, TPU7x, V100",
    "us-east1": "A100 40GB, B200, L4, P100, T4, RTX PRO 6000, TPU v5e, TPU v6e, V100",
    "us-east4": "A100 80GB, H100, H100 Mega, H200, B200, GB200, L4, P4, T4, RTX PRO 6000",
    "us-east5": "A100 80GB, H100, H100 Mega, H200, TPU v6e",
    "us-south1": "TPU v5e†, TPU v6e, B200, H200",
    "us-west1": "H100 Mega, H200, L4, P100, T4, H100, TPU v5e, V100",
    "us-west2": "P4, T4, B200",
    "us-west3": "A100 40GB, B200",
    "us-west4": "A100 40GB, H100, H100 Mega, L4†, T4, TPU v5e",
}


def _row(text: str) -> Mapping[str, bool]:
    labels = [label.strip() for label in text.split(",")]
    return MappingProxyType({label.rstrip("†"): not label.endswith("†") for label in labels})


#: Region → the page's accelerator labels → offered for training (False: marked †).
ACCELERATORS_BY_REGION: Mapping[str, Mapping[str, bool]] = MappingProxyType(
    {region: _row(text) for region, text in _TABLE.items()})

#: The page's labels → ``AcceleratorType`` names (None: not in tfcloud's catalog).
PAGE_NAMES: Mapping[str, str | None] = MappingProxyType({
    "A100 40GB": "NVIDIA_TESLA_A100", "A100 80GB": "NVIDIA_A100_80GB", "B200": "NVIDIA_B200", "GB200": "NVIDIA_GB200",
    "RTX PRO 6000": "NVIDIA_RTX_PRO_6000", "H100": "NVIDIA_H100_80GB", "H100 Mega": "NVIDIA_H100_MEGA_80GB",
    "H200": "NVIDIA_H200_141GB", "L4": "NVIDIA_L4", "P4": "NVIDIA_TESLA_P4", "P100": "NVIDIA_TESLA_P100",
    "T4": "NVIDIA_TESLA_T4", "V100": "NVIDIA_TESLA_V100", "TPU v2": "TPU_V2", "TPU v3": "TPU_V3",
    "TPU v5e": "TPU_V5_LITEPOD", "TPU v6e": "TPU_V6E", "TPU v2 Pod": None, "TPU v3 Pod": None, "TPU7x": None,
})

#: (accelerator, region) the page lists for training that tfcloud refuses → the read page that disagrees. Where two
#: of Google's pages disagree, the table takes the reading that refuses before a paid build.
REFUSED_THOUGH_LISTED: Mapping[tuple[str, str], str] = MappingProxyType({
    ("TPU_V5_LITEPOD", "us-east1"): "tpu-regions",  # Cloud TPU makes v5e in us-central1, us-south1, us-west1, us-west4
})

#: Regions the SDK's ``SUPPORTED_REGIONS`` (source "sdk-regions") names and "Available locations" does not; refused
#: (``global`` is no region for custom training).
SDK_ONLY_REGIONS: frozenset[str] = frozenset({"europe-north2", "us-east7", "us-west8", "global"})


def training_regions(name: str) -> frozenset[str]:
    """The regions the page lists accelerator ``name`` (an ``AcceleratorType`` name) in for training, less
    :data:`REFUSED_THOUGH_LISTED`."""
    return frozenset(region for region, row in ACCELERATORS_BY_REGION.items()
                     for label, training in row.items()
                     if training and PAGE_NAMES[label] == name and (name, region) not in REFUSED_THOUGH_LISTED)
