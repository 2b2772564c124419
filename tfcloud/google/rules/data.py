"""Google's documented rules for Vertex AI custom training, as data (read 2026-11-26; each table names its source in
:data:`tfcloud.google.rules.sources.SOURCES`).

- :data:`ACCELERATORS`: every accelerator by its ``AcceleratorType`` name (enum number, GPU or TPU, the regions that
  serve it for training, end of support, whether it needs a reservation);
- :data:`MACHINE_TYPES`: every machine type Google lists for custom training (vCPUs, memory, the accelerators and
  counts it takes, the boot disk types it takes, Arm or not), and :data:`TPU_MACHINES` (TPU VM machine types: chips
  per host, the ``tpu_topology`` values and their hosts, the frameworks Google supports on the generation);
- :data:`N1_GPU_LIMITS`: the vCPUs and memory an N1 machine may have for each GPU count;
- :data:`TRAINING_REGIONS`.

The rules on a job's own fields (boot disk, TPU Pod base image, Flex Start, labels, display name) are in
:mod:`tfcloud.google.rules.fields`.

The training regions and each accelerator's regions are taken from the Locations page as
:mod:`tfcloud.google.rules.locations` transcribes it.

Where Google's pages leave a rule unclear, the table takes the reading that refuses before a paid build (the
regions that serve an accelerator: only those Google lists; an N1 machine's vCPU limit for 4 x P100: the smaller
one Google lists), and docs/vertex.md says so.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tfcloud.google.rules.locations import AVAILABLE_LOCATIONS, training_regions

__all__ = ["ACCELERATORS", "ACCELERATOR_NUMBERS", "MACHINE_TYPES", "N1_GPU_LIMITS", "TPU_MACHINES", "TRAINING_REGIONS",
           "Accelerator", "MachineTypeRow", "N1Limit", "TpuMachine"]


# -- regions -----------------------------------------------------------------------------------------------------
#: The regions Vertex AI serves custom training in (source "locations": its "Available locations").
TRAINING_REGIONS: frozenset[str] = AVAILABLE_LOCATIONS


# -- accelerators ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Accelerator:
    """One accelerator. ``name``: its ``AcceleratorType`` enum name (TPU v6e has none: tfcloud calls it
    ``TPU_V6E`` and the request names it by machine type only); ``number``: the enum's number (None: not in the
    enum). ``regions``: where Vertex AI serves it for training. ``offered`` False: Vertex AI no longer offers it
    (``replacement`` names what to use); ``end_of_support``: from that day on it is refused."""

    name: str
    number: int | None
    kind: str  # "gpu" or "tpu"
    title: str
    regions: frozenset[str]
    offered: bool = True
    end_of_support: datetime.date | None = None
    replacement: str | None = None
    needs_reservation: bool = False
    source: str = "locations"

    @property
    def is_tpu(self) -> bool:
        return self.kind == "tpu"


_ACCELERATORS = (
    Accelerator(name="NVIDIA_TESLA_K80", number=1, kind="gpu", title="NVIDIA K80", regions=frozenset(),
                offered=False, end_of_support=datetime.date(2024, 5, 1), replacement="T4_1X (NVIDIA T4) or L4_1X",
                source="k80-eol"),
    Accelerator(name="NVIDIA_TESLA_P100", number=2, kind="gpu", title="NVIDIA P100",
                regions=training_regions("NVIDIA_TESLA_P100"),
                end_of_support=datetime.date(2026, 9, 15), replacement="T4_1X (NVIDIA T4) or L4_1X",
                source="p100-eol"),
    Accelerator(name="NVIDIA_TESLA_V100", number=3, kind="gpu", title="NVIDIA V100",
                regions=training_regions("NVIDIA_TESLA_V100")),
    Accelerator(name="NVIDIA_TESLA_P4", number=4, kind="gpu", title="NVIDIA P4",
                regions=training_regions("NVIDIA_TESLA_P4")),
    Accelerator(name="NVIDIA_TESLA_T4", number=5, kind="gpu", title="NVIDIA T4",
                regions=training_regions("NVIDIA_TESLA_T4")),
    Accelerator(name="NVIDIA_TESLA_A100", number=8, kind="gpu", title="NVIDIA A100 40GB",
                regions=training_regions("NVIDIA_TESLA_A100")),
    Accelerator(name="NVIDIA_A100_80GB", number=9, kind="gpu", title="NVIDIA A100 80GB",
                regions=training_regions("NVIDIA_A100_80GB")),
    Accelerator(name="NVIDIA_L4", number=11, kind="gpu", title="NVIDIA L4",
                regions=training_regions("NVIDIA_L4")),
    Accelerator(name="NVIDIA_H100_80GB", number=13, kind="gpu", title="NVIDIA H100 80GB",
                regions=training_regions("NVIDIA_H100_80GB")),
    Accelerator(name="NVIDIA_H100_MEGA_80GB", number=14, kind="gpu", title="NVIDIA H100 Mega 80GB",
                regions=training_regions("NVIDIA_H100_MEGA_80GB")),
    Accelerator(name="NVIDIA_H200_141GB", number=15, kind="gpu", title="NVIDIA H200 141GB",
                regions=training_regions("NVIDIA_H200_141GB")),
    Accelerator(name="NVIDIA_B200", number=16, kind="gpu", title="NVIDIA B200",
                regions=training_regions("NVIDIA_B200")),
    Accelerator(name="NVIDIA_GB200", number=17, kind="gpu", title="NVIDIA GB200", needs_reservation=True,
                regions=training_regions("NVIDIA_GB200")),
    Accelerator(name="TPU_V2", number=6, kind="tpu", title="TPU v2",
                regions=training_regions("TPU_V2")),
    Accelerator(name="TPU_V3", number=7, kind="tpu", title="TPU v3",
                regions=training_regions("TPU_V3")),
    Accelerator(name="TPU_V5_LITEPOD", number=12, kind="tpu", title="TPU v5e",
                regions=training_regions("TPU_V5_LITEPOD")),
    Accelerator(name="TPU_V6E", number=None, kind="tpu", title="TPU v6e (Trillium)",
                regions=training_regions("TPU_V6E")),
)
#: Every accelerator by its enum name (``TPU_V6E``: tfcloud's name; Google's enum has none).
ACCELERATORS: Mapping[str, Accelerator] = MappingProxyType({a.name: a for a in _ACCELERATORS})

#: ``AcceleratorType`` numbers → names (requests may carry either; source "accelerator-enum").
ACCELERATOR_NUMBERS: Mapping[int, str] = MappingProxyType(
    {0: "ACCELERATOR_TYPE_UNSPECIFIED", 10: "TPU_V4_POD", 18: "NVIDIA_RTX_PRO_6000",
     **{a.number: a.name for a in _ACCELERATORS if a.number is not None}})


# -- the boot disk types each machine family takes --------------------------------------------------------
_PD = ("pd-ssd", "pd-standard")  # what DiskSpec's default (pd-ssd) families take; the first is the default
_PD_SSD_HYPERDISK = ("pd-ssd", "hyperdisk-balanced")  # A3 High/Mega: no Standard Persistent Disk
_HYPERDISK = ("hyperdisk-balanced",)  # A3 Ultra, A4, A4X: Hyperdisk only (source "accelerator-family")


# -- machine types -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class MachineTypeRow:
    """One machine type Google lists for custom training (source "configure-compute"). ``accelerators``: name →
    the counts it takes (a TPU VM machine type or an accelerator-optimized one has its chips fixed);
    ``boot_disks``: the boot disk types it takes, its default first; ``arm``: an Arm (arm64) host."""

    name: str
    vcpus: int
    memory_gb: float
    accelerators: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    boot_disks: tuple[str, ...] = _PD
    arm: bool = False
    source: str = "configure-compute"

    @property
    def family(self) -> str:
        return self.name.split("-")[0]

    @property
    def default_boot_disk(self) -> str:
        return self.boot_disks[0]

    @property
    def cpu_only(self) -> bool:
        return not self.accelerators


@dataclass(frozen=True, kw_only=True)
class N1Limit:
    """The most vCPUs and memory an N1 machine may have with ``count`` of one GPU (source "gpus")."""

    count: int
    max_vcpus: int
    max_memory_gb: float


#: N1 + GPU: the counts Vertex AI takes and Compute Engine's vCPU/memory limits for each (source "gpus"; for
#: 4 x P100 the smaller of the two limits Google lists per zone).
N1_GPU_LIMITS: Mapping[str, tuple[N1Limit, ...]] = MappingProxyType({
    "NVIDIA_TESLA_T4": (N1Limit(count=1, max_vcpus=48, max_memory_gb=312),
                        N1Limit(count=2, max_vcpus=48, max_memory_gb=312),
                        N1Limit(count=4, max_vcpus=96, max_memory_gb=624)),
    "NVIDIA_TESLA_V100": (N1Limit(count=1, max_vcpus=12, max_memory_gb=78),
                          N1Limit(count=2, max_vcpus=24, max_memory_gb=156),
                          N1Limit(count=4, max_vcpus=48, max_memory_gb=312),
                          N1Limit(count=8, max_vcpus=96, max_memory_gb=624)),
    "NVIDIA_TESLA_P100": (N1Limit(count=1, max_vcpus=16, max_memory_gb=104),
                          N1Limit(count=2, max_vcpus=32, max_memory_gb=208),
                          N1Limit(count=4, max_vcpus=64, max_memory_gb=208)),
    "NVIDIA_TESLA_P4": (N1Limit(count=1, max_vcpus=24, max_memory_gb=156),
                        N1Limit(count=2, max_vcpus=48, max_memory_gb=312),
                        N1Limit(count=4, max_vcpus=96, max_memory_gb=624)),
    "NVIDIA_TESLA_K80": (N1Limit(count=1, max_vcpus=8, max_memory_gb=52),
                         N1Limit(count=2, max_vcpus=16, max_memory_gb=104),
                         N1Limit(count=4, max_vcpus=32, max_memory_gb=208),
                         N1Limit(count=8, max_vcpus=64, max_memory_gb=416)),
})


@dataclass(frozen=True, kw_only=True)
class TpuMachine:
    """A TPU machine type (source "tpu-training"): its generation's accelerator, the chips one host carries, its
    ``tpu_topology`` values → the hosts each spans (the first: the single-host one), whether the request must
    name the topology (v5e and v6e: source "sdk-tpu-topology"), and the frameworks Google supports on the
    generation (source "tpu-frameworks": TensorFlow not from v6e on)."""

    machine_type: str
    accelerator: str
    chips_per_host: int
    topologies: Mapping[str, int]
    topology_required: bool
    frameworks: frozenset[str]
    source: str = "tpu-training"

    @property
    def generation(self) -> str:
        return ACCELERATORS[self.accelerator].title


def _hosts(chips_per_host: int, *topologies: str) -> dict[str, int]:
    result = {}
    for topology in topologies:
        chips = 1
        for side in topology.split("x"):
            chips *= int(side)
        result[topology] = max(1, chips // chips_per_host)
    return result


_MULTI_HOST_2D = ("4x4", "4x8", "8x8", "8x16", "16x16")
_ALL = frozenset({"tensorflow", "pytorch", "jax"})
_NO_TF = frozenset({"pytorch", "jax"})
_TPUS = (
    TpuMachine(machine_type="cloud-tpu", accelerator="TPU_V2", chips_per_host=8, topologies={},
               topology_required=False, frameworks=_ALL),
    TpuMachine(machine_type="ct5lp-hightpu-1t", accelerator="TPU_V5_LITEPOD", chips_per_host=1,
               topologies=_hosts(1, "1x1"), topology_required=True, frameworks=_ALL),
    TpuMachine(machine_type="ct5lp-hightpu-4t", accelerator="TPU_V5_LITEPOD", chips_per_host=4,
               topologies=_hosts(4, "2x2", *_MULTI_HOST_2D), topology_required=True, frameworks=_ALL),
    TpuMachine(machine_type="ct5lp-hightpu-8t", accelerator="TPU_V5_LITEPOD", chips_per_host=8,
               topologies=_hosts(8, "2x4"), topology_required=True, frameworks=_ALL),
    TpuMachine(machine_type="ct6e-standard-1t", accelerator="TPU_V6E", chips_per_host=1,
               topologies=_hosts(1, "1x1"), topology_required=True, frameworks=_NO_TF),
    TpuMachine(machine_type="ct6e-standard-4t", accelerator="TPU_V6E", chips_per_host=4,
               topologies=_hosts(4, "2x2", *_MULTI_HOST_2D), topology_required=True, frameworks=_NO_TF),
    TpuMachine(machine_type="ct6e-standard-8t", accelerator="TPU_V6E", chips_per_host=8,
               topologies=_hosts(8, "2x4"), topology_required=True, frameworks=_NO_TF),
)
#: TPU VM machine types by name (``cloud-tpu``: TPU v2/v3, 8 cores, no topology).
TPU_MACHINES: Mapping[str, TpuMachine] = MappingProxyType({t.machine_type: t for t in _TPUS})


def _series(prefix: str, per_vcpu: float, *vcpus: int) -> list[MachineTypeRow]:
    return [MachineTypeRow(name=f"{prefix}-{n}", vcpus=n, memory_gb=round(n * per_vcpu, 2)) for n in vcpus]


def _n1(kind: str, per_vcpu: float, *vcpus: int) -> list[MachineTypeRow]:
    gpus = {name: tuple(limit.count for limit in limits) for name, limits in N1_GPU_LIMITS.items()}
    return [MachineTypeRow(name=f"n1-{kind}-{n}", vcpus=n, memory_gb=round(n * per_vcpu, 2), accelerators=gpus)
            for n in vcpus]


def _gpu(name: str, vcpus: int, memory: float, accelerator: str, count: int,
         disks: tuple[str, ...] = _PD, *, arm: bool = False) -> MachineTypeRow:
    return MachineTypeRow(name=name, vcpus=vcpus, memory_gb=memory, accelerators={accelerator: (count,)},
                          boot_disks=disks, arm=arm)


def _machine_types() -> list[MachineTypeRow]:
    rows: list[MachineTypeRow] = []
    rows += _series("e2-standard", 4, 4, 8, 16, 32) + _series("e2-highmem", 8, 2, 4, 8, 16)
    rows += _series("e2-highcpu", 1, 16, 32)
    rows += _series("n2-standard", 4, 4, 8, 16, 32, 48, 64, 80) + _series("n2-highmem", 8, 2, 4, 8, 16, 32, 48, 64, 80)
    rows += _series("n2-highcpu", 1, 16, 32, 48, 64, 80)
    rows += _n1("standard", 3.75, 4, 8, 16, 32, 64, 96) + _n1("highmem", 6.5, 2, 4, 8, 16, 32, 64, 96)
    rows += _n1("highcpu", 0.9, 16, 32, 64, 96)
    rows += _series("c2-standard", 4, 4, 8, 16, 30, 60)
    rows += [MachineTypeRow(name="m1-ultramem-40", vcpus=40, memory_gb=961),
             MachineTypeRow(name="m1-ultramem-80", vcpus=80, memory_gb=1922),
             MachineTypeRow(name="m1-ultramem-160", vcpus=160, memory_gb=3844),
             MachineTypeRow(name="m1-megamem-96", vcpus=96, memory_gb=1433.6)]
    # G2: NVIDIA L4 (pd-ssd: G2 takes no Standard Persistent Disk).
    for vcpus, memory, count in ((4, 16, 1), (8, 32, 1), (12, 48, 1), (16, 64, 1), (32, 128, 1), (24, 96, 2),
                                 (48, 192, 4), (96, 384, 8)):
        rows.append(_gpu(f"g2-standard-{vcpus}", vcpus, memory, "NVIDIA_L4", count, ("pd-ssd",)))
    for count, vcpus, memory in ((1, 12, 85), (2, 24, 170), (4, 48, 340), (8, 96, 680)):
        rows.append(_gpu(f"a2-highgpu-{count}g", vcpus, memory, "NVIDIA_TESLA_A100", count))
    rows.append(_gpu("a2-megagpu-16g", 96, 1360, "NVIDIA_TESLA_A100", 16))
    for count, vcpus, memory in ((1, 12, 170), (2, 24, 340), (4, 48, 680), (8, 96, 1360)):
        rows.append(_gpu(f"a2-ultragpu-{count}g", vcpus, memory, "NVIDIA_A100_80GB", count))
    for count, vcpus, memory in ((1, 26, 234), (2, 52, 468), (4, 104, 936), (8, 208, 1872)):
        rows.append(_gpu(f"a3-highgpu-{count}g", vcpus, memory, "NVIDIA_H100_80GB", count, _PD_SSD_HYPERDISK))
    rows.append(_gpu("a3-megagpu-8g", 208, 1872, "NVIDIA_H100_MEGA_80GB", 8, _PD_SSD_HYPERDISK))
    rows.append(_gpu("a3-ultragpu-8g", 224, 2952, "NVIDIA_H200_141GB", 8, _HYPERDISK))
    rows.append(_gpu("a4-highgpu-8g", 224, 3968, "NVIDIA_B200", 8, _HYPERDISK))
    rows.append(_gpu("a4x-highgpu-4g", 140, 884, "NVIDIA_GB200", 4, _HYPERDISK, arm=True))
    rows.append(MachineTypeRow(name="cloud-tpu", vcpus=96, memory_gb=335,
                               accelerators={"TPU_V2": (8,), "TPU_V3": (8,)}))
    for count, vcpus, memory in ((1, 24, 48), (4, 112, 192), (8, 224, 384)):
        rows.append(_gpu(f"ct5lp-hightpu-{count}t", vcpus, memory, "TPU_V5_LITEPOD", count))
    for count, vcpus, memory in ((1, 44, 448), (4, 180, 720), (8, 180, 1440)):
        rows.append(_gpu(f"ct6e-standard-{count}t", vcpus, memory, "TPU_V6E", count))
    return rows


#: Every machine type Google lists for custom training, by name.
MACHINE_TYPES: Mapping[str, MachineTypeRow] = MappingProxyType({row.name: row for row in _machine_types()})
