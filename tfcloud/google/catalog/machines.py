"""Machine catalog: what a replica runs on, and how it maps to a Vertex AI machine type + accelerator.

``MachineConfig(cpu_cores, memory, accelerator_type, accelerator_count)`` keeps tensorflow-cloud's
constructor. Each config resolves to exactly one Vertex AI machine type from :data:`MACHINE_TYPES` (the
machine types Google lists for custom training, from :mod:`tfcloud.google.rules`); a combination that no machine
type offers (as Google allows it: an N1 machine within the vCPU/memory limits of its GPU count) is rejected at
construction with the nearest valid ones listed.
"""

from __future__ import annotations

import datetime
import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tfcloud.errors import ValidationError

__all__ = ["COMMON_MACHINE_CONFIGS", "MACHINE_TYPES", "RETIRED_CONFIGS", "AcceleratorType", "MachineConfig",
           "MachineType", "machine_config_from_name", "offered_configs"]


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
    NVIDIA_H100_MEGA_80GB = "NVIDIA_H100_MEGA_80GB"
    NVIDIA_H200_141GB = "NVIDIA_H200_141GB"
    NVIDIA_B200 = "NVIDIA_B200"
    NVIDIA_GB200 = "NVIDIA_GB200"
    TPU_V2 = "TPU_V2"
    TPU_V3 = "TPU_V3"
    TPU_V5_LITEPOD = "TPU_V5_LITEPOD"
    # Not in google-cloud-aiplatform's enum: the request names it by machine type only (docs/vertex.md).
    TPU_V6E = "TPU_V6E"

    @property
    def is_tpu(self) -> bool:
        return self.name.startswith("TPU")

    @property
    def is_gpu(self) -> bool:
        return self.name.startswith("NVIDIA")

    @property
    def is_tpu_vm(self) -> bool:
        """A TPU generation whose machine type fixes its chips and takes a ``tpu_topology`` (v5e, v6e)."""
        return self in (AcceleratorType.TPU_V5_LITEPOD, AcceleratorType.TPU_V6E)

    @property
    def offered(self) -> bool:
        """Whether Vertex AI still offers it for training (K80: no; tfcloud keeps the name to say so)."""
        from tfcloud.google.rules import ACCELERATORS

        info = ACCELERATORS.get(self.value)
        return info is None or info.offered

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
    """One Vertex AI training machine type: its vCPUs, memory (GB) and the accelerators it can carry (derived from
    Google's table, :data:`tfcloud.google.rules.MACHINE_TYPES`)."""

    name: str
    cpu_cores: int
    memory: float
    accelerators: Mapping[AcceleratorType, tuple[int, ...]] = field(default_factory=dict)
    #: TPU VM machine types: the slice topologies they make, the single-host one first (more chips than the
    #: machine carries: a multi-host slice of several VMs).
    tpu_topologies: tuple[str, ...] = ()


def _build_machine_types() -> dict[str, MachineType]:
    """Every machine type Google lists for custom training, from :mod:`tfcloud.google.rules` (one table: the gate,
    the emulator and this catalog read the same rows)."""
    from tfcloud.google.rules import MACHINE_TYPES as ROWS
    from tfcloud.google.rules import TPU_MACHINES

    types: dict[str, MachineType] = {}
    for row in ROWS.values():
        tpu = TPU_MACHINES.get(row.name)
        types[row.name] = MachineType(
            name=row.name, cpu_cores=row.vcpus, memory=row.memory_gb,
            accelerators={AcceleratorType(name): counts for name, counts in row.accelerators.items()},
            tpu_topologies=tuple(tpu.topologies) if tpu is not None else ())
    return types


#: Every Vertex AI training machine type, by name.
MACHINE_TYPES: Mapping[str, MachineType] = MappingProxyType(_build_machine_types())


def _fmt_mem(memory: float) -> str:
    return f"{memory:g}"


