"""The local target: one process per replica on this machine, on loopback (or, with ``container``, the job's
image on the local Docker engine). Its value (options, rules, plan rows) is :mod:`tfcloud.targets.local.value`;
its backend is :mod:`tfcloud.targets.local.backend`; its tuner runs optuna on this machine
(:mod:`tfcloud.targets.local.tuning`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfcloud.targets.local.value import MAX_LOCAL_REPLICAS, LocalOptions

__all__ = ["MAX_LOCAL_REPLICAS", "LocalTarget"]


@dataclass(frozen=True, kw_only=True)
class LocalTarget(LocalOptions):
    """The local target's value (:class:`~tfcloud.targets.local.value.LocalOptions`), bound to its backend and
    its tuner."""

    backend: ClassVar[str] = "tfcloud.targets.local.backend:LocalBackend"
    tuner: ClassVar[str | None] = "tfcloud.targets.local.tuning:LocalTuner"
