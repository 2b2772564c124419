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
    """One process per replica on this machine, on loopback. Its fields, options and rules are
    :class:`~tfcloud.targets.local.value.LocalOptions`; this class binds them to its backend, its tuner
    and the lister of its unreadable records.

    - ``use_container`` (option ``container``): each replica runs the job's image on the local Docker engine
      instead (built, not pushed).
    - ``max_restarts``: how often the supervisor restarts the whole cluster when a replica fails.
    - ``liveness_timeout``: seconds a replica may go without a heartbeat before it fails the job (0: never).
    - ``output_dir``: the base of the ``AIP_*`` directories (a directory or ``gs://``); None: the job's own
      ``output/``. See docs/recovery.md.
    """

    backend: ClassVar[str] = "tfcloud.targets.local.backend:LocalBackend"
    tuner: ClassVar[str | None] = "tfcloud.targets.local.tuning:LocalTuner"
    unreadable: ClassVar[str | None] = "tfcloud.records.statedir:unreadable_jobs"
