"""The checks: a request (a CustomJob, its worker pools, a PersistentResource, labels) as plain dicts with the
protos' snake_case field names, against the tables in :mod:`tfcloud.google.rules.data` and
:mod:`~tfcloud.google.rules.fields`. Each finds every :class:`Violation` (none: Google's documentation accepts the
request)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfcloud.google.rules.data import (
    ACCELERATOR_NUMBERS,
    ACCELERATORS,
    MACHINE_TYPES,
    N1_GPU_LIMITS,
    TPU_MACHINES,
    TRAINING_REGIONS,
    MachineTypeRow,
)
from tfcloud.google.rules.fields import BOOT_DISK, DISPLAY_NAME, FLEX_START, LABELS, TPU_POD_BASE
from tfcloud.google.rules.sources import SOURCES

__all__ = ["Violation", "accelerator_name", "check_custom_job", "check_framework", "check_image_architecture",
           "check_labels", "check_persistent_resource", "check_sdk_rules", "check_tpu_pod_image",
           "check_worker_pool_specs", "duration_seconds", "strategy_name"]


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One documented rule a request breaks. ``field``: Google's field path; ``description``: what Google expects,
    what was received and the fix; ``rule``: a short stable id; ``source``: the page or proto field, with the date
    read. ``expected``/``received``/``hint``: the description's parts, for a caller that words its own message."""

    field: str
    description: str
    rule: str
    source: str
    expected: str = ""
    received: str = ""
    hint: str = ""


def _violation(field: str, rule: str, source: str, *, expected: str, received: object, hint: str) -> Violation:
    shown = received if isinstance(received, str) else repr(received)
    return Violation(field=field, rule=rule, source=str(SOURCES[source]), expected=expected, received=shown,
                     hint=hint, description=f"expected {expected}; received {shown}. {hint}")


_STRATEGIES = {0: "STRATEGY_UNSPECIFIED", 1: "ON_DEMAND", 2: "LOW_COST", 3: "STANDARD", 4: "SPOT", 6: "FLEX_START"}
_AFFINITIES = {0: "TYPE_UNSPECIFIED", 1: "NO_RESERVATION", 2: "ANY_RESERVATION", 3: "SPECIFIC_RESERVATION"}


def accelerator_name(value: object) -> str | None:
    """An ``AcceleratorType`` by name or number as its name; None for none (unset or UNSPECIFIED)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = ACCELERATOR_NUMBERS.get(value, str(value))
    if not value or value == "ACCELERATOR_TYPE_UNSPECIFIED":
        return None
    return str(value)


def strategy_name(value: object) -> str | None:
    """``Scheduling.strategy`` by name or number as its name; None for unset."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = _STRATEGIES.get(value, str(value))
    if not value or value == "STRATEGY_UNSPECIFIED":
        return None
    return str(value)


