"""Machine catalog: what a replica runs on, and how it maps to a Vertex AI machine type + accelerator.

``MachineConfig(cpu_cores, memory, accelerator_type, accelerator_count)`` keeps tensorflow-cloud's
constructor. Each config resolves to exactly one Vertex AI machine type from :data:`MACHINE_TYPES`; a
combination that no machine type offers is rejected at construction with the valid ones listed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tfcloud.errors import ValidationError

__all__ = ["COMMON_MACHINE_CONFIGS", "MACHINE_TYPES", "AcceleratorType", "MachineConfig", "MachineType"]


class AcceleratorType(enum.Enum):
    """Accelerators, named as Vertex AI's ``AcceleratorType`` enum names them."""

    NO_ACCELERATOR = "ACCELERATOR_TYPE_UNSPECIFIED"
    NVIDIA_TESLA_K80 = "NVIDIA_TESLA_K80"
    NVIDIA_TESLA_P100 = "NVIDIA_TESLA_P100"
    NVIDIA_TESLA_V100 = "NVIDIA_TESLA_V100"
    NVIDIA_TESLA_P4 = "NVIDIA_TESLA_P4"
    NVIDIA_TESLA_T4 = "NVIDIA_TESLA_T4"
    NVIDIA_L4 = "NVIDIA_L4"
    NVIDIA_TESLA_A100 = "NVIDIA_TESLA_A100"
    NVIDIA_A100_80GB = "NVIDIA_A100_80GB"
    NVIDIA_H100_80GB = "NVIDIA_H100_80GB"
    NVIDIA_H200_141GB = "NVIDIA_H200_141GB"
    NVIDIA_B200 = "NVIDIA_B200"
    NVIDIA_GB200 = "NVIDIA_GB200"
    TPU_V2 = "TPU_V2"
    TPU_V3 = "TPU_V3"
    TPU_V5_LITEPOD = "TPU_V5_LITEPOD"
    # Not (yet) in google-cloud-aiplatform's enum: the request names them by machine type only (docs/vertex.md).
    TPU_V6E = "TPU_V6E"
    TPU_V5P = "TPU_V5P"

    @property
    def is_tpu(self) -> bool:
        return self.name.startswith("TPU")

    @property
    def is_gpu(self) -> bool:
        return self.name.startswith("NVIDIA")

    @property
    def is_tpu_vm(self) -> bool:
        """A TPU generation that runs on TPU VMs (v5e, v6e, v5p): its pool is the job's pool 0 on Vertex AI."""
        return self in (AcceleratorType.TPU_V5_LITEPOD, AcceleratorType.TPU_V6E, AcceleratorType.TPU_V5P)

    @classmethod
    def all(cls) -> list[AcceleratorType]:
        return list(cls)

    @classmethod
    def validate(cls, accelerator_type: object) -> None:
        """tensorflow-cloud's check, kept for code that calls it."""
        if not isinstance(accelerator_type, AcceleratorType):
            raise ValidationError(
                "accelerator_type",
                "one of " + ", ".join(f"AcceleratorType.{a.name}" for a in cls),
                accelerator_type,
            )


@dataclass(frozen=True, kw_only=True)
class MachineType:
    """One Vertex AI machine type: its vCPUs, memory (GB) and the accelerators it can carry."""

    name: str
    cpu_cores: int
    memory: float
    accelerators: Mapping[AcceleratorType, tuple[int, ...]] = field(default_factory=dict)
    #: TPU VM machine types: the slice topologies they make, the single-host one first (more chips than the
    #: machine carries: a multi-host slice of several VMs).
    tpu_topologies: tuple[str, ...] = ()


def _n1_gpu_counts() -> dict[AcceleratorType, tuple[int, ...]]:
    return {
        AcceleratorType.NVIDIA_TESLA_K80: (1, 2, 4, 8),
        AcceleratorType.NVIDIA_TESLA_P100: (1, 2, 4),
        AcceleratorType.NVIDIA_TESLA_V100: (1, 2, 4, 8),
        AcceleratorType.NVIDIA_TESLA_P4: (1, 2, 4),
        AcceleratorType.NVIDIA_TESLA_T4: (1, 2, 4),
    }


