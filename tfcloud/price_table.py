"""What Vertex AI custom training costs, as data: one row per (machine type or accelerator, region, capacity) with
the Google page it was read from and the day it was read. :mod:`tfcloud.prices` adds them up for a plan.

Only figures read from Google's own pages are rows. Every other (machine, region, capacity) has no row, and the plan
says "no price known" for it rather than guess: most of Google's per-region training price tables are drawn by the
page's script and could not be read as text (2026-11-26), so the table is short. Add a row (with its source and date)
for each price read; :func:`tfcloud.prices.job_price` uses it at once.

How Google bills each capacity kind (the :data:`BILLING` rules, each with its source):

- ``on-demand``: the machine type's hourly price plus each accelerator's, per replica (Vertex AI pricing);
- ``spot``: Spot VMs are billed at Spot prices, below on demand; a Spot price is not the on-demand one ("Use Spot
  VMs");
- ``flex-start``: the Dynamic Workload Scheduler's prices ("Flex Start" / DWS pricing);
- ``reservation``: a job that consumes a Compute Engine reservation is billed the reservation's Compute Engine price
  (on-demand rate, with any committed-use discount) plus Vertex AI's management fee ("Use reservations with
  training");
- ``persistent-resource``: the job is not charged; the persistent resource is billed for the whole time it runs,
  job or no job ("Persistent resource overview"), at its machines' training prices.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BILLING", "CAPACITIES", "PRICE_ROWS", "PRICE_SOURCES", "PriceRow", "PriceSource"]

#: The capacity kinds a job's price depends on (tfcloud's names).
CAPACITIES = ("on-demand", "spot", "flex-start", "reservation", "persistent-resource")


@dataclass(frozen=True, kw_only=True)
class PriceSource:
    """One Google page: its title, address and the day it was read."""

    title: str
    url: str
    read: str

    def __str__(self) -> str:
        return f"{self.title} ({self.url}), read {self.read}"


PRICE_SOURCES: dict[str, PriceSource] = {
    "vertex-pricing": PriceSource(
        title="Vertex AI pricing, custom training", read="2026-10-07",
        url="https://cloud.google.com/vertex-ai/pricing (now cloud.google.com/products/gemini-enterprise-agent-"
            "platform/pricing)"),
    "vertex-pricing-2024": PriceSource(title="Vertex AI pricing, custom training (as quoted in 2024)", read="2024",
                                       url="https://cloud.google.com/vertex-ai/pricing"),
    "spot": PriceSource(title="Use Spot VMs with training", read="2026-11-26",
                        url="https://cloud.google.com/vertex-ai/docs/training/use-spot-vms"),
    "dws": PriceSource(title="Schedule training jobs based on resource availability (Dynamic Workload Scheduler)",
                       read="2026-11-26", url="https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws"),
    "reservations": PriceSource(title="Use reservations with training", read="2026-11-26",
                                url="https://cloud.google.com/vertex-ai/docs/training/use-reservations"),
    "persistent": PriceSource(title="Persistent resource overview, billing details", read="2026-11-26",
                              url="https://cloud.google.com/vertex-ai/docs/training/persistent-resource-overview"),
}

#: How Google bills each capacity kind, as a plan says it (source key, sentence).
BILLING: dict[str, tuple[str, str]] = {
    "on-demand": ("vertex-pricing", "on demand: the machine type's price plus each accelerator's, per replica"),
    "spot": ("spot", "Spot VMs are billed at Spot prices, below the on-demand price"),
    "flex-start": ("dws", "Flex Start (Dynamic Workload Scheduler) is billed at its own prices, below on demand"),
    "reservation": ("reservations", "a job on a reservation is billed the reservation's Compute Engine price "
                                    "(its on-demand rate, with any committed-use discount) plus Vertex AI's "
                                    "management fee"),
    "persistent-resource": ("persistent", "the job is not charged: the persistent resource is billed for as long "
                                          "as it runs, job or no job"),
}


@dataclass(frozen=True, kw_only=True)
class PriceRow:
    """One hourly price in USD: ``item`` is a machine type (per machine, accelerators not included) or an
    accelerator's ``AcceleratorType`` name (per accelerator); ``capacity`` one of :data:`CAPACITIES` (never
    ``persistent-resource``: its machines' rows price it); ``source`` a key of :data:`PRICE_SOURCES`; ``read`` the
    day it was read (the source's, unless the row was read on another)."""

    item: str
    region: str
    capacity: str
    usd_per_hour: float
    source: str
    read: str | None = None

    @property
    def date(self) -> str:
        return self.read or PRICE_SOURCES[self.source].read


def _n1_standard() -> list[PriceRow]:
    # The page lists the n1-standard prices per machine; they are linear in vCPUs (n1-standard-4 $0.21849885,
    # n1-standard-8 $0.4369977, ... read 2026-09 and 2026-10-07), so each is 4 vCPUs' price times vCPUs / 4.
    per_vcpu = 0.21849885 / 4
    return [PriceRow(item=f"n1-standard-{cpus}", region="us-central1", capacity="on-demand",
                     usd_per_hour=round(per_vcpu * cpus, 8), source="vertex-pricing")
            for cpus in (4, 8, 16, 32, 64, 96)]


PRICE_ROWS: tuple[PriceRow, ...] = (
    *_n1_standard(),
    PriceRow(item="NVIDIA_H100_80GB", region="us-central1", capacity="on-demand", usd_per_hour=9.79655057,
             source="vertex-pricing"),
    PriceRow(item="NVIDIA_TESLA_T4", region="us-central1", capacity="on-demand", usd_per_hour=0.4025,
             source="vertex-pricing-2024"),
)
