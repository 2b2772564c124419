"""The dry-run plan: what a submission would do, computed without credentials, TensorFlow or a network."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tfcloud.pipeline import prepare
from tfcloud.spec import JobSpec, Role, Strategy

__all__ = ["Plan", "PoolRow", "make_plan"]


@dataclass(frozen=True, kw_only=True)
class PoolRow:
    role: str
    replicas: int
    machine_type: str
    accelerator: str


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What ``run(dry_run=True)`` returns and ``tfcloud submit --dry-run`` prints."""

    spec: JobSpec
    strategy: str
    strategy_reason: str
    pools: tuple[PoolRow, ...]
    launcher: str
    command: tuple[str, ...]
    requirements: tuple[str, ...]
    notes: tuple[str, ...]
    #: setting or job default -> {"value": ..., "from": where it came from} (tfcloud.settings); what was left
    #: at tfcloud's default is not listed
    sources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)

    @property
    def args(self) -> tuple[str, ...]:
        return self.spec.entry_point_args

    def to_dict(self) -> dict[str, object]:
        return {
            "entry_point": str(self.spec.entry_point),
            "target": self.spec.target.name,
            "strategy": self.strategy,
            "strategy_reason": self.strategy_reason,
            "pools": [vars(p) for p in self.pools],
            "command": list(self.command),
            "args": list(self.args),
            "requirements": list(self.requirements),
            "notes": list(self.notes),
            "labels": dict(self.spec.job_labels),
            "sources": {name: dict(source) for name, source in self.sources.items()},
        }


def _pool_rows(spec: JobSpec) -> tuple[PoolRow, ...]:
    rows = []
    for pool in spec.pools:
        m = pool.machine
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" per host, {m.tpu_topology} slice on {m.tpu_hosts} hosts"
        elif m.tpu_topology:
            accel += f" ({m.tpu_topology})"
        if spec.target.name == "vertex":
            machine = m.machine_type
        elif spec.target.name == "ray":  # the bundle each replica reserves (docs/ray.md; --ray-cpus overrides)
            gpus = f" + {m.accelerator_count} GPU" if m.is_gpu else ""
            machine = f"Ray bundle: {m.cpu_cores} CPU{gpus} ({m.machine_type})"
        else:
            machine = f"this machine ({m.machine_type} on Vertex)"
        rows.append(PoolRow(role=pool.role.value, replicas=pool.replica_count, machine_type=machine,
                            accelerator=accel))
    return tuple(rows)


def make_plan(spec: JobSpec) -> Plan:
    """Run the pure stages (entry point, launcher) in a temporary directory and describe the rest."""
    with tempfile.TemporaryDirectory(prefix="tfcloud-plan-") as tmp:
        job, entry = prepare(spec, Path(tmp))
        launcher = job.launcher.read_text(encoding="utf-8")
    notes = list(entry.notes)
    if spec.strategy.needs_tf_keras:
        notes.append("Keras is routed to tf-keras in every replica (Keras 3 cannot fit under this strategy).")
    if spec.target.name == "vertex" and spec.chief.machine.is_tpu_vm:
        notes.append("TPU VM: the TPU host runs your program as the chief (pool 0); no CPU/GPU chief is added "
                     "(--chief-config adds one).")
    if spec.strategy is Strategy.PARAMETER_SERVER:
        notes.append("Under ParameterServerStrategy, model.fit needs steps_per_epoch.")
    if spec.target.name == "local" and spec.pool(Role.CHIEF) and spec.chief.machine.is_gpu:
        notes.append("Local run: machine configs describe Vertex AI machines; replicas use this machine's devices.")
    requirements = list(entry.requirements)
    if spec.requirements_txt is not None:
        requirements.insert(0, f"-r {spec.requirements_txt}")
    return Plan(
        spec=spec,
        strategy=spec.strategy.tf_class,
        strategy_reason=spec.strategy_reason,
        pools=_pool_rows(spec),
        launcher=launcher,
        command=("python", "tfcloud_launcher.py", *spec.entry_point_args),
        requirements=tuple(requirements),
        notes=tuple(notes),
    )

