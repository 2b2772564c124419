"""The cluster rules every target that runs replicas itself shares (local processes, Ray actors): which
replicas a job has (:func:`spec_roles`, chief first), their ``TF_CONFIG`` (:func:`plan_replicas`; on one
machine with free ports on 127.0.0.1: :func:`plan_cluster`), the outcome rule the supervisor applies when the
chief ends (:func:`stop_on_chief_end`), and each replica's environment: its GPUs (:func:`split_gpus`), the
``AIP_*`` output directories as Vertex AI sets them (:func:`aip_env`) and loopback kept away from proxies
(:func:`loopback_env`).

:mod:`tfcloud.replicas.supervisor` runs the replicas; it runs by path without importing tfcloud, so nothing it
needs may live here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.job.spec import Role, Strategy

if TYPE_CHECKING:
    from tfcloud.job.spec import JobSpec

__all__ = [
    "ReplicaPlan",
    "aip_env",
    "free_ports",
    "loopback_env",
    "plan_cluster",
    "plan_replicas",
    "spec_roles",
    "split_gpus",
    "stop_on_chief_end",
    "visible_gpus",
]

_ROLE_ORDER = (Role.CHIEF, Role.WORKER, Role.PS, Role.EVALUATOR)
_LOOPBACK = ("127.0.0.1", "localhost")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (all held open while choosing, so they differ)."""
    import socket

    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class ReplicaPlan:
    """One replica of a job: its name (``worker-1``), role, index and ``TF_CONFIG``."""

    def __init__(self, *, role: Role, index: int, tf_config: Mapping[str, Any]) -> None:
        self.role = role
        self.index = index
        self.tf_config = tf_config

    @property
    def name(self) -> str:
        return f"{self.role.value}-{self.index}"

    def env(self) -> dict[str, str]:
        return {"TF_CONFIG": json.dumps(self.tf_config, separators=(",", ":")), "TFCLOUD_REPLICA": self.name}


def plan_cluster(spec: JobSpec, ports: list[int] | None = None) -> list[ReplicaPlan]:
    """Every replica of ``spec`` in pool order (chief first), each with its own port on 127.0.0.1."""
    roles = spec_roles(spec)
    ports = ports if ports is not None else free_ports(len(roles))
    if len(ports) < len(roles):
        raise ValueError(f"plan_cluster needs {len(roles)} ports, got {len(ports)}")
    return plan_replicas(roles, [f"127.0.0.1:{port}" for port in ports])


def stop_on_chief_end(spec: JobSpec) -> list[str]:
    """The roles the supervisor stops when the chief ends: parameter servers, and workers under
    ParameterServerStrategy (they only serve the chief and never exit by themselves)."""
    if spec.pool(Role.PS) is not None or spec.strategy is Strategy.PARAMETER_SERVER:
        return [Role.PS.value, Role.WORKER.value]
    return [Role.PS.value]


def spec_roles(spec: JobSpec) -> list[tuple[Role, int]]:
    """Every replica of ``spec`` as (role, index), in pool order (chief first)."""
    return [(role, index) for role in _ROLE_ORDER if (pool := spec.pool(role)) is not None
            for index in range(pool.replica_count)]


def plan_replicas(roles: Sequence[tuple[Role, int]], addresses: Sequence[str]) -> list[ReplicaPlan]:
    """The ``TF_CONFIG`` of each replica in ``roles``, replica ``i`` serving at ``addresses[i]`` (host:port).

    The cluster in ``TF_CONFIG`` lists chief, workers and parameter servers; an evaluator is not part of the
    cluster (as in TensorFlow and on Vertex AI) but gets ``task: {"type": "evaluator", "index": 0}``.
    """
    if len(addresses) < len(roles):
        raise ValueError(f"plan_replicas needs {len(roles)} addresses, got {len(addresses)}")
    cluster: dict[str, list[str]] = {}
    for (role, _), address in zip(roles, addresses[:len(roles)], strict=True):
        if role is not Role.EVALUATOR:
            cluster.setdefault(role.value, []).append(address)
    return [
        ReplicaPlan(role=role, index=index,
                    tf_config={"cluster": cluster, "task": {"type": role.value, "index": index}})
        for role, index in roles
    ]


def visible_gpus(environ: Mapping[str, str], *, dev: Path = Path("/dev")) -> list[str]:
    """The GPUs replicas may use: ``CUDA_VISIBLE_DEVICES`` when set (up to a ``-1``), else one per
    ``/dev/nvidiaN`` device; none on a machine without NVIDIA GPUs. Imports nothing."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        gpus = []
        for part in environ["CUDA_VISIBLE_DEVICES"].split(","):
            part = part.strip()
            if not part or part == "-1":
                break
            gpus.append(part)
        return gpus
    try:
        found = [int(m.group(1)) for d in dev.iterdir() if (m := re.fullmatch(r"nvidia(\d+)", d.name))]
    except OSError:
        return []
    return [str(n) for n in sorted(found)]


def split_gpus(replicas: list[ReplicaPlan], gpus: list[str]) -> dict[str, dict[str, str]]:
    """Each replica's share of the machine's GPUs, as environment variables.

    Parameter servers get none (``CUDA_VISIBLE_DEVICES=""``). The others split the GPUs into equal, disjoint
    blocks in pool order (chief first); with fewer GPUs than replicas they share them round-robin, with
    ``TF_FORCE_GPU_ALLOW_GROWTH=true`` so that one process does not take a whole GPU's memory. No GPUs: {}.
    """
    if not gpus:
        return {}
    users = [r for r in replicas if r.role is not Role.PS]
    env: dict[str, dict[str, str]] = {r.name: {"CUDA_VISIBLE_DEVICES": ""} for r in replicas if r.role is Role.PS}
    if len(gpus) >= len(users):
        share = len(gpus) // max(len(users), 1)
        for i, r in enumerate(users):
            env[r.name] = {"CUDA_VISIBLE_DEVICES": ",".join(gpus[i * share:(i + 1) * share])}
    else:
        for i, r in enumerate(users):
            env[r.name] = {"CUDA_VISIBLE_DEVICES": gpus[i % len(gpus)], "TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    return env


def aip_env(base: str) -> dict[str, str]:
    """``AIP_MODEL_DIR``, ``AIP_CHECKPOINT_DIR`` and ``AIP_TENSORBOARD_LOG_DIR`` under ``base``, as Vertex AI
    sets them under a job's base output directory (with the trailing ``/``)."""
    base = base.rstrip("/")
    return {"AIP_MODEL_DIR": f"{base}/model/", "AIP_CHECKPOINT_DIR": f"{base}/checkpoints/",
            "AIP_TENSORBOARD_LOG_DIR": f"{base}/logs/"}


def _with_loopback(value: str | None) -> str:
    parts = [p.strip() for p in (value or "").split(",") if p.strip()]
    return ",".join(parts + [h for h in _LOOPBACK if h not in parts])


def loopback_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``no_proxy``, ``NO_PROXY`` and ``no_grpc_proxy`` with 127.0.0.1 and localhost added to what is there
    (a proxy in the environment makes TensorFlow's collectives hang silently)."""
    return {name: _with_loopback(environ.get(name)) for name in ("no_proxy", "NO_PROXY", "no_grpc_proxy")}