def _build_machine_types() -> dict[str, MachineType]:
    types: list[MachineType] = []
    # N1: the general-purpose family that carries the older GPUs.
    for cpus in (4, 8, 16, 32, 64, 96):
        types.append(MachineType(name=f"n1-standard-{cpus}", cpu_cores=cpus, memory=cpus * 3.75,
                                 accelerators=_n1_gpu_counts()))
        types.append(MachineType(name=f"n1-highmem-{cpus}", cpu_cores=cpus, memory=cpus * 6.5,
                                 accelerators=_n1_gpu_counts()))
        types.append(MachineType(name=f"n1-highcpu-{cpus}", cpu_cores=cpus, memory=cpus * 0.9,
                                 accelerators=_n1_gpu_counts()))
    # E2 / N2: CPU only.
    for cpus in (4, 8, 16, 32):
        types.append(MachineType(name=f"e2-standard-{cpus}", cpu_cores=cpus, memory=cpus * 4.0))
        types.append(MachineType(name=f"n2-standard-{cpus}", cpu_cores=cpus, memory=cpus * 4.0))
    # G2: NVIDIA L4.
    l4 = AcceleratorType.NVIDIA_L4
    for cpus, mem, n in ((4, 16, 1), (8, 32, 1), (12, 48, 1), (16, 64, 1), (32, 128, 1),
                         (24, 96, 2), (48, 192, 4), (96, 384, 8)):
        types.append(MachineType(name=f"g2-standard-{cpus}", cpu_cores=cpus, memory=mem,
                                 accelerators={l4: (n,)}))
    # A2: NVIDIA A100 40 GB (highgpu, megagpu) and 80 GB (ultragpu).
    a100 = AcceleratorType.NVIDIA_TESLA_A100
    for n, cpus, mem in ((1, 12, 85), (2, 24, 170), (4, 48, 340), (8, 96, 680)):
        types.append(MachineType(name=f"a2-highgpu-{n}g", cpu_cores=cpus, memory=mem, accelerators={a100: (n,)}))
    types.append(MachineType(name="a2-megagpu-16g", cpu_cores=96, memory=1360, accelerators={a100: (16,)}))
    a100_80 = AcceleratorType.NVIDIA_A100_80GB
    for n, cpus, mem in ((1, 12, 170), (2, 24, 340), (4, 48, 680), (8, 96, 1360)):
        types.append(MachineType(name=f"a2-ultragpu-{n}g", cpu_cores=cpus, memory=mem,
                                 accelerators={a100_80: (n,)}))
    # A3: NVIDIA H100 80 GB.
    h100 = AcceleratorType.NVIDIA_H100_80GB
    for n, cpus, mem in ((1, 26, 234), (2, 52, 468), (4, 104, 936), (8, 208, 1872)):
        types.append(MachineType(name=f"a3-highgpu-{n}g", cpu_cores=cpus, memory=mem, accelerators={h100: (n,)}))
    # A3 Ultra: NVIDIA H200 141 GB; A4: NVIDIA B200; A4X: NVIDIA GB200 (Grace-Blackwell, 4 per VM). One size each
    # (Compute Engine "Accelerator-optimized machine family"; Vertex AI "Configure compute resources").
    types.append(MachineType(name="a3-ultragpu-8g", cpu_cores=224, memory=2952,
                             accelerators={AcceleratorType.NVIDIA_H200_141GB: (8,)}))
    types.append(MachineType(name="a4-highgpu-8g", cpu_cores=224, memory=3968,
                             accelerators={AcceleratorType.NVIDIA_B200: (8,)}))
    types.append(MachineType(name="a4x-highgpu-4g", cpu_cores=140, memory=884,
                             accelerators={AcceleratorType.NVIDIA_GB200: (4,)}))
    # TPU v2/v3 hosts (8 cores) and TPU v5e (v5 lite pod) hosts.
    types.append(MachineType(name="cloud-tpu", cpu_cores=96, memory=335,
                             accelerators={AcceleratorType.TPU_V2: (8,), AcceleratorType.TPU_V3: (8,)}))
    # TPU VMs (Vertex AI "Configure compute resources for custom training", TPU section): v5e, v6e, v5p.
    multi_host_2d = ("4x4", "4x8", "8x8", "8x16", "16x16")
    v5e = AcceleratorType.TPU_V5_LITEPOD
    for n, cpus, mem, topologies in ((1, 24, 48, ("1x1",)), (4, 112, 192, ("2x2", *multi_host_2d)),
                                     (8, 224, 384, ("2x4",))):
        types.append(MachineType(name=f"ct5lp-hightpu-{n}t", cpu_cores=cpus, memory=mem, accelerators={v5e: (n,)},
                                 tpu_topologies=topologies))
    v6e = AcceleratorType.TPU_V6E
    for n, cpus, mem, topologies in ((1, 44, 448, ("1x1",)), (4, 180, 720, ("2x2", *multi_host_2d)),
                                     (8, 180, 1440, ("2x4",))):
        types.append(MachineType(name=f"ct6e-standard-{n}t", cpu_cores=cpus, memory=mem, accelerators={v6e: (n,)},
                                 tpu_topologies=topologies))
    types.append(MachineType(name="ct5p-hightpu-4t", cpu_cores=208, memory=448,
                             accelerators={AcceleratorType.TPU_V5P: (4,)},
                             tpu_topologies=("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4")))
    return {t.name: t for t in types}


