"""What a Vertex AI job (or a persistent resource) costs per hour, by how Google bills its capacity: the sums a plan,
``tfcloud machines --prices`` and ``tfcloud cluster`` show, from the dated rows of
:mod:`tfcloud.google.catalog.price_table`.

A replica costs its machine type's price plus each accelerator's (unless the machine type's row includes them), in
the job's region, on the job's capacity (:data:`tfcloud.google.catalog.price_table.ROW_KIND_OF` says which rows price
which):

- ``on-demand``: the Vertex AI training list price;
- ``spot`` and ``flex-start``: their own training prices. Without such a row the price is *unknown*; the plan says so
  and shows the on-demand price only as what it is, a ceiling ("at most ..."), never as the price. On Spot it also
  shows Compute Engine's Spot price of the same VMs, labelled as Compute Engine's, never as the job's price;
- ``reservation``: the reservation's Compute Engine price, said to be Compute Engine's, plus Vertex AI's
  management fee, which the table lacks and the plan names (``any`` falls back to on demand when no reservation
  matches, and the plan says that price too);
- ``persistent-resource``: the job is not charged; ``tfcloud cluster create`` / ``list`` show what the resource
  costs per hour while it exists (:func:`cluster_price`, its machines' training prices on demand).

A price the table lacks is never guessed: the plan says "no ... price known for ITEM in REGION". Prices are list
prices in USD, without committed-use or savings-plan discounts, taxes, disks or storage.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from tfcloud.google.catalog.machines import AcceleratorType, MachineConfig
from tfcloud.google.catalog.price_table import (
    BILLING,
    CAPACITIES,
    PRICE_SOURCES,
    ROW_KIND_OF,
    VERTEX_ROWS,
    PriceRow,
    price_rows,
)

__all__ = ["PRICE_DATE", "PRICE_SOURCE", "ClusterPrice", "JobPrice", "PoolPrice", "cluster_price", "job_price",
           "machine_price", "price_regions", "price_table_line", "replica_price"]

#: The main source, and the newest day a row was read.
PRICE_SOURCE = str(PRICE_SOURCES["vertex-pricing"])
PRICE_DATE = max([*(row.date for row in VERTEX_ROWS), PRICE_SOURCES["compute-engine"].read])
_TPU_VM_FAMILIES = ("ct5lp-", "ct5p-", "ct6e-")
_LABEL = {"on-demand": "on-demand", "spot": "Spot", "flex-start": "Flex Start", "compute-engine": "Compute Engine",
          "compute-engine-spot": "Compute Engine Spot"}
_FEE = "Vertex AI's training management fee (its rate is not in tfcloud's table)"


@functools.cache
def _rows() -> dict[tuple[str, str, str], PriceRow]:
    return {(r.item, r.region, r.capacity): r for r in price_rows()}


@functools.cache
def price_regions(kind: str) -> tuple[str, ...]:
    """The regions the table has any ``kind`` row for (a row kind of
    :data:`tfcloud.google.catalog.price_table.ROW_KINDS`)."""
    return tuple(sorted({row.region for row in price_rows() if row.capacity == kind}))


def _priced(machine_type: str, accelerator: str | None, count: int, *, region: str,
            kind: str) -> tuple[float | None, str | None, tuple[str, ...]]:
    """One replica of ``machine_type`` with ``count`` x ``accelerator`` priced by ``kind`` rows: (price, None, the
    rows' sources), or (None, what is unknown, ())."""
    label = _LABEL[kind]
    machine = _rows().get((machine_type, region, kind))
    if machine is None:
        return None, f"no {label} price known for {machine_type} in {region}", ()
    total, sources = machine.usd_per_hour, [machine.source]
    if accelerator and count and not machine.with_accelerators:
        row = _rows().get((accelerator, region, kind))
        if row is None:
            return None, f"no {label} price known for {accelerator} in {region}", ()
        total += count * row.usd_per_hour
        sources.append(row.source)
    return total, None, tuple(sources)


def replica_price(machine_type: str, accelerator: str | None, count: int, *, region: str,
                  capacity: str = "on-demand") -> tuple[float | None, str | None, tuple[str, ...]]:
    """One replica of ``machine_type`` with ``count`` x ``accelerator`` (its ``AcceleratorType`` name) in ``region``,
    priced by the rows Google bills ``capacity`` at (:data:`~tfcloud.google.catalog.price_table.ROW_KIND_OF`; a TPU
    VM machine type's price includes its chips): (price per hour, None, the rows' sources), or (None, why it is
    unknown, ())."""
    tpu_vm = machine_type.startswith(_TPU_VM_FAMILIES)
    return _priced(machine_type, None if tpu_vm else accelerator, count, region=region,
                   kind=ROW_KIND_OF.get(capacity, capacity))


def _parts(machine_type: str, accelerator: str | None, count: int, *, region: str,
           kind: str) -> tuple[float | None, str | None]:
    """One replica of ``machine_type`` with ``count`` x ``accelerator`` priced by ``kind`` rows: (price, None), or
    (None, what is unknown)."""
    total, missing, _ = _priced(machine_type, accelerator, count, region=region, kind=kind)
    return total, missing


def _accelerator(machine: MachineConfig) -> tuple[str | None, int]:
    # A TPU VM machine type's price includes its chips (ct5lp-hightpu-4t: 4 x v5e); a GPU or a TPU v2/v3 is added.
    if machine.accelerator_count and not machine.is_tpu_vm and machine.accelerator_type is not \
            AcceleratorType.NO_ACCELERATOR:
        return machine.accelerator_type.name, machine.accelerator_count
    return None, 0


def machine_price(machine: MachineConfig, *, region: str = "us-central1",
                  capacity: str = "on-demand") -> tuple[float | None, str | None]:
    """One replica's hourly price on ``machine`` in ``region``: ``capacity`` a capacity kind (``on-demand``,
    ``spot``, ``flex-start``, ``reservation``: priced by the rows Google bills it at) or a row kind
    (``compute-engine``, ``compute-engine-spot``). (price, None), or (None, why it is unknown)."""
    accelerator, count = _accelerator(machine)
    return _parts(machine.machine_type, accelerator, count, region=region, kind=ROW_KIND_OF.get(capacity, capacity))


@dataclass(frozen=True, kw_only=True)
class PoolPrice:
    """One pool's hourly price for all its replicas (None: unknown, ``missing`` says why)."""

    role: str
    replicas: int
    per_hour: float | None
    missing: str | None = None
    sources: tuple[str, ...] = ()  # the keys of the rows' sources (tfcloud.google.catalog.price_table.PRICE_SOURCES)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}" if value >= 0.1 else f"${value:.4f}"


def _total(pools: Sequence[PoolPrice]) -> float | None:
    if not pools or any(p.per_hour is None for p in pools):
        return None
    return sum(p.per_hour or 0.0 for p in pools)


@dataclass(frozen=True, kw_only=True)
class JobPrice:
    """The whole job's hourly price in ``region`` on ``capacity`` (one of
    :data:`tfcloud.google.catalog.price_table.CAPACITIES`): its pools priced by the rows Google bills that capacity at,
    and on demand (``on_demand``: the ceiling of Spot
    and Flex Start, the fallback of ``reservation="any"``); on Spot, ``compute_engine_spot``: Compute Engine's Spot
    price of the same VMs, for reference. ``per_hour`` None: some part has no known price; 0.0 on a persistent
    resource (the job is not charged); on a reservation the Compute Engine price, which :attr:`excludes` the
    management fee. ``timeout_s``: the job cannot run longer, so its cost has a ceiling."""

    region: str
    capacity: str
    pools: tuple[PoolPrice, ...]
    on_demand: tuple[PoolPrice, ...] = ()
    compute_engine_spot: tuple[PoolPrice, ...] = ()
    timeout_s: int | None = None
    resource: str | None = None  # the persistent resource's ID
    reservation: str | None = None  # "any", or the reservation

    @property
    def per_hour(self) -> float | None:
        return 0.0 if self.capacity == "persistent-resource" else _total(self.pools)

    @property
    def basis(self) -> str:
        """Which rows price it: ``vertex-training`` or ``compute-engine`` (a reservation)."""
        return "compute-engine" if self.capacity == "reservation" else "vertex-training"

    @property
    def excludes(self) -> tuple[str, ...]:
        """What Google bills on top of :attr:`per_hour` that the table has no rate for."""
        return (_FEE,) if self.capacity == "reservation" else ()

    @property
    def compute_engine_spot_per_hour(self) -> float | None:
        """On Spot: what Compute Engine's Spot VMs of the same machines cost per hour (not the job's price)."""
        return _total(self.compute_engine_spot)

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
        """The most the job can cost with its timeout (from the price, else from :attr:`at_most_per_hour`); none on
        a reservation, whose management fee the table lacks."""
        if self.capacity == "reservation":
            return None
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

    def sources(self) -> tuple[str, ...]:
        """The sources of the figures shown (the rows' sources; Vertex AI pricing when none is known)."""
        fallback = self.reservation == "any" and _total(self.on_demand) is not None  # said beside the price
        shown = [*self.pools, *(self.on_demand if self.fallback or fallback else ()),
                 *(self.compute_engine_spot if self.compute_engine_spot_per_hour is not None else ())]
        keys = list(dict.fromkeys(key for pool in shown for key in pool.sources)) or [
            "compute-engine" if self.capacity == "reservation" else "vertex-pricing"]
        if self.compute_engine_spot_per_hour is not None:
            keys.append("spot-pricing")
        return tuple(PRICE_SOURCES[key].short() for key in keys)

    def lines(self, *, pools: bool = True) -> list[str]:
        """What a plan prints: one line per pool (``pools``), the job's line, the ceiling, the sources."""
        if self.capacity == "persistent-resource":
            return [f"Price: job: not charged (it runs on persistent resource {self.resource}, which is billed "
                    "for as long as it runs, job or no job; `tfcloud cluster list` shows its price per hour)",
                    f"Price: billing: {self.billing()}."]
        kind = ROW_KIND_OF[self.capacity]
        regions = price_regions(kind)
        if kind in ("on-demand", "compute-engine") and self.region not in regions:
            have = ", ".join(regions) or "none"
            out = [f"Price: no {_LABEL[kind]} price known for {self.region} (tfcloud's table has {have})."]
        else:
            out = []
            for pool in self.pools if pools else ():
                shown = _usd(pool.per_hour) + "/h" if pool.per_hour is not None else pool.missing
                out.append(f"Price: {pool.role} ({pool.replicas} replica{'s' if pool.replicas != 1 else ''}): "
                           f"{shown}")
            out.append(self._job_line())
        ceiling = self.ceiling
        if ceiling is not None:
            out.append(f"Price: at most {_usd(ceiling)} with --timeout {self.timeout_s}s"
                       + (" (from the on-demand ceiling)" if self.per_hour is None else ""))
        spot = self.compute_engine_spot_per_hour
        if spot is not None:
            out.append(f"Price: Compute Engine's Spot price for these VMs in {self.region}: {_usd(spot)}/h (Compute "
                       "Engine's, for reference, not the job's price: Google does not say Vertex AI bills it; Spot "
                       "prices change up to once every 30 days)")
        out.append(f"Price: from tfcloud's price table of {PRICE_DATE} ({'; '.join(self.sources())}); without "
                   "discounts, taxes, disks or storage.")
        if self.capacity != "on-demand":
            out.append(f"Price: billing: {self.billing()}.")
        return out

    def brief(self) -> str:
        """The job's price in one phrase (``$1.23/h (on demand; list price in europe-west4)``, or why unknown)."""
        if self.capacity == "persistent-resource":
            return f"not charged (persistent resource {self.resource})"
        return self._job_line().removeprefix("Price: job: ")

    def _job_line(self) -> str:
        per_hour, on_demand = self.per_hour, _total(self.on_demand)
        if self.capacity == "on-demand":
            if per_hour is None:
                return f"Price: job: unknown ({'; '.join(self.missing)})"
            return f"Price: job: {_usd(per_hour)}/h (on demand; list price in {self.region})"
        kind = {"spot": "Spot", "flex-start": "Flex Start (Dynamic Workload Scheduler)",
                "reservation": f"reservation {self.reservation}"}[self.capacity]
        if per_hour is not None and self.capacity == "reservation":
            said = (f"Price: job: {_usd(per_hour)}/h (reservation {self.reservation}: Compute Engine price in "
                    f"{self.region}) plus {_FEE}")
            if self.reservation == "any" and on_demand is not None:
                said += f"; {_usd(on_demand)}/h on demand if no reservation matches"
            return said
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
            accelerator, count = _accelerator(machine)
            each, why, sources = _priced(machine.machine_type, accelerator, count, region=region, kind=kind)
            out.append(PoolPrice(role=role, replicas=replicas, per_hour=None if each is None else each * replicas,
                                 missing=why, sources=sources))
        return tuple(out)

    on_demand = priced("on-demand")
    kind = ROW_KIND_OF[capacity]
    rows = on_demand if kind == "on-demand" else priced(kind)
    return JobPrice(region=region, capacity=capacity, pools=rows, on_demand=on_demand, timeout_s=timeout_s,
                    compute_engine_spot=priced("compute-engine-spot") if capacity == "spot" else (),
                    resource=persistent_resource, reservation=reservation if capacity == "reservation" else None)


@dataclass(frozen=True, kw_only=True)
class ClusterPrice:
    """What a persistent resource costs per hour while it exists (its pools' machines' training prices on demand):
    ``per_hour`` None when some part has no known price (``missing`` says which)."""

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
    each, billed for as long as it runs (``BILLING["persistent-resource"]``) at its machines' on-demand training
    prices."""
    total: float | None = 0.0
    missing: list[str] = []
    for replicas, machine_type, accelerator, count in pools:
        tpu_vm = machine_type.startswith(_TPU_VM_FAMILIES)  # its price includes its chips
        each, why = _parts(machine_type, None if tpu_vm else accelerator, count, region=region, kind="on-demand")
        if each is None:
            total = None
            missing.append(why or "")
        elif total is not None:
            total += each * replicas
    return ClusterPrice(region=region, per_hour=total, missing=tuple(dict.fromkeys(missing)))


def price_table_line(machine: MachineConfig, *, region: str = "us-central1", capacity: str = "on-demand") -> str:
    """``tfcloud machines --prices``: one replica's price per hour in ``region`` by ``capacity`` rows, or ``-``."""
    each, _ = machine_price(machine, region=region, capacity=capacity)
    return _usd(each)
