"""What a Vertex AI job (or a persistent resource) costs per hour, by how Google bills its capacity: the sums a plan,
``tfcloud machines --prices`` and ``tfcloud cluster`` show, from the dated rows of :mod:`tfcloud.price_table`.

A replica costs its machine type's price plus each accelerator's, in the job's region, on the job's capacity:

- ``on-demand``: the list price;
- ``spot`` and ``flex-start``: their own prices. Without such a row the price is *unknown*; the plan says so and
  shows the on-demand price only as what it is, a ceiling ("at most ..."), never as the price;
- ``reservation``: the reservation's Compute Engine price plus Vertex AI's management fee: unknown unless the table
  has it (``any`` falls back to on demand when no reservation matches, and the plan says that price too);
- ``persistent-resource``: the job is not charged; ``tfcloud cluster create`` / ``list`` show what the resource
  costs per hour while it exists (:func:`cluster_price`, its machines on demand).

A price the table lacks is never guessed: the plan says "no ... price known for ITEM in REGION". Prices are list
prices in USD, without committed-use or savings-plan discounts, taxes, disks or storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tfcloud.machines import AcceleratorType, MachineConfig
from tfcloud.price_table import BILLING, CAPACITIES, PRICE_ROWS, PRICE_SOURCES, PriceRow

__all__ = ["PRICE_DATE", "PRICE_REGIONS", "PRICE_SOURCE", "ClusterPrice", "JobPrice", "PoolPrice", "cluster_price",
           "job_price", "machine_price", "price_table_line"]

_ROWS: dict[tuple[str, str, str], PriceRow] = {(r.item, r.region, r.capacity): r for r in PRICE_ROWS}
#: The main source, and the newest day a row was read.
PRICE_SOURCE = str(PRICE_SOURCES["vertex-pricing"])
PRICE_DATE = max(row.date for row in PRICE_ROWS)
#: The regions the table has any price for.
PRICE_REGIONS = tuple(sorted({row.region for row in PRICE_ROWS}))
_TPU_VM_FAMILIES = ("ct5lp-", "ct5p-", "ct6e-")
_LABEL = {"on-demand": "on-demand", "spot": "Spot", "flex-start": "Flex Start", "reservation": "reservation"}


def _parts(machine_type: str, accelerator: str | None, count: int, *, region: str,
           capacity: str) -> tuple[float | None, str | None]:
    """One replica of ``machine_type`` with ``count`` x ``accelerator`` on ``capacity``: (price, None), or (None,
    what is unknown)."""
    label = _LABEL[capacity]
    machine = _ROWS.get((machine_type, region, capacity))
    if machine is None:
        return None, f"no {label} price known for {machine_type} in {region}"
    total = machine.usd_per_hour
    if accelerator and count:
        row = _ROWS.get((accelerator, region, capacity))
        if row is None:
            return None, f"no {label} price known for {accelerator} in {region}"
        total += count * row.usd_per_hour
    return total, None


def _accelerator(machine: MachineConfig) -> tuple[str | None, int]:
    # A TPU VM machine type's price includes its chips (ct5lp-hightpu-4t: 4 x v5e); a GPU or a TPU v2/v3 is added.
    if machine.accelerator_count and not machine.is_tpu_vm and machine.accelerator_type is not \
            AcceleratorType.NO_ACCELERATOR:
        return machine.accelerator_type.name, machine.accelerator_count
    return None, 0


def machine_price(machine: MachineConfig, *, region: str = "us-central1",
                  capacity: str = "on-demand") -> tuple[float | None, str | None]:
    """One replica's hourly price on ``machine`` in ``region`` on ``capacity`` (``on-demand``, ``spot``,
    ``flex-start``, ``reservation``): (price, None), or (None, why it is unknown)."""
    accelerator, count = _accelerator(machine)
    return _parts(machine.machine_type, accelerator, count, region=region, capacity=capacity)


@dataclass(frozen=True, kw_only=True)
class PoolPrice:
    """One pool's hourly price for all its replicas (None: unknown, ``missing`` says why)."""

    role: str
    replicas: int
    per_hour: float | None
    missing: str | None = None


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:.4f}"


