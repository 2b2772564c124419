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
    """The Ray target's value (:class:`~tfcloud.targets.ray.value.RayOptions`), bound to its backend."""

    backend: ClassVar[str] = "tfcloud.targets.ray.backend:RayBackend"
