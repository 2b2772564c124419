"""What Vertex AI custom training costs, as data: one row per (machine type or accelerator, region, row kind) with
the source it was read from and the day it was read. :mod:`tfcloud.google.catalog.prices` adds them up for a plan.

Two kinds of figure, from two kinds of source:

- **Vertex AI training prices** (kinds ``on-demand``, ``spot``, ``flex-start``): read from Google's "Vertex AI
  pricing" page, :data:`VERTEX_ROWS`. The page draws its per-region tables with a script; only the figures below
  could be read as text (2026-11-26): n1-standard-4 and n1-standard-8, T4 and H100, in us-central1, on demand.
  Every other (machine, region) has no training price, and the plan says so rather than guess or derive one.
- **Compute Engine prices** (kinds ``compute-engine`` and ``compute-engine-spot``): Google's Cloud Billing Catalog
  API as recorded, per machine type and region, by Cyclenerd/google-cloud-pricing-cost-calculator (its
  ``pricing.yml``; source ``compute-engine``) and, per GPU an N1 machine takes, by skypilot-org/skypilot-catalog
  (source ``compute-engine-gpus``), in ``tfcloud/google/catalog/price_rows.csv``, written by ``scripts/price_rows.py``
  and read lazily by :func:`price_rows` (never at import). What Compute Engine bills is what a reservation bills ("Use
  reservations with training").

How Google bills each capacity kind (the :data:`BILLING` rules, each with its Google page):

- ``on-demand``: the machine type's hourly training price plus each accelerator's, per replica (Vertex AI pricing);
- ``spot``: Spot VMs "have significant discounts"; the job is billed by its duration and machine type, not while
  queued or preempted ("Use Spot VMs with training"). The page names no rate; Vertex AI's Spot training prices are
  not in the table, so the plan says the price is unknown, gives the on-demand price only as a ceiling, and shows
  Compute Engine's Spot price of the same VMs for reference, labelled as such (Compute Engine Spot prices change
  up to once every 30 days: "Spot VMs pricing");
- ``flex-start``: the Dynamic Workload Scheduler's prices, discounted from on demand, "up to 53%" ("About flex-start
  provisioning", Flex-start pricing; "Schedule training jobs based on resource availability" names no price); none
  are in the table, so unknown, with the on-demand ceiling;
- ``reservation``: the reservation's Compute Engine price (on-demand rate, with any committed-use discount), billed
  while the reservation exists, plus Vertex AI's training management fee ("Use reservations with training"); the
  table has the Compute Engine price, not the fee's rate, and the plan says both;
- ``persistent-resource``: the job is not charged; the persistent resource is billed for as long as it runs, job or
  no job ("Persistent resource overview"), at its machines' training prices.
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass

__all__ = ["BILLING", "CAPACITIES", "PRICE_SOURCES", "ROW_KINDS", "ROW_KIND_OF", "SOURCE_COMMITS", "VERTEX_ROWS",
           "PriceRow", "PriceSource", "price_rows"]

#: The capacity kinds a job's price depends on (tfcloud's names).
CAPACITIES = ("on-demand", "spot", "flex-start", "reservation", "persistent-resource")
#: What a row prices: a Vertex AI training price (on demand, Spot, Flex Start) or a Compute Engine one.
ROW_KINDS = ("on-demand", "spot", "flex-start", "compute-engine", "compute-engine-spot")
#: Which rows price each capacity kind, as Google bills it (:data:`BILLING`).
ROW_KIND_OF = {"on-demand": "on-demand", "spot": "spot", "flex-start": "flex-start", "reservation": "compute-engine",
               "persistent-resource": "on-demand"}

#: The Cyclenerd/google-cloud-pricing-cost-calculator commit whose pricing.yml made
#: tfcloud/google/catalog/price_rows.csv's machine rows, and the skypilot-org/skypilot-catalog commit whose
#: catalogs/v8/gcp/vms.csv made its N1 GPU rows.
_CYCLENERD = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
_SKYPILOT = "006059e0f18acb1341e22a27751e9f80df6ba92f"
#: Each recorded source of price_rows.csv as (repository, commit, path): what scripts/price_rows.py records in
#: price_rows.sources.json beside the CSV.
SOURCE_COMMITS: dict[str, tuple[str, str, str]] = {
    "compute-engine": ("Cyclenerd/google-cloud-pricing-cost-calculator", _CYCLENERD, "pricing.yml"),
    "compute-engine-gpus": ("skypilot-org/skypilot-catalog", _SKYPILOT, "catalogs/v8/gcp/vms.csv"),
}


@dataclass(frozen=True, kw_only=True)
class PriceSource:
    """One source: its title, address, the day it was read, and (for recorded data) the day it was made."""

    title: str
    url: str
    read: str
    made: str | None = None

    def __str__(self) -> str:
        made = f", made {self.made}" if self.made else ""
        return f"{self.title} ({self.url}){made}, read {self.read}"

    def short(self) -> str:
        """Title and dates, without the address (a plan's sources line)."""
        made = f", made {self.made}" if self.made else ""
        return f"{self.title}{made}, read {self.read}"


PRICE_SOURCES: dict[str, PriceSource] = {
    "vertex-pricing": PriceSource(
        title="Vertex AI pricing, custom training", read="2026-10-07",
        url="https://cloud.google.com/vertex-ai/pricing (now cloud.google.com/products/gemini-enterprise-agent-"
            "platform/pricing)"),
    "vertex-pricing-2024": PriceSource(title="Vertex AI pricing, custom training (as quoted in 2024)", read="2024",
                                       url="https://cloud.google.com/vertex-ai/pricing"),
    "compute-engine": PriceSource(
        title="Cloud Billing Catalog API, Compute Engine SKUs, as recorded by "
              "Cyclenerd/google-cloud-pricing-cost-calculator (pricing.yml, commit fd66b26)",
        url=f"https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/{_CYCLENERD}/pricing.yml",
        made="2026-07-30", read="2026-11-26"),
    "compute-engine-gpus": PriceSource(
        title="Cloud Billing Catalog API, Compute Engine GPU SKUs, as recorded by skypilot-org/skypilot-catalog "
              "(catalogs/v8/gcp/vms.csv, commit 006059e, its one-GPU rows)",
        url=f"https://github.com/skypilot-org/skypilot-catalog/blob/{_SKYPILOT}/catalogs/v8/gcp/vms.csv",
        read="2026-11-26"),
    "vm-pricing": PriceSource(title="VM instance pricing", read="2026-11-26",
                              url="https://cloud.google.com/compute/vm-instance-pricing"),
    "spot-pricing": PriceSource(title="Spot VMs pricing", read="2026-11-26",
                                url="https://cloud.google.com/spot-vms/pricing"),
    "spot": PriceSource(title="Use Spot VMs with training", read="2026-11-26",
                        url="https://cloud.google.com/vertex-ai/docs/training/use-spot-vms"),
    "dws": PriceSource(title="Schedule training jobs based on resource availability (Dynamic Workload Scheduler)",
                       read="2026-11-26", url="https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws"),
    "dws-pricing": PriceSource(title="About flex-start provisioning (Flex-start pricing)", read="2026-11-26",
                               url="https://cloud.google.com/kubernetes-engine/docs/concepts/dws"),
    "reservations": PriceSource(title="Use reservations with training", read="2026-11-26",
                                url="https://cloud.google.com/vertex-ai/docs/training/use-reservations"),
    "persistent": PriceSource(title="Persistent resource overview, billing details", read="2026-11-26",
                              url="https://cloud.google.com/vertex-ai/docs/training/persistent-resource-overview"),
}

#: How Google bills each capacity kind, as a plan says it (source key, sentence).
BILLING: dict[str, tuple[str, str]] = {
    "on-demand": ("vertex-pricing", "on demand: the machine type's training price plus each accelerator's, per "
                                    "replica"),
    "spot": ("spot", "Spot VMs \"have significant discounts\" and are billed by the job's duration and machine "
                     "type, not while it is queued or preempted; the page names no rate, and Vertex AI's Spot "
                     "training prices are not in tfcloud's table"),
    "flex-start": ("dws-pricing", "Flex Start is powered by the Dynamic Workload Scheduler and billed at its "
                                  "prices, discounted from on demand (\"up to 53%\" on vCPUs, GPUs and TPUs); none "
                                  "are in tfcloud's table"),
    "reservation": ("reservations", "a job on a reservation is billed the reservation's Compute Engine price (its "
                                    "on-demand rate, with any committed-use discount; the reservation is billed "
                                    "while it exists) plus Vertex AI's training management fee"),
    "persistent-resource": ("persistent", "the job is not charged: the persistent resource is billed for as long "
                                          "as it runs, job or no job"),
}


@dataclass(frozen=True, kw_only=True)
class PriceRow:
    """One hourly price in USD: ``item`` is a machine type (per machine; its accelerators not included unless
    ``with_accelerators``) or an accelerator's ``AcceleratorType`` name (per accelerator); ``capacity`` one of
    :data:`ROW_KINDS`; ``source`` a key of :data:`PRICE_SOURCES`; ``read`` the day it was read (the source's,
    unless the row was read on another); ``note`` what else the price includes."""

    item: str
    region: str
    capacity: str
    usd_per_hour: float
    source: str
    read: str | None = None
    with_accelerators: bool = False
    note: str = ""

    @property
    def date(self) -> str:
        return self.read or PRICE_SOURCES[self.source].read


#: Vertex AI training prices read from Google's pricing page (the only ones it gave as text).
#: n1-standard-4 and -8 are the two n1-standard figures the page gave as text (read 2026-09 and 2026-10-07); the
#: larger n1-standard types have no row (no price is derived from another: the page prices each machine type on
#: its own, so their training price is unknown, never 4 vCPUs' price x vCPUs / 4).
VERTEX_ROWS: tuple[PriceRow, ...] = (
    PriceRow(item="n1-standard-4", region="us-central1", capacity="on-demand", usd_per_hour=0.21849885,
             source="vertex-pricing"),
    PriceRow(item="n1-standard-8", region="us-central1", capacity="on-demand", usd_per_hour=0.4369977,
             source="vertex-pricing"),
    PriceRow(item="NVIDIA_H100_80GB", region="us-central1", capacity="on-demand", usd_per_hour=9.79655057,
             source="vertex-pricing"),
    PriceRow(item="NVIDIA_TESLA_T4", region="us-central1", capacity="on-demand", usd_per_hour=0.4025,
             source="vertex-pricing-2024"),
)


def _read_csv(text: str) -> list[PriceRow]:
    return [PriceRow(item=r["item"], region=r["region"], capacity=r["capacity"], usd_per_hour=float(r["usd_per_hour"]),
                     source=r["source"], read=r["read"] or None, with_accelerators=r["with_accelerators"] == "yes",
                     note=r["note"])
            for r in csv.DictReader(io.StringIO(text))]


@functools.cache
def price_rows() -> tuple[PriceRow, ...]:
    """Every row: :data:`VERTEX_ROWS` and the Compute Engine rows of ``tfcloud/google/catalog/price_rows.csv`` (read
    once)."""
    from importlib.resources import files

    text = files("tfcloud.google.catalog").joinpath("price_rows.csv").read_text(encoding="utf-8")
    return (*VERTEX_ROWS, *_read_csv(text))