def _total(pools: Sequence[PoolPrice]) -> float | None:
    return None if any(p.per_hour is None for p in pools) else sum(p.per_hour or 0.0 for p in pools)


@dataclass(frozen=True, kw_only=True)
class JobPrice:
    """The whole job's hourly price in ``region`` on ``capacity`` (one of :data:`tfcloud.price_table.CAPACITIES`):
    its pools on that capacity, and on demand (``on_demand``: the ceiling of Spot and Flex Start, the fallback of
    ``reservation="any"``). ``per_hour`` None: some part has no known price; 0.0 on a persistent resource (the job
    is not charged). ``timeout_s``: the job cannot run longer, so its cost has a ceiling."""

    region: str
    capacity: str
    pools: tuple[PoolPrice, ...]
    on_demand: tuple[PoolPrice, ...] = ()
    timeout_s: int | None = None
    resource: str | None = None  # the persistent resource's ID
    reservation: str | None = None  # "any", or the reservation

    @property
    def per_hour(self) -> float | None:
        return 0.0 if self.capacity == "persistent-resource" else _total(self.pools)

    @property
    def at_most_per_hour(self) -> float | None:
        """A ceiling, not the price: Spot and Flex Start are billed below the on-demand price, which is shown as
        their ceiling when their own price is unknown."""
        if self.per_hour is not None or self.capacity not in ("spot", "flex-start"):
            return None
        return _total(self.on_demand)

    @property
    def fallback(self) -> bool:
        """The on-demand price stands in, as a ceiling only (:attr:`at_most_per_hour`)."""
        return self.at_most_per_hour is not None

    @property
    def ceiling(self) -> float | None:
        """The most the job can cost with its timeout (from the price, else from :attr:`at_most_per_hour`)."""
        per_hour = self.per_hour if self.per_hour is not None else self.at_most_per_hour
        return None if per_hour is None or self.timeout_s is None else per_hour * self.timeout_s / 3600

    @property
    def missing(self) -> tuple[str, ...]:
        if self.capacity == "persistent-resource":
            return ()
        return tuple(dict.fromkeys(pool.missing for pool in self.pools if pool.missing))

    def billing(self) -> str:
        """How Google bills this capacity, with its source."""
        source, sentence = BILLING[self.capacity]
        return f"{sentence} ({PRICE_SOURCES[source]})"

    def lines(self, *, pools: bool = True) -> list[str]:
        """What a plan prints: one line per pool (``pools``), the job's line, the ceiling, the sources."""
        if self.capacity == "persistent-resource":
            return [f"Price: job: not charged (it runs on persistent resource {self.resource}, which is billed "
                    "for as long as it runs, job or no job; `tfcloud cluster list` shows its price per hour)",
                    f"Price: billing: {self.billing()}."]
        if self.region not in PRICE_REGIONS:
            return [f"Price: no price known for {self.region} (tfcloud's table has {', '.join(PRICE_REGIONS)}; "
                    f"{PRICE_SOURCE}).", f"Price: billing: {self.billing()}."]
        out = []
        for pool in self.pools if pools else ():
            shown = _usd(pool.per_hour) + "/h" if pool.per_hour is not None else pool.missing
            out.append(f"Price: {pool.role} ({pool.replicas} replica{'s' if pool.replicas != 1 else ''}): {shown}")
        out.append(self._job_line())
        ceiling = self.ceiling
        if ceiling is not None:
            out.append(f"Price: at most {_usd(ceiling)} with --timeout {self.timeout_s}s"
                       + (" (from the on-demand ceiling)" if self.per_hour is None else ""))
        out.append(f"Price: from tfcloud's price table of {PRICE_DATE} ({PRICE_SOURCE}); without discounts, "
                   "taxes, disks or storage.")
        if self.capacity != "on-demand":
            out.append(f"Price: billing: {self.billing()}.")
        return out

    def _job_line(self) -> str:
        per_hour, on_demand = self.per_hour, _total(self.on_demand)
        if self.capacity == "on-demand":
            if per_hour is None:
                return f"Price: job: unknown ({'; '.join(self.missing)})"
            return f"Price: job: {_usd(per_hour)}/h (on demand; list price in {self.region})"
        kind = {"spot": "Spot", "flex-start": "Flex Start (Dynamic Workload Scheduler)",
                "reservation": f"reservation {self.reservation}"}[self.capacity]
        if per_hour is not None:
            return f"Price: job: {_usd(per_hour)}/h ({kind} price in {self.region})"
        said = f"Price: job: unknown on {kind} ({'; '.join(self.missing)})"
        if self.capacity in ("spot", "flex-start") and on_demand is not None:
            return (f"{said}; at most {_usd(on_demand)}/h, the on-demand list price in {self.region} "
                    "(a ceiling, not the price: it is billed below)")
        if self.capacity == "reservation" and self.reservation == "any" and on_demand is not None:
            return f"{said}; {_usd(on_demand)}/h on demand if no reservation matches"
        return said