def duration_seconds(value: object) -> float | None:
    """A ``Duration`` as JSON writes it (``"3600s"``) or as ``{"seconds": ..., "nanos": ...}``."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.endswith("s"):
        try:
            return float(value[:-1])
        except ValueError:
            return None
    if isinstance(value, Mapping):
        return float(value.get("seconds", 0) or 0) + float(value.get("nanos", 0) or 0) / 1e9
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _int(value: object, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return default


def _empty(pool: object) -> bool:
    """An unset pool: absent, ``{}``, or (as proto-plus ``to_dict`` writes it, default fields included) one with no
    machine type."""
    if not isinstance(pool, Mapping):
        return True
    spec = pool.get("machine_spec") or {}
    return not (isinstance(spec, Mapping) and spec.get("machine_type"))


def _affinity(machine_spec: Mapping[str, Any]) -> str | None:
    affinity = machine_spec.get("reservation_affinity") or {}
    kind = affinity.get("reservation_affinity_type") if isinstance(affinity, Mapping) else None
    if isinstance(kind, int) and not isinstance(kind, bool):
        kind = _AFFINITIES.get(kind)
    return str(kind) if kind else None


# -- one pool ----------------------------------------------------------------------------------------------------
def _check_machine(f: str, spec: Mapping[str, Any], row: MachineTypeRow, *, location: str,
                   today: datetime.date) -> list[Violation]:
    found: list[Violation] = []
    accelerator = accelerator_name(spec.get("accelerator_type"))
    count = _int(spec.get("accelerator_count"), 0)
    topology = spec.get("tpu_topology") or None
    tpu = TPU_MACHINES.get(row.name)
    name = row.name
    if tpu is not None and row.name != "cloud-tpu":
        # A TPU VM machine type fixes its chips; the accelerator may be left out (Google's examples do).
        chips = tpu.chips_per_host
        if accelerator is not None and (accelerator != tpu.accelerator or count not in (0, chips)):
            found.append(_violation(
                f"{f}.accelerator_type", "accelerator-for-machine", "configure-compute",
                expected=f"no accelerator, or {chips} x {tpu.accelerator} ({name} carries {chips} chips)",
                received=f"{count} x {accelerator}", hint="Leave accelerator_type and accelerator_count out."))
        accelerator, count = tpu.accelerator, chips
        if topology is None and tpu.topology_required:
            found.append(_violation(
                f"{f}.tpu_topology", "tpu-topology-required", "sdk-tpu-topology",
                expected=f"a tpu_topology for {name} ({ACCELERATORS[tpu.accelerator].title}): "
                         + ", ".join(tpu.topologies), received="no tpu_topology",
                hint=f"Add tpu_topology \"{next(iter(tpu.topologies))}\" (one host), as Google's examples do."))
        elif topology is not None and topology not in tpu.topologies:
            found.append(_violation(
                f"{f}.tpu_topology", "tpu-topology-valid", "tpu-training",
                expected=f"a topology {name} makes: " + ", ".join(tpu.topologies), received=topology,
                hint="The chips in the topology must be a whole number of hosts of this machine type."))
    else:
        if topology is not None:
            found.append(_violation(
                f"{f}.tpu_topology", "tpu-topology-not-taken", "tpu-topology",
                expected=f"no tpu_topology ({name} is not a TPU VM machine type)", received=topology,
                hint="Leave tpu_topology out."))
        if accelerator is None and row.accelerators and row.family != "n1":
            accelerators = ", ".join(f"{c} x {a}" for a, counts in row.accelerators.items() for c in counts)
            found.append(_violation(
                f"{f}.accelerator_type", "accelerator-required", "configure-compute",
                expected=f"the accelerator {name} carries ({accelerators})", received="no accelerator",
                hint="Set accelerator_type and accelerator_count as Google's example for this machine does."))
        if accelerator is not None:
            found += _check_accelerator(f, row, accelerator, count, location=location, today=today)
            return found
    if accelerator is not None:
        found += _check_served(f, accelerator, location=location, today=today)
    return found


def _check_accelerator(f: str, row: MachineTypeRow, accelerator: str, count: int, *, location: str,
                       today: datetime.date) -> list[Violation]:
    found = _check_served(f, accelerator, location=location, today=today)
    if accelerator not in ACCELERATORS:
        return found  # not a training accelerator at all: nothing more to say
    counts = row.accelerators.get(accelerator)
    if counts is None:
        takers = sorted(m.name for m in MACHINE_TYPES.values() if accelerator in m.accelerators)
        found.append(_violation(
            f"{f}.accelerator_type", "accelerator-for-machine", "configure-compute",
            expected=(f"an accelerator {row.name} takes (" + ", ".join(row.accelerators) + ")" if row.accelerators
                      else f"no accelerator ({row.name} takes none)"),
            received=accelerator,
            hint=("Machine types that take it: " + ", ".join(takers[:8]) + "." if takers
                  else "Pick a machine from `tfcloud machines`.")))
        return found
    if count not in counts:
        found.append(_violation(
            f"{f}.accelerator_count", "accelerator-count", "configure-compute",
            expected=f"{' or '.join(map(str, counts))} x {accelerator} on {row.name}", received=count,
            hint=f"Set accelerator_count to {counts[0]}."))
        return found
    if row.family == "n1" and accelerator in N1_GPU_LIMITS:
        limit = next((lim for lim in N1_GPU_LIMITS[accelerator] if lim.count == count), None)
        if limit is not None and (row.vcpus > limit.max_vcpus or row.memory_gb > limit.max_memory_gb):
            fits = sorted((m for m in MACHINE_TYPES.values() if m.family == "n1"
                           and m.vcpus <= limit.max_vcpus and m.memory_gb <= limit.max_memory_gb),
                          key=lambda m: (-m.vcpus, m.memory_gb))
            found.append(_violation(
                f"{f}.machine_type", "n1-gpu-limits", "gpus",
                expected=f"an N1 machine with at most {limit.max_vcpus} vCPUs and {limit.max_memory_gb:g} GB "
                         f"for {count} x {accelerator}",
                received=f"{row.name} ({row.vcpus} vCPUs, {row.memory_gb:g} GB)",
                hint="Use " + (", ".join(m.name for m in fits[:3]) if fits else "fewer vCPUs") + ", or more GPUs."))
    return found


def _check_served(f: str, accelerator: str, *, location: str, today: datetime.date) -> list[Violation]:
    info = ACCELERATORS.get(accelerator)
    if info is None:
        return [_violation(f"{f}.accelerator_type", "accelerator-for-training", "configure-compute",
                           expected="an accelerator Vertex AI offers for custom training: " + ", ".join(
                               a.name for a in ACCELERATORS.values() if a.offered and a.number is not None),
                           received=accelerator, hint="Pick a machine from `tfcloud machines`.")]
    if not info.offered:
        return [_violation(f"{f}.accelerator_type", "accelerator-no-longer-offered", info.source,
                           expected=f"an accelerator Vertex AI offers ({info.title} is no longer offered)",
                           received=accelerator, hint=f"Use {info.replacement}.")]
    if info.end_of_support is not None and today >= info.end_of_support:
        return [_violation(f"{f}.accelerator_type", "accelerator-end-of-support", info.source,
                           expected=f"an accelerator in support ({info.title}'s support ended "
                                    f"{info.end_of_support.isoformat()})", received=accelerator,
                           hint=f"Use {info.replacement}.")]
    if location in TRAINING_REGIONS and location not in info.regions:
        return [_violation(f"{f}.accelerator_type", "accelerator-region", "locations",
                           expected=f"an accelerator Vertex AI serves for training in {location}",
                           received=f"{info.title} ({accelerator})",
                           hint=f"Run in a region that serves {info.title}: " + ", ".join(sorted(info.regions))
                                + ".")]
    return []


def _check_disk(f: str, pool: Mapping[str, Any], row: MachineTypeRow) -> list[Violation]:
    disk = pool.get("disk_spec") or {}
    found: list[Violation] = []
    # DiskSpec's default: hyperdisk-balanced for A3 Ultra, pd-ssd for every other machine.
    default = "hyperdisk-balanced" if row.name.startswith("a3-ultragpu") else "pd-ssd"
    kind = disk.get("boot_disk_type") or default
    if kind not in row.boot_disks:
        found.append(_violation(
            f"{f}.disk_spec.boot_disk_type", "boot-disk-type", "accelerator-family" if "hyperdisk-balanced"
            in row.boot_disks else "disk-spec",
            expected=f"a boot disk type {row.name} takes: " + ", ".join(row.boot_disks),
            received=kind if disk.get("boot_disk_type") else f"none (Vertex AI's default, {default})",
            hint=f"Set boot_disk_type to \"{row.default_boot_disk}\"."))
    size = disk.get("boot_disk_size_gb")
    if size not in (None, 0) and not BOOT_DISK.min_size_gb <= _int(size, -1) <= BOOT_DISK.max_size_gb:
        found.append(_violation(
            f"{f}.disk_spec.boot_disk_size_gb", "boot-disk-size", "disk-spec",
            expected=f"{BOOT_DISK.min_size_gb} to {BOOT_DISK.max_size_gb} GB", received=size,
            hint=f"Leave it out for {BOOT_DISK.default_size_gb} GB."))
    return found


def _check_pool(f: str, pool: Mapping[str, Any], *, location: str, today: datetime.date) -> list[Violation]:
    spec = pool.get("machine_spec") or {}
    machine_type = spec.get("machine_type")
    row = MACHINE_TYPES.get(str(machine_type))
    if row is None:
        return [_violation(f"{f}.machine_spec.machine_type", "machine-type-for-training", "configure-compute",
                           expected="a machine type Google lists for custom training (`tfcloud machines`)",
                           received=machine_type if machine_type else "none",
                           hint="TPU v5p (ct5p-*) and n1-highcpu-4/8 are not custom training machine types.")]
    found = _check_machine(f"{f}.machine_spec", spec, row, location=location, today=today)
    accelerator = accelerator_name(spec.get("accelerator_type"))
    info = ACCELERATORS.get(accelerator or next(iter(row.accelerators), ""))
    if info is not None and info.needs_reservation and info.offered and _affinity(spec) not in (
            "ANY_RESERVATION", "SPECIFIC_RESERVATION"):
        found.append(_violation(
            f"{f}.machine_spec.reservation_affinity", "reservation-required", "reservations",
            expected=f"a reservation ({info.title} is offered only through reservations)",
            received=_affinity(spec) or "no reservation_affinity",
            hint="Reserve the capacity with Compute Engine and pass it (--reservation ZONE/NAME)."))
    return found + _check_disk(f, pool, row)


def _tpu_hosts(pool: Mapping[str, Any]) -> int:
    spec = pool.get("machine_spec") or {}
    tpu = TPU_MACHINES.get(str(spec.get("machine_type")))
    if tpu is None:
        return 0
    return tpu.topologies.get(str(spec.get("tpu_topology") or ""), 1)


def check_worker_pool_specs(pools: Sequence[Mapping[str, Any]], *, location: str,
                            today: datetime.date | None = None, field: str = "job_spec.worker_pool_specs",
                            scheduling_strategy: str | None = None) -> list[Violation]:
    """A job's ``worker_pool_specs`` (empty pools are skipped, as Vertex AI skips them) in ``location``."""
    today = today or datetime.date.today()
    found: list[Violation] = []
    if location not in TRAINING_REGIONS:
        found.append(_violation("location", "region-serves-training", "locations",
                                expected="a region Vertex AI serves custom training in", received=location,
                                hint="Regions: " + ", ".join(sorted(TRAINING_REGIONS)) + "."))
    if not pools or _empty(pools[0]):
        found.append(_violation(f"{field}[0]", "first-pool-required", "configure-compute",
                                expected="a first worker pool (the primary replica)", received="none",
                                hint="Put the chief (or the only) machine in worker_pool_specs[0]."))
    used = [(i, pool) for i, pool in enumerate(pools) if not _empty(pool)]
    for i, pool in used:
        found += _check_pool(f"{field}[{i}]", pool, location=location, today=today)
    tpu_pools = [(i, pool) for i, pool in used if _tpu_hosts(pool)]
    if tpu_pools:
        others = [i for i, _ in used if i != 0]
        first = tpu_pools[0][0]
        replicas = _int(pools[first].get("replica_count"), 1)
        if first != 0 or others or replicas != 1:
            extra = first if first != 0 or not others else others[0]  # the pool to leave out
            found.append(_violation(
                f"{field}[{extra}]", "tpu-one-pool-one-replica", "tpu-training",
                expected="a TPU job as one worker pool (worker_pool_specs[0]) with replica_count 1 (a multi-host "
                         "slice is one replica with its tpu_topology)",
                received=f"{len(used)} pools, the TPU in pool {first} with replica_count {replicas}",
                hint="Run the TPU as the only pool: leave out the chief, worker count, PS and evaluator."))
    strategy = strategy_name(scheduling_strategy)
    if strategy == "SPOT":
        for i, pool in tpu_pools:
            if _tpu_hosts(pool) > 1:
                found.append(_violation(
                    f"{field}[{i}].machine_spec.tpu_topology", "spot-multi-host-tpu", "spot",
                    expected="a single-host TPU slice with Spot VMs (Spot VMs with TPU Pods isn't supported)",
                    received=f"{pool['machine_spec'].get('tpu_topology')} ({_tpu_hosts(pool)} hosts) with SPOT",
                    hint="Leave out --spot, or use a single-host topology."))
    if strategy == "FLEX_START":
        found += _check_flex_start(field, used)
    return found