#: Every Vertex AI machine type tfcloud knows, by name.
MACHINE_TYPES: Mapping[str, MachineType] = MappingProxyType(_build_machine_types())


def _fmt_mem(memory: float) -> str:
    return f"{memory:g}"


def _matches(mt: MachineType, accelerator: AcceleratorType, count: int) -> bool:
    if accelerator is AcceleratorType.NO_ACCELERATOR:
        return mt.name.split("-")[0] in {"n1", "e2", "n2"}
    return count in mt.accelerators.get(accelerator, ())


@dataclass(frozen=True, init=False)
class MachineConfig:
    """The machine one replica runs on.

    Same constructor as tensorflow-cloud's: ``MachineConfig(cpu_cores=8, memory=30,
    accelerator_type=AcceleratorType.NVIDIA_TESLA_T4, accelerator_count=1)``. ``memory`` is in GB.
    ``machine_type=`` names a Vertex AI machine type directly (then cpu_cores/memory come from it).
    For TPUs, ``cpu_cores`` and ``memory`` may be ``None``.
    """

    cpu_cores: int | None
    memory: float | None
    accelerator_type: AcceleratorType
    accelerator_count: int
    machine_type: str
    tpu_topology: str | None

    def __init__(
        self,
        cpu_cores: int | None = 8,
        memory: float | None = 30,
        accelerator_type: AcceleratorType = AcceleratorType.NO_ACCELERATOR,
        accelerator_count: int = 1,
        *,
        machine_type: str | None = None,
        tpu_topology: str | None = None,
    ) -> None:
        if cpu_cores is not None and (not isinstance(cpu_cores, int) or isinstance(cpu_cores, bool)
                                      or cpu_cores < 1):
            raise ValidationError("cpu_cores", "a whole number of vCPUs ≥ 1 (or None for a TPU)", cpu_cores)
        if memory is not None and (not isinstance(memory, int | float) or isinstance(memory, bool)
                                   or not 0 < memory < float("inf")):
            raise ValidationError("memory", "a number of GB > 0 (or None for a TPU)", memory)
        if machine_type is not None and not isinstance(machine_type, str):
            raise ValidationError("machine_type", "a Vertex AI machine type name such as n1-standard-8",
                                  machine_type)
        AcceleratorType.validate(accelerator_type)
        if accelerator_type is AcceleratorType.NO_ACCELERATOR:
            accelerator_count = 0
        elif isinstance(accelerator_count, bool) or not isinstance(accelerator_count, int) \
                or accelerator_count < 1:
            raise ValidationError("accelerator_count", "an integer ≥ 1 when an accelerator is set",
                                  accelerator_count)
        resolved = self._resolve(cpu_cores, memory, accelerator_type, accelerator_count, machine_type)
        if tpu_topology is not None and not resolved.tpu_topologies:
            raise ValidationError("tpu_topology", "no topology (only TPU v5e, v6e and v5p slices take one)",
                                  tpu_topology, hint="Leave tpu_topology out for this machine.")
        if tpu_topology is not None and tpu_topology not in resolved.tpu_topologies:
            raise ValidationError(
                "tpu_topology",
                f"a topology {resolved.name} ({accelerator_count} x {accelerator_type.name} per host) makes: "
                + ", ".join(resolved.tpu_topologies), tpu_topology,
                hint="The chips in the topology must be a whole number of hosts of this machine.")
        if resolved.tpu_topologies and tpu_topology is None:
            tpu_topology = resolved.tpu_topologies[0]
        if accelerator_type.is_tpu and cpu_cores is None:
            cpu_cores, memory = None, None
        else:
            cpu_cores, memory = resolved.cpu_cores, resolved.memory
        object.__setattr__(self, "cpu_cores", cpu_cores)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "accelerator_type", accelerator_type)
        object.__setattr__(self, "accelerator_count", accelerator_count)
        object.__setattr__(self, "machine_type", resolved.name)
        object.__setattr__(self, "tpu_topology", tpu_topology)

    @staticmethod
    def _resolve(cpu_cores: int | None, memory: float | None, accelerator: AcceleratorType, count: int,
                 machine_type: str | None) -> MachineType:
        candidates = [mt for mt in MACHINE_TYPES.values() if _matches(mt, accelerator, count)]
        what = accelerator.name if accelerator is AcceleratorType.NO_ACCELERATOR \
            else f"{count} x {accelerator.name}"
        if not candidates:
            counts = sorted({c for mt in MACHINE_TYPES.values() for c in mt.accelerators.get(accelerator, ())})
            raise ValidationError("accelerator_count", f"one of {counts} for {accelerator.name}", count)
        if machine_type is not None:
            for mt in candidates:
                if mt.name == machine_type:
                    return mt
            raise ValidationError("machine_type", f"a machine type that carries {what}: "
                                  + ", ".join(mt.name for mt in candidates), machine_type)
        if accelerator.is_tpu and cpu_cores is None and memory is None:
            return candidates[0]
        for mt in candidates:
            if mt.cpu_cores == cpu_cores and memory is not None and abs(mt.memory - memory) < 0.5:
                return mt
        valid = ", ".join(f"(cpu_cores={mt.cpu_cores}, memory={_fmt_mem(mt.memory)}) {mt.name}"
                          for mt in candidates)
        raise ValidationError("MachineConfig", f"a (cpu_cores, memory) pair available with {what}: {valid}",
                              f"<cpu_cores={cpu_cores}, memory={memory}>")

    @property
    def is_tpu(self) -> bool:
        return self.accelerator_type.is_tpu

    @property
    def is_gpu(self) -> bool:
        return self.accelerator_type.is_gpu

    @property
    def is_tpu_vm(self) -> bool:
        return self.accelerator_type.is_tpu_vm

    @property
    def tpu_hosts(self) -> int:
        """How many VMs (hosts) the TPU slice spans: the topology's chips / the chips per host (1 otherwise)."""
        if not self.tpu_topology:
            return 1
        chips = 1
        for side in self.tpu_topology.split("x"):
            chips *= int(side)
        return max(1, chips // self.accelerator_count)

    def describe(self) -> str:
        if self.accelerator_type is AcceleratorType.NO_ACCELERATOR:
            return self.machine_type
        text = f"{self.machine_type} + {self.accelerator_count} x {self.accelerator_type.name}"
        if self.tpu_hosts > 1:
            text += f" ({self.tpu_topology} slice, {self.tpu_hosts} hosts)"
        return text

    def __repr__(self) -> str:
        return (f"MachineConfig(cpu_cores={self.cpu_cores}, memory={self.memory}, "
                f"accelerator_type=AcceleratorType.{self.accelerator_type.name}, "
                f"accelerator_count={self.accelerator_count}, machine_type={self.machine_type!r}"
                + (f", tpu_topology={self.tpu_topology!r})" if self.tpu_topology else ")"))


A = AcceleratorType

#: tensorflow-cloud's 13 names, plus current hardware (L4, A100 40/80 GB, H100, H200, B200, GB200, TPU v5e, v6e,
#: v5p).
COMMON_MACHINE_CONFIGS: Mapping[str, MachineConfig] = MappingProxyType({
    "CPU": MachineConfig(cpu_cores=4, memory=15, accelerator_type=A.NO_ACCELERATOR, accelerator_count=0),
    "K80_1X": MachineConfig(cpu_cores=8, memory=30, accelerator_type=A.NVIDIA_TESLA_K80, accelerator_count=1),
    "K80_4X": MachineConfig(cpu_cores=16, memory=60, accelerator_type=A.NVIDIA_TESLA_K80, accelerator_count=4),
    "K80_8X": MachineConfig(cpu_cores=32, memory=120, accelerator_type=A.NVIDIA_TESLA_K80, accelerator_count=8),
    "P100_1X": MachineConfig(cpu_cores=8, memory=30, accelerator_type=A.NVIDIA_TESLA_P100, accelerator_count=1),
    "P100_4X": MachineConfig(cpu_cores=16, memory=60, accelerator_type=A.NVIDIA_TESLA_P100, accelerator_count=4),
    "P4_1X": MachineConfig(cpu_cores=8, memory=30, accelerator_type=A.NVIDIA_TESLA_P4, accelerator_count=1),
    "P4_4X": MachineConfig(cpu_cores=16, memory=60, accelerator_type=A.NVIDIA_TESLA_P4, accelerator_count=4),
    "V100_1X": MachineConfig(cpu_cores=8, memory=30, accelerator_type=A.NVIDIA_TESLA_V100, accelerator_count=1),
    "V100_4X": MachineConfig(cpu_cores=16, memory=60, accelerator_type=A.NVIDIA_TESLA_V100, accelerator_count=4),
    "T4_1X": MachineConfig(cpu_cores=8, memory=30, accelerator_type=A.NVIDIA_TESLA_T4, accelerator_count=1),
    "T4_4X": MachineConfig(cpu_cores=16, memory=60, accelerator_type=A.NVIDIA_TESLA_T4, accelerator_count=4),
    "TPU": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V3, accelerator_count=8),
    # Current hardware (not in tensorflow-cloud).
    "L4_1X": MachineConfig(cpu_cores=8, memory=32, accelerator_type=A.NVIDIA_L4, accelerator_count=1),
    "L4_4X": MachineConfig(cpu_cores=48, memory=192, accelerator_type=A.NVIDIA_L4, accelerator_count=4),
    "A100_1X": MachineConfig(cpu_cores=12, memory=85, accelerator_type=A.NVIDIA_TESLA_A100, accelerator_count=1),
    "A100_8X": MachineConfig(cpu_cores=96, memory=680, accelerator_type=A.NVIDIA_TESLA_A100, accelerator_count=8),
    "A100_80GB_1X": MachineConfig(cpu_cores=12, memory=170, accelerator_type=A.NVIDIA_A100_80GB,
                                  accelerator_count=1),
    "A100_80GB_8X": MachineConfig(cpu_cores=96, memory=1360, accelerator_type=A.NVIDIA_A100_80GB,
                                  accelerator_count=8),
    "H100_1X": MachineConfig(cpu_cores=26, memory=234, accelerator_type=A.NVIDIA_H100_80GB, accelerator_count=1),
    "H100_8X": MachineConfig(cpu_cores=208, memory=1872, accelerator_type=A.NVIDIA_H100_80GB,
                             accelerator_count=8),
    "H200_8X": MachineConfig(cpu_cores=224, memory=2952, accelerator_type=A.NVIDIA_H200_141GB,
                             accelerator_count=8),
    "B200_8X": MachineConfig(cpu_cores=224, memory=3968, accelerator_type=A.NVIDIA_B200, accelerator_count=8),
    "GB200_4X": MachineConfig(cpu_cores=140, memory=884, accelerator_type=A.NVIDIA_GB200, accelerator_count=4),
    "TPU_V5E_1X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5_LITEPOD,
                                accelerator_count=1),
    "TPU_V5E_4X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5_LITEPOD,
                                accelerator_count=4),
    "TPU_V5E_8X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5_LITEPOD,
                                accelerator_count=8),
    "TPU_V5E_16X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5_LITEPOD,
                                 accelerator_count=4, tpu_topology="4x4"),  # 4 hosts
    "TPU_V6E_1X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V6E, accelerator_count=1),
    "TPU_V6E_4X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V6E, accelerator_count=4),
    "TPU_V6E_8X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V6E, accelerator_count=8),
    "TPU_V6E_16X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V6E, accelerator_count=4,
                                 tpu_topology="4x4"),  # 4 hosts
    "TPU_V5P_4X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5P, accelerator_count=4),
    "TPU_V5P_8X": MachineConfig(cpu_cores=None, memory=None, accelerator_type=A.TPU_V5P, accelerator_count=4,
                                tpu_topology="2x2x2"),  # 2 hosts
})
del A


def machine_config_from_name(value: str, *, field: str) -> MachineConfig:
    """Resolve a catalog name (``T4_1X``, case-insensitive) as used on the command line."""
    key = value.strip().upper()
    if key in COMMON_MACHINE_CONFIGS:
        return COMMON_MACHINE_CONFIGS[key]
    raise ValidationError(field, "a name from `tfcloud machines`: " + ", ".join(COMMON_MACHINE_CONFIGS), value)
