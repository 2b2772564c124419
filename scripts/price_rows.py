"""Write tfcloud/price_rows.csv, the Compute Engine rows of tfcloud's price table, from a saved copy of the
Cloud Billing Catalog as Cyclenerd/google-cloud-pricing-cost-calculator records it (its ``pricing.yml``).

The numbers are data read from that file, never computed: each machine type of Vertex AI's training catalog
(:data:`tfcloud.vertexrules.MACHINE_TYPES`) gets, in every region tfcloud's rules table serves it in (its
accelerator's regions, or every training region for a machine without a fixed accelerator) and the file prices it
in, two rows: ``compute-engine`` (the file's ``hour``: Compute Engine's on-demand price, what a reservation bills)
and ``compute-engine-spot`` (its ``hour_spot``: Compute Engine's Spot price). An accelerator-optimized machine type
(A2, A3, A4, G2) is priced with its GPUs, and the row says so; a machine or region the file lacks gets no row.

Refresh (the file is data; it is not kept in this repository)::

    git clone https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator /tmp/cyclenerd
    git -C /tmp/cyclenerd show COMMIT:pricing.yml > /tmp/pricing.yml
    python scripts/price_rows.py /tmp/pricing.yml --commit COMMIT --read YYYY-MM-DD

then update ``PRICE_SOURCES["compute-engine"]`` in tfcloud/price_table.py (commit, its date) and run
``python docs/captures.py options``. Needs PyYAML (``pip install pyyaml``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.vertexrules.data import MachineTypeRow

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tfcloud" / "price_rows.csv"
FIELDS = ("item", "region", "capacity", "usd_per_hour", "source", "read", "with_accelerators", "note")
_BUNDLED = ("a2", "a3", "a4", "a4x", "g2")  # Compute Engine prices these machine types with their GPUs


def _regions(row: MachineTypeRow) -> frozenset[str]:
    from tfcloud.vertexrules import ACCELERATORS, TRAINING_REGIONS

    if row.family in _BUNDLED and row.accelerators:
        regions: set[str] = set()
        for name in row.accelerators:
            regions |= ACCELERATORS[name].regions
        return frozenset(regions)
    return TRAINING_REGIONS


def rows(pricing: dict[str, object], *, read: str) -> list[dict[str, str]]:
    from tfcloud.vertexrules import MACHINE_TYPES

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pricing", type=Path, help="a saved pricing.yml of Cyclenerd/google-cloud-pricing-cost-"
                                                   "calculator")
    parser.add_argument("--read", required=True, help="the day it was read, YYYY-MM-DD")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import yaml  # type: ignore[import-untyped]

    sys.path.insert(0, str(ROOT))
    with args.pricing.open(encoding="utf-8") as handle:
        pricing = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    made = rows(pricing, read=args.read)
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(made)
    generated = pricing.get("about", {}).get("generated", "?")
    print(f"{args.out}: {len(made)} rows from {args.pricing} (generated {generated})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