def _check_flex_start(field: str, used: list[tuple[int, Mapping[str, Any]]]) -> list[Violation]:
    found: list[Violation] = []
    first: tuple[object, ...] | None = None
    for i, pool in used:
        spec = pool["machine_spec"]
        row = MACHINE_TYPES.get(str(spec.get("machine_type")))
        accelerator = accelerator_name(spec.get("accelerator_type")) or (
            next(iter(row.accelerators), None) if row else None)
        if accelerator not in FLEX_START.accelerators:
            found.append(_violation(
                f"{field}[{i}].machine_spec.accelerator_type", "flex-start-accelerator", "dws",
                expected="a GPU FLEX_START serves: " + ", ".join(sorted(FLEX_START.accelerators)),
                received=f"{spec.get('machine_type')} ({accelerator or 'no accelerator'})",
                hint="Pick one of those machines, or leave out --scheduling flex-start."))
        key = (spec.get("machine_type"), accelerator, _int(spec.get("accelerator_count")))
        if first is None:
            first = key
        elif key != first:
            found.append(_violation(
                f"{field}[{i}].machine_spec", "flex-start-one-machine", "dws",
                expected=f"the same machine as worker_pool_specs[{used[0][0]}] with FLEX_START",
                received=f"{key[0]} ({key[1]})", hint="Give every pool the same machine config."))
    return found