def job_price(pools: Sequence[tuple[str, int, MachineConfig]], *, region: str, capacity: str = "on-demand",
              spot: bool = False, flex_start: bool = False, timeout_s: int | None = None,
              persistent_resource: str | None = None, reservation: str | None = None) -> JobPrice:
    """The hourly price of ``pools`` ((role, replicas, machine) each) in ``region`` on ``capacity`` (``spot``,
    ``flex_start``, ``persistent_resource`` and ``reservation`` other than ``none`` set it too, in the reverse
    order)."""
    if persistent_resource:
        capacity = "persistent-resource"
    elif reservation and reservation != "none":
        capacity = "reservation"
    elif flex_start:
        capacity = "flex-start"
    elif spot:
        capacity = "spot"
    if capacity not in CAPACITIES:
        raise ValueError(f"capacity must be one of {', '.join(CAPACITIES)}, not {capacity!r}")

    def priced(kind: str) -> tuple[PoolPrice, ...]:
        out = []
        for role, replicas, machine in pools:
            each, why = machine_price(machine, region=region, capacity=kind)
            out.append(PoolPrice(role=role, replicas=replicas, per_hour=None if each is None else each * replicas,
                                 missing=why))
        return tuple(out)

    on_demand = priced("on-demand")
    rows = on_demand if capacity in ("on-demand", "persistent-resource") else priced(capacity)
    return JobPrice(region=region, capacity=capacity, pools=rows, on_demand=on_demand, timeout_s=timeout_s,
                    resource=persistent_resource, reservation=reservation if capacity == "reservation" else None)


@dataclass(frozen=True, kw_only=True)
class ClusterPrice:
    """What a persistent resource costs per hour while it exists (its pools' machines on demand): ``per_hour``
    None when some part has no known price (``missing`` says which)."""

    region: str
    per_hour: float | None
    missing: tuple[str, ...] = ()

    def line(self) -> str:
        """``$12.34/h while it exists``, or what is unknown."""
        if self.per_hour is not None:
            return f"{_usd(self.per_hour)}/h while it exists (on demand, {self.region})"
        return f"price unknown ({'; '.join(self.missing)})"


def cluster_price(pools: Sequence[tuple[int, str, str | None, int]], *, region: str) -> ClusterPrice:
    """A persistent resource's hourly price: ``pools`` as (replicas, machine type, accelerator name or None, count)
    each, billed for as long as it runs (``BILLING["persistent-resource"]``) at its machines' on-demand prices."""
    total: float | None = 0.0
    missing: list[str] = []
    for replicas, machine_type, accelerator, count in pools:
        tpu_vm = machine_type.startswith(_TPU_VM_FAMILIES)  # its price includes its chips
        each, why = _parts(machine_type, None if tpu_vm else accelerator, count, region=region,
                           capacity="on-demand")
        if each is None:
            total = None
            missing.append(why or "")
        elif total is not None:
            total += each * replicas
    return ClusterPrice(region=region, per_hour=total, missing=tuple(dict.fromkeys(missing)))


def price_table_line(machine: MachineConfig, *, region: str = "us-central1") -> str:
    """``tfcloud machines --prices``: one replica's on-demand price per hour in ``region``, or ``-``."""
    each, _ = machine_price(machine, region=region)
    return _usd(each)
