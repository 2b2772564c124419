"""How an emulated CustomJob gets its VMs: the PENDING phase between QUEUED and RUNNING.

- A job on a persistent resource (``job_spec.persistent_resource_id``) runs on the resource's VMs, which are
  already there: it starts at once, without the provisioning delay (``JobTimings.pending``).
- Any other job is provisioned for ``JobTimings.pending`` seconds, when there is capacity for its machine types.
  :meth:`~tfcloud.emulator.faults.Faults.exhaust_capacity` takes it away everywhere, and
  :meth:`~tfcloud.emulator.faults.Faults.stockout` in one region (of one machine type, or of Spot VMs only; a
  ``queued`` stockout keeps the job QUEUED instead, :func:`queued_by`):

  - a job that consumes a reservation (``reservation_affinity`` ANY_RESERVATION or SPECIFIC_RESERVATION in every
    pool) draws on the reservation's VMs and is not affected;
  - a ``FLEX_START`` job (the Dynamic Workload Scheduler) waits in PENDING until capacity returns, for at most its
    ``scheduling.max_wait_duration`` (Vertex AI's default: 24 hours; 0: as long as it takes); then it fails with
    code 8 (RESOURCE_EXHAUSTED);
  - any other job fails at once with code 8, as Vertex AI's does when a region runs out of a machine type.

The messages follow Vertex AI's ("Resources are insufficient in region: ..."); the wording after it is the
emulator's.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from typing import Any

from tfcloud.emulator._common import JobTimings
from tfcloud.emulator.faults import Faults, Stockout

__all__ = ["DEFAULT_MAX_WAIT_S", "Outcome", "provision", "queued_by"]

#: ``scheduling.max_wait_duration`` when a FLEX_START job gives none.
DEFAULT_MAX_WAIT_S = 24 * 3600
_POLL_S = 0.05
RESOURCE_EXHAUSTED = 8


class Outcome(enum.Enum):
    READY = "ready"  # the VMs are there: start the replicas
    CANCELLED = "cancelled"  # the job was cancelled (or the emulator is stopping) while it waited


def _needs(spec: Any) -> tuple[set[str], bool, bool]:
    """A CustomJobSpec's machine types, whether it runs on Spot VMs, and whether every pool draws on a reservation
    (or the job on a persistent resource): such VMs are held for the project, and no stockout takes them."""
    pools = [pool for pool in spec.worker_pool_specs if pool.replica_count]
    machine_types = {pool.machine_spec.machine_type for pool in pools}
    reserved = bool(spec.persistent_resource_id) or (bool(pools) and all(
        pool.machine_spec.reservation_affinity.reservation_affinity_type.name in ("ANY_RESERVATION",
                                                                                  "SPECIFIC_RESERVATION")
        for pool in pools))
    spot = "scheduling" in spec and spec.scheduling.strategy.name == "SPOT"
    return machine_types, spot, reserved


def queued_by(spec: Any, *, location: str, faults: Faults) -> Stockout | None:
    """The ``queued`` stockout that keeps a job of ``spec`` in ``location`` QUEUED now; None: it may go on."""
    machine_types, spot, reserved = _needs(spec)
    found = None if reserved else faults.stockout_for(location, machine_types, spot=spot)
    return found if found is not None and found.queued else None


def provision(spec: Any, *, location: str, faults: Faults, timings: JobTimings,
              wait: Callable[[float], bool], log: Callable[..., None]) -> Outcome | tuple[int, str]:
    """Get the VMs of a CustomJobSpec ``spec`` in ``location``. ``wait(seconds)`` sleeps and says whether the job
    goes on; ``log(text, severity="INFO")`` writes the service's log line. Returns :class:`Outcome` or the
    (code, message) the job fails with."""
    if spec.persistent_resource_id:
        log(f"Job is scheduled on persistent resource {spec.persistent_resource_id}; its VMs are already "
            "provisioned.")
        return Outcome.READY
    machine_types, spot, reserved = _needs(spec)
    strategy = spec.scheduling.strategy.name if "scheduling" in spec else "STRATEGY_UNSPECIFIED"
    insufficient = f"Resources are insufficient in region: {location}."

    def available() -> bool:
        return faults.capacity_for(machine_types) and faults.stockout_for(location, machine_types, spot=spot) is None

    if not reserved and not available():
        if strategy != "FLEX_START":
            return RESOURCE_EXHAUSTED, f"{insufficient} Please try a different region."
        limit = (spec.scheduling.max_wait_duration.total_seconds() if "max_wait_duration" in spec.scheduling
                 else DEFAULT_MAX_WAIT_S)
        log(f"Waiting for resources (FLEX_START, Dynamic Workload Scheduler): at most {limit:g}s."
            if limit else "Waiting for resources (FLEX_START, Dynamic Workload Scheduler), with no time limit.")
        started = time.monotonic()
        while not available():
            if limit and time.monotonic() - started >= limit:
                return RESOURCE_EXHAUSTED, (f"{insufficient} The job could not get its resources within its "
                                            f"max_wait_duration of {limit:g}s (FLEX_START).")
            if not wait(_POLL_S):
                return Outcome.CANCELLED
    log("Waiting for job to be provisioned.")
    return Outcome.READY if wait(timings.pending) else Outcome.CANCELLED