# -- labels and names --------------------------------------------------------------------------------------------
def check_labels(labels: Mapping[str, str], *, field: str = "labels") -> list[Violation]:
    """Keys and values by :data:`~tfcloud.google.rules.fields.LABELS`: up to 63 characters, lowercase letters
    (international ones too), numbers, '_' and '-'; a key starts with a lowercase letter; at most 64 labels."""
    found: list[Violation] = []
    if len(labels) > LABELS.max_labels:
        found.append(_violation(field, "labels-count", "label-count", expected=f"at most {LABELS.max_labels} labels",
                                received=len(labels), hint="Drop some labels."))
    for key, value in labels.items():
        if not isinstance(key, str) or not LABELS.allows(key, key=True):
            found.append(_violation(
                f"{field}[{key!r}]", "label-key", "labels",
                expected=f"a key of 1 to {LABELS.max_length} lowercase letters, digits, '_' or '-', starting with "
                         "a letter (international characters allowed)", received=key,
                hint="Lowercase it and replace other characters with '-'."))
        if not isinstance(value, str) or not LABELS.allows(value, key=False):
            found.append(_violation(
                f"{field}[{key!r}]", "label-value", "labels",
                expected=f"a value of up to {LABELS.max_length} lowercase letters, digits, '_' or '-' "
                         "(international characters allowed)", received=value,
                hint="Lowercase it and replace other characters with '-'."))
    return found


