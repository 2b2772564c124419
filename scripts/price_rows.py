"""Write tfcloud/google/catalog/price_rows.csv, the Compute Engine rows of tfcloud's price table, from saved copies of
the Cloud Billing Catalog as two public repositories record it: Cyclenerd/google-cloud-pricing-cost-calculator (its
``pricing.yml``: machine types) and skypilot-org/skypilot-catalog (its ``catalogs/v8/gcp/vms.csv``: the GPUs
attached to N1 machines, which pricing.yml lacks).

The numbers are data read from that file, never computed: each machine type of Vertex AI's training catalog
(:data:`tfcloud.google.rules.MACHINE_TYPES`) gets, in every region tfcloud's rules table serves it in (its
accelerator's regions, or every training region for a machine without a fixed accelerator) and the file prices it
in, two rows: ``compute-engine`` (the file's ``hour``: Compute Engine's on-demand price, what a reservation bills)
and ``compute-engine-spot`` (its ``hour_spot``: Compute Engine's Spot price). An accelerator-optimized machine type
(A2, A3, A4, G2) is priced with its GPUs, and the row says so; a machine or region the file lacks gets no row.

Each GPU an N1 machine takes (T4, V100, P4, P100) gets the same two rows per GPU from vms.csv's one-GPU rows
(``Price`` and ``SpotPrice``), in each region Vertex AI serves it in where every zone vms.csv lists agrees on both
(a region whose zones differ gets no row, rather than a choice).

Refresh (the file is data; it is not kept in this repository)::

    git clone https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator /tmp/cyclenerd
    git -C /tmp/cyclenerd show COMMIT:pricing.yml > /tmp/pricing.yml
    git clone https://github.com/skypilot-org/skypilot-catalog /tmp/skypilot
    python scripts/price_rows.py /tmp/pricing.yml --gpus /tmp/skypilot/catalogs/v8/gcp/vms.csv --read YYYY-MM-DD

then update ``PRICE_SOURCES["compute-engine"]`` and ``["compute-engine-gpus"]`` in
tfcloud/google/catalog/price_table.py (commits, their dates) and run ``python docs/captures.py options``. Needs PyYAML
(``pip install pyyaml``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.google.rules.data import MachineTypeRow

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tfcloud" / "google" / "catalog" / "price_rows.csv"
FIELDS = ("item", "region", "capacity", "usd_per_hour", "source", "read", "with_accelerators", "note")
_BUNDLED = ("a2", "a3", "a4", "a4x", "g2")  # Compute Engine prices these machine types with their GPUs
#: vms.csv's names of the GPUs an N1 machine takes → their AcceleratorType names.
_N1_GPUS = {"T4": "NVIDIA_TESLA_T4", "V100": "NVIDIA_TESLA_V100", "P4": "NVIDIA_TESLA_P4", "P100": "NVIDIA_TESLA_P100"}


def _regions(row: MachineTypeRow) -> frozenset[str]:
    from tfcloud.google.rules import ACCELERATORS, TRAINING_REGIONS

    if row.family in _BUNDLED and row.accelerators:
        regions: set[str] = set()
        for name in row.accelerators:
            regions |= ACCELERATORS[name].regions
        return frozenset(regions)
    return TRAINING_REGIONS


def rows(pricing: dict[str, object], *, read: str) -> list[dict[str, str]]:
    from tfcloud.google.rules import MACHINE_TYPES

    instances = pricing["compute"]["instance"]  # type: ignore[index]
    out = []
    for name, row in sorted(MACHINE_TYPES.items()):
        entry = instances.get(name)
        if entry is None:
            continue
        bundled = row.family in _BUNDLED and bool(row.accelerators)
        ssd = entry.get("local-ssd")
        note = f"includes its {ssd} GB Local SSD" if ssd else ""
        for region in sorted(_regions(row) & set(entry["cost"])):
            cost = entry["cost"][region]
            for capacity, key in (("compute-engine", "hour"), ("compute-engine-spot", "hour_spot")):
                price = cost.get(key)
                if price is None or float(price) <= 0:
                    continue
                out.append({"item": name, "region": region, "capacity": capacity, "usd_per_hour": repr(float(price)),
                            "source": "compute-engine", "read": read, "with_accelerators": "yes" if bundled else "",
                            "note": note})
    return out


def gpu_rows(vms: Path, *, read: str) -> list[dict[str, str]]:
    """One row per (N1 GPU, region, kind) from vms.csv's one-GPU rows, where the region's zones agree."""
    from tfcloud.google.rules import ACCELERATORS

    seen: dict[tuple[str, str], set[tuple[str, str]]] = {}
    with vms.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            name = _N1_GPUS.get(row["AcceleratorName"])
            if row["InstanceType"] or name is None or row["AcceleratorCount"] not in ("1", "1.0"):
                continue
            seen.setdefault((name, row["Region"]), set()).add((row["Price"], row["SpotPrice"]))
    out = []
    for (name, region), prices in sorted(seen.items()):
        if region not in ACCELERATORS[name].regions or len(prices) != 1:
            continue
        ((price, spot),) = prices
        for capacity, value in (("compute-engine", price), ("compute-engine-spot", spot)):
            if value and float(value) > 0:
                out.append({"item": name, "region": region, "capacity": capacity, "usd_per_hour": repr(float(value)),
                            "source": "compute-engine-gpus", "read": read, "with_accelerators": "", "note": ""})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pricing", type=Path, help="a saved pricing.yml of Cyclenerd/google-cloud-pricing-cost-"
                                                   "calculator")
    parser.add_argument("--gpus", type=Path, help="a saved catalogs/v8/gcp/vms.csv of skypilot-org/skypilot-catalog "
                                                  "(or its one-GPU rows, with its header)")
    parser.add_argument("--read", required=True, help="the day it was read, YYYY-MM-DD")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import yaml  # type: ignore[import-untyped]

    sys.path.insert(0, str(ROOT))
    with args.pricing.open(encoding="utf-8") as handle:
        pricing = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    made = rows(pricing, read=args.read) + (gpu_rows(args.gpus, read=args.read) if args.gpus else [])
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(made)
    generated = pricing.get("about", {}).get("generated", "?")
    print(f"{args.out}: {len(made)} rows from {args.pricing} (generated {generated})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