@functools.cache
def _candidates(accelerator: AcceleratorType, count: int) -> tuple[MachineType, ...]:
    """The machine types that carry ``count`` x ``accelerator`` as Google allows (N1: within the vCPU/memory
    limits Compute Engine sets for that GPU count), in the table's order; once per pair (`tfcloud machines` asks
    for every offered config)."""
    from tfcloud.google.rules import N1_GPU_LIMITS

    limit = next((lim for lim in N1_GPU_LIMITS.get(accelerator.value, ()) if lim.count == count), None)

    def matches(mt: MachineType) -> bool:
        family = mt.name.split("-")[0]
        if accelerator is AcceleratorType.NO_ACCELERATOR:
            return family == "n1" or not mt.accelerators
        if count not in mt.accelerators.get(accelerator, ()):
            return False
        if family == "n1":
            return limit is not None and mt.cpu_cores <= limit.max_vcpus and mt.memory <= limit.max_memory_gb
        return True

    return tuple(mt for mt in MACHINE_TYPES.values() if matches(mt))


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
        if not accelerator_type.offered:
            from tfcloud.google.rules import ACCELERATORS, SOURCES

            info = ACCELERATORS[accelerator_type.value]
            raise ValidationError("accelerator_type", "an accelerator Vertex AI offers for training "
                                  f"({info.title} is no longer offered)", f"AcceleratorType.{accelerator_type.name}",
                                  hint=f"Use {info.replacement}. Source: {SOURCES[info.source]}.")
        if accelerator_type is AcceleratorType.NO_ACCELERATOR:
            accelerator_count = 0
        elif isinstance(accelerator_count, bool) or not isinstance(accelerator_count, int) \
                or accelerator_count < 1:
            raise ValidationError("accelerator_count", "an integer ≥ 1 when an accelerator is set",
                                  accelerator_count)
        resolved = self._resolve(cpu_cores, memory, accelerator_type, accelerator_count, machine_type)
        if tpu_topology is not None and not resolved.tpu_topologies:
            raise ValidationError("tpu_topology", "no topology (only TPU v5e and v6e slices take one)",
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
        candidates = _candidates(accelerator, count)
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
        nearest = sorted(candidates, key=lambda mt: (abs(mt.cpu_cores - (cpu_cores or 0)),
                                                     abs(mt.memory - (memory or 0))))[:8]
        valid = ", ".join(f"(cpu_cores={mt.cpu_cores}, memory={_fmt_mem(mt.memory)}) {mt.name}"
                          for mt in candidates if mt in nearest) + (", ..." if len(candidates) > len(nearest) else "")
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

#: tensorflow-cloud's names (less K80_*: Vertex AI no longer offers the K80, :data:`RETIRED_CONFIGS`), plus current
#: hardware (L4, A100 40/80 GB, H100, H200, B200, GB200, TPU v5e, v6e). Each maps to a machine type and accelerator
#: count Google lists for custom training; whether the job's region serves it, and whether it is still in
#: support on the day of the run (P100: until 2026-09-15), is the gate's check (:mod:`tfcloud.google.rules`).
COMMON_MACHINE_CONFIGS: Mapping[str, MachineConfig] = MappingProxyType({
    "CPU": MachineConfig(cpu_cores=4, memory=15, accelerator_type=A.NO_ACCELERATOR, accelerator_count=0),
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
})
del A


#: tensorflow-cloud's names for what Vertex AI no longer offers → the name to use instead.
RETIRED_CONFIGS: Mapping[str, str] = MappingProxyType({"K80_1X": "T4_1X", "K80_4X": "T4_4X", "K80_8X": "T4_4X",
                                                       "TPU_V5P_4X": "TPU_V5E_4X", "TPU_V5P_8X": "TPU_V5E_8X"})


def machine_config_from_name(value: str, *, field: str) -> MachineConfig:
    """Resolve a catalog name (``T4_1X``, case-insensitive) as used on the command line."""
    key = value.strip().upper()
    if key in COMMON_MACHINE_CONFIGS:
        return COMMON_MACHINE_CONFIGS[key]
    if key in RETIRED_CONFIGS:
        why = ("Vertex AI no longer offers the NVIDIA K80" if key.startswith("K80") else
               "TPU v5p (ct5p-hightpu-4t) is not a Vertex AI custom training machine type")
        raise ValidationError(field, "a machine Vertex AI offers for custom training", value,
                              hint=f"{why}; use {RETIRED_CONFIGS[key]} (`tfcloud machines` lists them).")
    raise ValidationError(field, "a name from `tfcloud machines`: " + ", ".join(COMMON_MACHINE_CONFIGS), value)


#: The CPU architectures of the images tfcloud builds and runs (its Dockerfile, built on an amd64 engine or Cloud
#: Build, and the official TensorFlow images it starts from): amd64 only.
IMAGE_ARCHITECTURES = frozenset({"amd64"})


def not_yet_runnable(config: MachineConfig) -> str | None:
    """Why no job can run on ``config`` yet, or None: an Arm host (A4X, the GB200's; Google's table,
    :mod:`tfcloud.google.rules`) runs arm64 images only, and tfcloud builds :data:`IMAGE_ARCHITECTURES`. The one
    reason ``tfcloud machines`` marks the machine with and a job on it is refused with."""
    from tfcloud.google.rules import MACHINE_TYPES

    row = MACHINE_TYPES.get(config.machine_type)
    if row is None or not row.arm or "arm64" in IMAGE_ARCHITECTURES:
        return None
    return (f"not yet runnable: {config.machine_type} has Arm CPUs, which run arm64 images only, and tfcloud builds "
            f"{', '.join(sorted(IMAGE_ARCHITECTURES))} images; pick an x86 machine (B200_8X, H200_8X) until it "
            "builds arm64 ones")


def offered_configs(today: datetime.date | None = None) -> dict[str, MachineConfig]:
    """The catalog less what Vertex AI does not offer on ``today`` (None: the day of the run): an accelerator past
    its end of support (P100 from 2026-09-15) is left out, as Google's table says (:mod:`tfcloud.google.rules`)."""
    from tfcloud.google.rules import ACCELERATORS

    today = today or datetime.date.today()
    offered: dict[str, MachineConfig] = {}
    for name, config in COMMON_MACHINE_CONFIGS.items():
        info = ACCELERATORS.get(config.accelerator_type.value)
        if info is not None and (not info.offered or (info.end_of_support is not None
                                                      and today >= info.end_of_support)):
            continue
        offered[name] = config
    return offered