def _check_display_name(name: object, field: str) -> list[Violation]:
    if not isinstance(name, str) or not name or len(name) > DISPLAY_NAME:
        return [_violation(field, "display-name", "display-name",
                           expected=f"a display name of 1 to {DISPLAY_NAME} characters",
                           received=name if isinstance(name, str) and len(name) < 200 else
                           f"<{len(name) if isinstance(name, str) else 0} characters>",
                           hint=f"Shorten it to {DISPLAY_NAME} characters.")]
    return []


# -- whole requests ----------------------------------------------------------------------------------------------
def check_custom_job(job: Mapping[str, Any], *, location: str,
                     today: datetime.date | None = None) -> list[Violation]:
    """A CustomJob (as ``CustomJob.to_dict(job, preserving_proto_field_name=True)`` gives it) in ``location``."""
    spec = job.get("job_spec") or {}
    scheduling = spec.get("scheduling") or {}
    strategy = strategy_name(scheduling.get("strategy"))
    found = _check_display_name(job.get("display_name"), "display_name")
    found += check_labels(job.get("labels") or {})
    found += check_worker_pool_specs(spec.get("worker_pool_specs") or [], location=location, today=today,
                                     scheduling_strategy=strategy)
    if strategy == "FLEX_START":
        timeout = duration_seconds(scheduling.get("timeout"))
        if timeout and timeout > FLEX_START.max_timeout_s:
            found.append(_violation("job_spec.scheduling.timeout", "flex-start-timeout", "dws",
                                    expected=f"at most {FLEX_START.max_timeout_s}s (7 days) with FLEX_START",
                                    received=scheduling.get("timeout"), hint="Lower --timeout."))
    wait = duration_seconds(scheduling.get("max_wait_duration"))  # 0 or unset: not given
    if wait and (strategy != "FLEX_START" or wait > FLEX_START.max_wait_s):
        found.append(_violation("job_spec.scheduling.max_wait_duration", "flex-start-max-wait", "dws",
                                expected=f"at most {FLEX_START.max_wait_s}s, with FLEX_START only",
                                received=f"{scheduling.get('max_wait_duration')} with {strategy or 'no strategy'}",
                                hint="Add --scheduling flex-start, or leave out --max-wait."))
    return found


