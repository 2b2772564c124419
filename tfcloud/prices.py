"""What a Vertex AI job costs per hour at list price: a dated table and the sums a plan shows.

Vertex AI bills custom training per machine-hour (the machine type) plus per accelerator-hour (each GPU), by
region. The table holds the prices tfcloud could confirm, each with the date it was read; everything else is
*unknown*, and a plan says "no price known for ..." rather than guess. Prices are list prices in USD, without
committed-use or savings-plan discounts, taxes, disks or storage.

Spot and flex-start (Dynamic Workload Scheduler) capacity is billed below the on-demand price; where the table has
no such price, the plan says so and shows the on-demand price as the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass

from tfcloud.machines import AcceleratorType, MachineConfig

__all__ = ["PRICE_DATE", "PRICE_REGIONS", "PRICE_SOURCE", "JobPrice", "PoolPrice", "Price", "job_price",
           "machine_price", "price_table_line"]

PRICE_SOURCE = ("Vertex AI pricing, custom training (cloud.google.com/vertex-ai/pricing, now "
                "cloud.google.com/products/gemini-enterprise-agent-platform/pricing), us-central1, USD per hour")
#: When the newest prices were read; each entry has its own date.
PRICE_DATE = "2026-10-07"
PRICE_REGIONS = ("us-central1",)


@dataclass(frozen=True, kw_only=True)
class Price:
    """One hourly list price: on demand, and on Spot / flex-start capacity where known (None: not in the table)."""

    on_demand: float
    spot: float | None = None
    flex_start: float | None = None
    read: str = PRICE_DATE  # the date the page was read


# n1-standard prices are linear in vCPUs on the page (n1-standard-4 $0.21849885, n1-standard-8 $0.4369977, ...).
_N1_STANDARD_VCPU = 0.21849885 / 4
#: Machine types, us-central1 (per machine-hour, accelerators not included).
MACHINE_PRICES: dict[str, Price] = {
    f"n1-standard-{cpus}": Price(on_demand=round(_N1_STANDARD_VCPU * cpus, 8)) for cpus in (4, 8, 16, 32, 64, 96)
}
#: Accelerators, us-central1 (per accelerator-hour, on top of the machine type).
ACCELERATOR_PRICES: dict[AcceleratorType, Price] = {
    AcceleratorType.NVIDIA_TESLA_T4: Price(on_demand=0.4025, read="2024"),  # as quoted from the page in 2024
    AcceleratorType.NVIDIA_H100_80GB: Price(on_demand=9.79655057),
}

_KINDS = {"on-demand": "on_demand", "spot": "spot", "flex-start": "flex_start"}


@dataclass(frozen=True, kw_only=True)
class PoolPrice:
    """One pool's hourly price for all its replicas (None: unknown, ``missing`` says why)."""

    role: str
    replicas: int
    per_hour: float | None
    missing: str | None = None


@dataclass(frozen=True, kw_only=True)
class JobPrice:
    """The whole job's hourly price on ``capacity`` (``on-demand``, ``spot`` or ``flex-start``) in ``region``, and
    its ceiling for ``timeout_s`` (the job cannot run longer). ``per_hour`` None: some part has no known price;
    ``fallback``: the capacity's price is not in the table, the on-demand price is shown as its ceiling."""

    region: str
    capacity: str
    pools: tuple[PoolPrice, ...]
    timeout_s: int | None = None
    fallback: bool = False

    @property
    def per_hour(self) -> float | None:
        if any(pool.per_hour is None for pool in self.pools):
            return None
        return sum(pool.per_hour or 0.0 for pool in self.pools)

    @property
    def ceiling(self) -> float | None:
        per_hour = self.per_hour
        return None if per_hour is None or self.timeout_s is None else per_hour * self.timeout_s / 3600

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(pool.missing for pool in self.pools if pool.missing))

    def lines(self, *, pools: bool = True) -> list[str]:
        """What a plan prints: one line per pool (``pools``), the job's line, the ceiling, the table's source."""
        if self.region not in PRICE_REGIONS:
            return [f"Price: no price known for {self.region} (tfcloud's table has {', '.join(PRICE_REGIONS)}; "
                    f"{PRICE_SOURCE}, read {PRICE_DATE})."]
        out = []
        for pool in self.pools if pools else ():
            shown = _usd(pool.per_hour) + "/h" if pool.per_hour is not None else pool.missing
            out.append(f"Price: {pool.role} ({pool.replicas} replica{'s' if pool.replicas != 1 else ''}): {shown}")
        per_hour = self.per_hour
        what = "on demand" if self.capacity == "on-demand" else f"on {self.capacity} capacity"
        if self.fallback:
            what = (f"on demand: no {self.capacity} price in the table, {self.capacity} is billed below it, "
                    "so this is a ceiling")
        if per_hour is None:
            out.append(f"Price: job: unknown ({'; '.join(self.missing)})")
        else:
            out.append(f"Price: job: {_usd(per_hour)}/h ({what}; list price in {self.region})")
        ceiling = self.ceiling
        if ceiling is not None:
            out.append(f"Price: at most {_usd(ceiling)} with --timeout {self.timeout_s}s")
        out.append(f"Price: from tfcloud's price table of {PRICE_DATE} ({PRICE_SOURCE}); without discounts, "
                   "taxes, disks or storage.")
        return out


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:.4f}"


def machine_price(machine: MachineConfig, *, region: str = "us-central1",
                  capacity: str = "on-demand") -> tuple[float | None, str | None]:
    """One replica's hourly price on ``machine``: (price, None), or (None, why it is unknown)."""
    if region not in PRICE_REGIONS:
        return None, f"no price known for {region}"
    field = _KINDS[capacity]
    base = MACHINE_PRICES.get(machine.machine_type)
    if base is None or getattr(base, field) is None:
        return None, f"no price known for {machine.machine_type} in {region}"
    total = float(getattr(base, field))
    if machine.accelerator_count and not machine.is_tpu_vm:
        accel = ACCELERATOR_PRICES.get(machine.accelerator_type)
        if accel is None or getattr(accel, field) is None:
            return None, f"no price known for {machine.accelerator_type.name} in {region}"
        total += machine.accelerator_count * float(getattr(accel, field))
    return total, None


def job_price(pools: list[tuple[str, int, MachineConfig]], *, region: str, spot: bool = False,
              flex_start: bool = False, timeout_s: int | None = None) -> JobPrice:
    """The hourly price of ``pools`` ((role, replicas, machine) each) in ``region``: on Spot or flex-start
    capacity when asked and the table has that price, else on demand (then ``fallback`` says so)."""
    capacity = "spot" if spot else "flex-start" if flex_start else "on-demand"

    def priced(kind: str) -> tuple[PoolPrice, ...]:
        out = []
        for role, replicas, machine in pools:
            each, why = machine_price(machine, region=region, capacity=kind)
            out.append(PoolPrice(role=role, replicas=replicas, per_hour=None if each is None else each * replicas,
                                 missing=why))
        return tuple(out)

    rows = priced(capacity)
    fallback = False
    if capacity != "on-demand" and any(row.per_hour is None for row in rows):
        on_demand = priced("on-demand")
        if all(row.per_hour is not None for row in on_demand):
            rows, fallback = on_demand, True
    return JobPrice(region=region, capacity=capacity, pools=rows, timeout_s=timeout_s, fallback=fallback)


def price_table_line(machine: MachineConfig) -> str:
    """``tfcloud machines --prices``: one replica's on-demand price per hour in us-central1, or ``-``."""
    each, _ = machine_price(machine)
    return _usd(each)
