"""The Ray target: a job on a Ray cluster, by its dashboard's address. Its value (options, rules, plan rows) is
:mod:`tfcloud.targets.ray.value`; :mod:`tfcloud.targets.ray.backend` submits a driver through Ray's Jobs API;
:mod:`tfcloud.targets.ray.driver` runs the replicas as actors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfcloud.targets.ray.value import RayOptions, check_address, check_output_dir

__all__ = ["RayTarget", "check_address", "check_output_dir"]


@dataclass(frozen=True, kw_only=True)
class RayTarget(RayOptions):
    """A Ray cluster, by its dashboard's address (``http://HEAD:8265``). Its fields, options and rules are
    :class:`~tfcloud.targets.ray.value.RayOptions`; this class binds them to its backend. ``address`` None: the
    settings' (``TFCLOUD_RAY_ADDRESS``, then ``RAY_ADDRESS``). ``cpus``: the CPUs each replica reserves (default: its
    machine config's cores). ``liveness_timeout``: seconds a replica may go without a heartbeat before it fails
    the job (0: never).

    - ``max_restarts``: how often the driver places and starts the whole cluster again when a replica (or its
      node) fails; training resumes from ``AIP_CHECKPOINT_DIR``.
    - ``output_dir`` (option ``base_output_dir``): the base of the ``AIP_*`` directories, a path every node
      reaches (a shared filesystem) or ``gs://``; None: a directory on each node, and restarts only on a one-node
      cluster (``tfcloud docs ray#output-directory-and-restarts``).
    """

    backend: ClassVar[str] = "tfcloud.targets.ray.backend:RayBackend"
    doctor_checks: ClassVar[str | None] = "tfcloud.targets.ray.doctor:checks"