def check_sdk_rules(job: Mapping[str, Any]) -> list[Violation]:
    """The google-cloud-aiplatform SDK's own checks before it sends a CustomJob (``jobs.py``): an experiment and a
    TensorBoard are not set together, and an experiment needs the job's service account."""
    spec = job.get("job_spec") or {}
    found: list[Violation] = []
    if spec.get("experiment") and spec.get("tensorboard"):
        found.append(_violation("job_spec.tensorboard", "experiment-with-tensorboard", "sdk-experiment",
                                expected="no tensorboard when experiment is set (the SDK refuses the pair: "
                                         "an experiment's runs are written to its own backing TensorBoard)",
                                received="both", hint="Give one of --tensorboard and --experiment."))
    if spec.get("experiment") and not spec.get("service_account"):
        found.append(_violation("job_spec.service_account", "experiment-service-account", "sdk-experiment",
                                expected="a service account when experiment is set", received="none",
                                hint="Add --service-account NAME@PROJECT.iam.gserviceaccount.com."))
    return found


def check_persistent_resource(resource: Mapping[str, Any], *, location: str,
                              today: datetime.date | None = None) -> list[Violation]:
    """A PersistentResource: each of its ``resource_pools`` as a worker pool in ``location``, its name and labels."""
    today = today or datetime.date.today()
    found: list[Violation] = []
    if resource.get("display_name") is not None:
        found += _check_display_name(resource.get("display_name"), "display_name")
    found += check_labels(resource.get("labels") or {})
    pools = resource.get("resource_pools") or []
    if location not in TRAINING_REGIONS:
        found.append(_violation("location", "region-serves-training", "locations",
                                expected="a region Vertex AI serves custom training in", received=location,
                                hint="Regions: " + ", ".join(sorted(TRAINING_REGIONS)) + "."))
    if not pools:
        found.append(_violation("resource_pools", "resource-pool-required", "persistent-resources",
                                expected="at least one resource pool", received="none",
                                hint="Give the cluster a machine (--machine)."))
    for i, pool in enumerate(pools):
        if not _empty(pool):
            found += _check_pool(f"resource_pools[{i}]", pool, location=location, today=today)
    return found


_FRAMEWORKS = {"tensorflow": "TensorFlow", "pytorch": "PyTorch", "jax": "JAX"}


