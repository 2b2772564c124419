"""What a Vertex AI job cost (``tfcloud cost``, the cost column of ``tfcloud list`` and the dashboard): its pools'
hourly prices (:func:`tfcloud.google.catalog.prices.replica_price`, from the dated rows of
:mod:`tfcloud.google.catalog.price_table`) times the time Google bills.

How the time is counted (:data:`BILLED_TIME`): a CustomJob is billed from when its replicas start running
(``CustomJob.start_time``, after the queue and the VMs' provisioning) until it ends (``end_time``; now, for a job
still running), each replica at its pool's price, on the job's capacity kind ("Vertex AI pricing", custom
training: you pay for the machines and accelerators a job uses for as long as it runs). A job that never started
cost nothing. On a persistent resource the job is not charged (the resource is, for as long as it runs:
``tfcloud cluster list``); on a reservation the table has the Compute Engine price, not Vertex AI's management
fee, so the cost is a floor ("at least"); Spot and Flex Start have no training price in the table: unknown, never a
guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tfcloud.google.catalog.price_table import BILLING, PRICE_SOURCES
from tfcloud.google.catalog.prices import PRICE_DATE, replica_price

__all__ = ["BILLED_TIME", "JobCost", "job_cost", "usd"]

#: When a Vertex AI job bills, with its source.
BILLED_TIME = ("vertex-pricing", "a job is billed from when its replicas start running until it ends (its "
                                 "start_time to its end_time; not while it is queued or its VMs are provisioned), "
                                 "each replica at its machine type's and accelerators' hourly price")


def usd(value: float) -> str:
    """``$1.23``, or ``$0.0042`` below ten cents."""
    return f"${value:,.2f}" if value >= 0.1 else f"${value:.4f}"


@dataclass(frozen=True, kw_only=True)
class JobCost:
    """What one job cost so far. ``billed``: False where Google bills nothing per job (a local or Ray job runs on
    machines you provide; a job on a persistent resource is billed as the resource). ``usd`` None: unknown
    (``missing`` says why); ``at_least``: on a reservation, what the table prices (the management fee is not in it).
    ``seconds``: the billed time; ``running``: still counting."""

    job_id: str
    billed: bool
    capacity: str | None = None
    region: str | None = None
    per_hour: float | None = None
    seconds: float = 0.0
    usd: float | None = None
    at_least: float | None = None
    running: bool = False
    missing: tuple[str, ...] = ()
    note: str = ""

    def short(self) -> str:
        """The list's cell: ``$1.23``, ``≥$1.23``, ``unknown``, or what bills instead (``not billed``,
        ``cluster``)."""
        if not self.billed:
            return "cluster" if self.capacity == "persistent-resource" else "not billed"
        if self.usd is not None:
            return usd(self.usd) + ("…" if self.running else "")
        if self.at_least is not None:
            return "≥" + usd(self.at_least)
        return "unknown"

    def lines(self) -> list[str]:
        """What ``tfcloud cost`` prints."""
        out = [f"Job: {self.job_id}"]
        if not self.billed:
            return [*out, f"Cost: {self.note}"]
        hours = self.seconds / 3600
        out.append(f"Capacity: {self.capacity} in {self.region}")
        out.append(f"Billed time: {_duration(self.seconds)}{' so far (running)' if self.running else ''}")
        if self.per_hour is not None:
            out.append(f"Price: {usd(self.per_hour)}/h for the job's replicas")
        if self.usd is not None:
            out.append(f"Cost: {usd(self.usd)}{' so far' if self.running else ''} "
                       f"({usd(self.per_hour or 0.0)}/h x {hours:.4f} h)")
        elif self.at_least is not None:
            out.append(f"Cost: at least {usd(self.at_least)} ({self.note})")
        else:
            out.append(f"Cost: unknown ({'; '.join(self.missing) or self.note})")
        out.append(f"Billing: {BILLED_TIME[1]} ({PRICE_SOURCES[BILLED_TIME[0]]})")
        if self.capacity in BILLING and self.capacity != "on-demand":
            source, sentence = BILLING[self.capacity]
            out.append(f"Billing: {sentence} ({PRICE_SOURCES[source]})")
        out.append(f"Prices: tfcloud's price table of {PRICE_DATE}; without discounts, taxes, disks or storage.")
        return out

    def to_dict(self) -> dict[str, object]:
        return {"job_id": self.job_id, "billed": self.billed, "capacity": self.capacity, "region": self.region,
                "price_per_hour_usd": self.per_hour, "billed_seconds": self.seconds, "cost_usd": self.usd,
                "at_least_usd": self.at_least, "running": self.running, "missing": list(self.missing),
                "note": self.note or None, "shown": self.short()}


def _duration(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def job_cost(job_id: str, *, region: str, capacity: str,
             pools: Sequence[tuple[int, str, str | None, int]], started: float | None, ended: float | None,
             now: float, resource: str | None = None) -> JobCost:
    """What a Vertex AI job cost from ``started`` to ``ended`` (``now`` while it runs): ``pools`` as (replicas,
    machine type, accelerator name or None, accelerators per replica), on ``capacity`` (a
    :data:`~tfcloud.google.catalog.price_table.CAPACITIES` kind) in ``region``."""
    if capacity == "persistent-resource":
        return JobCost(job_id=job_id, billed=False, capacity=capacity, region=region,
                       note=f"not charged as a job: it runs on persistent resource {resource}, which is billed "
                            "for as long as it runs, job or no job (`tfcloud cluster list` shows its $/h and idle "
                            f"time; {PRICE_SOURCES['persistent']})")
    running = started is not None and ended is None
    seconds = 0.0 if started is None else max(0.0, (ended if ended is not None else now) - started)
    total: float | None = 0.0
    missing: list[str] = []
    for replicas, machine_type, accelerator, count in pools:
        each, why, _ = replica_price(machine_type, accelerator, count, region=region, capacity=capacity)
        if each is None:
            total = None
            missing.append(why or "")
        elif total is not None:
            total += each * replicas
    missing = list(dict.fromkeys(missing))
    if started is None:  # never ran: nothing billed, whatever the price
        return JobCost(job_id=job_id, billed=True, capacity=capacity, region=region, per_hour=total, usd=0.0,
                       note="its replicas never started running")
    if total is None:
        return JobCost(job_id=job_id, billed=True, capacity=capacity, region=region, seconds=seconds,
                       running=running, missing=tuple(missing))
    amount = total * seconds / 3600
    if capacity == "reservation":
        return JobCost(job_id=job_id, billed=True, capacity=capacity, region=region, per_hour=total,
                       seconds=seconds, at_least=amount, running=running,
                       note="the reservation's Compute Engine price; Vertex AI's training management fee is not "
                            "in tfcloud's table")
    return JobCost(job_id=job_id, billed=True, capacity=capacity, region=region, per_hour=total, seconds=seconds,
                   usd=amount, running=running)
