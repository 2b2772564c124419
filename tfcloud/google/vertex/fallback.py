"""Capacity fallback (``--fallback KEY=VALUE[,KEY=VALUE]``, repeatable; ``run(fallback=[{...}, ...])``): each
alternative is the whole job again with a few fields replaced (``region``, ``chief_config``/``worker_config``,
``spot``, ``reservation``), tried in order when the one before finds no capacity as Vertex AI reports it.

What counts as no capacity, as Google documents it:

- the job fails with RESOURCE_EXHAUSTED (``google.rpc.Code`` 8) and "Resources are insufficient in region" (a
  stockout; a FLEX_START job whose ``max_wait_duration`` ran out fails the same way);
- the job stays in ``JOB_STATE_QUEUED`` or ``JOB_STATE_PENDING`` longer than ``--fallback-after`` ("Understanding
  the training service": "if your Google Cloud project does not have sufficient remaining custom training quotas
  for your job, then Vertex AI keeps the job queued until you have sufficient quotas").

Every alternative passes the same checks as the job at plan time (its pools, Google's rules for its region and
machines), so a dry run that exits 0 means none of them will be refused for its inputs. All run the same image
(or package): Vertex AI pulls a custom container from any Artifact Registry repository it can read ("Custom
containers overview": "push it to Artifact Registry or Docker Hub, making sure that Vertex AI can access your
registry"), so no alternative rebuilds; a job on a persistent resource (which lives in one region) takes no
fallback. An abandoned attempt is cancelled before the next is created, so at most one attempt is alive.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tfcloud.google.vertex.options import FALLBACK_KEYS

if TYPE_CHECKING:
    from tfcloud.backends.base import JobInfo

__all__ = ["STOCKOUT", "capacity_hint", "is_capacity_failure", "submit_with_fallback"]

#: How Vertex AI says a region has no VMs of the job's kind (the emulator's tfcloud/emulator/capacity.py says it
#: the same way); with ``error.code`` 8, RESOURCE_EXHAUSTED.
STOCKOUT = "Resources are insufficient in region"
def is_capacity_failure(info: JobInfo) -> bool:
    """Whether a finished job failed for want of VMs, as Vertex AI reports it (a stockout, or a FLEX_START wait
    that ran out)."""
    from tfcloud.job.states import JobState

    return info.state is JobState.FAILED and STOCKOUT in (info.message or "")


def capacity_hint(message: str) -> str | None:
    """What to do about a job whose error ``message`` says it failed for capacity (None: it does not)."""
    if STOCKOUT not in message:
        return None
    return ("The region had no VMs for the job (capacity, not your code). Try another region, machine or Spot, or "
            "let tfcloud try them in turn: --fallback region=europe-west4 (repeatable; KEY=VALUE among "
            + ", ".join(FALLBACK_KEYS) + ").")


def submit_with_fallback(backend: Any, job: Any, alternatives: Sequence[Any], submit_one: Any) -> Any:
    """Submit ``job`` (a PreparedJob, its image built) with ``backend`` (a VertexBackend whose target has
    ``fallback``), then each alternative in turn while the attempt before finds no capacity: it failed with a
    stockout, or (``fallback_after``) it stayed QUEUED or PENDING that long, and is then cancelled before the
    next is created. Returns the handle of the attempt that got its VMs (RUNNING, or already ended), or of the
    last attempt. ``submit_one(backend, job)`` creates one CustomJob. Each attempt carries the labels
    ``tfcloud-attempt`` (1, 2, ...) and, after the first, ``tfcloud-fallback-of`` (the first attempt's id), so
    ``status`` and ``list`` show which attempt a job was. ``alternatives``: the target's, checked
    (:meth:`~tfcloud.google.vertex.value.VertexOptions.alternatives`)."""
    import dataclasses
    import logging
    from types import MappingProxyType

    log = logging.getLogger("tfcloud")
    target = backend.target
    plan = [(None, backend, job.spec), *((alt, None, alt.spec) for alt in alternatives)]
    first: str | None = None
    handle = None
    for index, (alt, attempt_backend, spec) in enumerate(plan):
        if attempt_backend is None:
            assert alt is not None
            attempt_backend = type(backend)(settings=backend.settings, target=alt.target, retry=backend.retry,
                                            poll_interval=backend.poll_interval)
        labels = {**spec.job_labels, "tfcloud-attempt": str(index + 1),
                  **({"tfcloud-fallback-of": first} if first else {})}
        attempt = dataclasses.replace(job, spec=dataclasses.replace(spec, job_labels=MappingProxyType(labels)))
        handle = submit_one(attempt_backend, attempt)
        first = first or handle.job_id
        where = attempt_backend.target.location
        if index:
            log.warning("Fallback %d: submitted job %s in %s.", index, handle.job_id, where)
        outcome, info = _await_capacity(handle, after=target.fallback_after_s,
                                        poll=attempt_backend.poll_interval)
        if outcome != "none" or index == len(plan) - 1:
            if index and outcome == "ok":
                log.warning("Fallback %d (%s) got its VMs: job %s runs in %s.", index,
                            alt.describe() if alt is not None else "", handle.job_id, where)
            return handle
        why = ("stayed " + info.state.value + f" over {target.fallback_after_s}s" if not info.state.is_final
               else "found no capacity: " + (info.message or "").split(". ")[0])
        log.warning("Job %s in %s %s; trying fallback %d (%s).", handle.job_id, where, why, index + 1,
                    plan[index + 1][0].describe())
        if not info.state.is_final:
            handle.cancel()
            handle.wait(timeout=120)  # cancelled before the next is created: at most one attempt is alive
        if attempt_backend is not backend:
            attempt_backend.close()
    return handle


def _await_capacity(handle: Any, *, after: int | None, poll: float) -> tuple[str, Any]:
    """Follow an attempt until it has its VMs (``ok``: RUNNING, or ended otherwise than for capacity) or has
    none (``none``: a stockout, or QUEUED/PENDING over ``after`` seconds)."""
    import time

    from tfcloud.job.states import JobState

    started = time.monotonic()
    while True:
        info = handle.info()
        if is_capacity_failure(info):
            return "none", info
        if info.state is JobState.RUNNING or info.state.is_final:
            return "ok", info
        if after is not None and time.monotonic() - started > after:
            return "none", info
        time.sleep(poll)