def check_framework(pools: Sequence[Mapping[str, Any]], framework: str, *,
                    field: str = "job_spec.worker_pool_specs") -> list[Violation]:
    """The frameworks Google supports on each TPU generation (``framework``: ``tensorflow``, ``pytorch`` or
    ``jax``): TensorFlow is not supported from TPU v6e on."""
    found: list[Violation] = []
    for i, pool in enumerate(pools):
        if _empty(pool):
            continue
        tpu = TPU_MACHINES.get(str(pool["machine_spec"].get("machine_type")))
        if tpu is not None and framework not in tpu.frameworks:
            runs = sorted({ACCELERATORS[name].title for t in TPU_MACHINES.values() if framework in t.frameworks
                           for name in MACHINE_TYPES[t.machine_type].accelerators})
            shown = _FRAMEWORKS.get(framework, framework)
            found.append(_violation(
                f"{field}[{i}].machine_spec.machine_type", "tpu-framework", "tpu-frameworks",
                expected=f"a TPU generation Google supports {shown} on (" + ", ".join(runs) + ")",
                received=f"{tpu.machine_type} ({tpu.generation}: "
                         + ", ".join(sorted(_FRAMEWORKS.get(f, f) for f in tpu.frameworks)) + ")",
                hint=f"{tpu.generation} does not run {shown} on Vertex AI; use TPU_V5E_8X (TPU v5e) or a GPU."))
    return found


def check_image_architecture(pools: Sequence[Mapping[str, Any]], architectures: frozenset[str], *,
                             field: str = "job_spec.worker_pool_specs") -> list[Violation]:
    """An Arm machine (A4X, GB200) runs an arm64 image only: ``architectures``, the image's platforms."""
    found: list[Violation] = []
    for i, pool in enumerate(pools):
        if _empty(pool):
            continue
        row = MACHINE_TYPES.get(str(pool["machine_spec"].get("machine_type")))
        if row is not None and row.arm and "arm64" not in architectures:
            found.append(_violation(
                f"{field}[{i}].machine_spec.machine_type", "arm-image-required", "accelerator-family",
                expected=f"an arm64 image on {row.name} (its CPUs are Arm)",
                received="an image for " + ", ".join(sorted(architectures) or ["amd64"]),
                hint="Run an image built for arm64 on it, or pick an x86 machine."))
    return found


def check_tpu_pod_image(pools: Sequence[Mapping[str, Any]], *, base_image: str, runs_as_cmd: bool,
                        field: str = "job_spec.worker_pool_specs") -> list[Violation]:
    """TensorFlow on a multi-host TPU slice (a TPU Pod), :data:`~tfcloud.google.rules.fields.TPU_POD_BASE`: the image
    is built FROM Vertex AI's TPU Pod base image (``base_image``) and runs its command as CMD (``runs_as_cmd``); the
    pool's container spec sets no ``command`` (it would replace the base image's ENTRYPOINT). For a TensorFlow job
    on an image tfcloud writes (a parent image of the user's own is theirs to set up)."""
    pod_images = {TPU_POD_BASE.uri(area) for area in TPU_POD_BASE.multi_regions}
    found: list[Violation] = []
    for i, pool in enumerate(pools):
        if _empty(pool) or _tpu_hosts(pool) <= 1:
            continue
        problems = [] if base_image in pod_images else [f"FROM {base_image}"]
        if not runs_as_cmd:
            problems.append("the command as ENTRYPOINT")
        if (pool.get("container_spec") or {}).get("command"):
            problems.append("container_spec.command set")
        if problems:
            found.append(_violation(
                f"{field}[{i}].container_spec", "tpu-pod-tensorflow-image", TPU_POD_BASE.source,
                expected=f"TensorFlow on a TPU Pod built FROM {TPU_POD_BASE.uri()} (or its europe/asia copy), its "
                         "command as CMD and no container_spec.command",
                received=", ".join(problems),
                hint="Build the image on Vertex AI's TPU Pod base image with CMD, and pass the command as args."))
    return found
