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

Beside the CSV the script writes ``price_rows.sources.json``: each input's repository, commit, path, the day it was
read, its size and sha256, and the sha256 of the CSV it wrote. tests/test_price_rows.py checks the CSV against that
digest, and, given the two saved files (``TFCLOUD_PRICE_SOURCES=DIR`` holding ``pricing.yml`` and ``vms.csv``),
checks their digests and regenerates the CSV byte for byte (with ``pricing.yml`` alone, its machine rows). The
saved files are not kept in this repository (they are another project's data: 3.9 MB and 2.2 MB).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.google.rules.data import MachineTypeRow

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tfcloud" / "google" / "catalog" / "price_rows.csv"
#: The sidecar beside the CSV: where each input came from and the digests (see the module docstring).
SIDECAR_SUFFIX = ".sources.json"
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


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render(pricing_path: Path, gpus: Path | None, *, read: str) -> str:
    """The CSV text the script writes from the two saved files (pure: no file is written)."""
    import yaml  # type: ignore[import-untyped]

    with pricing_path.open(encoding="utf-8") as handle:
        pricing = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    made = rows(pricing, read=read) + (gpu_rows(gpus, read=read) if gpus else [])
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(made)
    return out.getvalue()


def sidecar(pricing_path: Path, gpus: Path | None, *, read: str, csv_text: str,
            gpus_sha256: str | None = None) -> dict[str, object]:
    """What ``price_rows.sources.json`` records: each input (repository, commit, path, read, bytes, sha256) and the
    CSV's sha256. ``gpus_sha256`` stands in for a vms.csv that was read but is not at hand."""
    from tfcloud.google.catalog.price_table import PRICE_SOURCES, SOURCE_COMMITS

    def entry(key: str, path: Path | None, digest: str | None) -> dict[str, object]:
        repo, commit, name = SOURCE_COMMITS[key]
        return {"source": key, "repository": f"https://github.com/{repo}", "commit": commit, "path": name,
                "url": PRICE_SOURCES[key].url, "read": read,
                "bytes": path.stat().st_size if path else None, "sha256": sha256(path) if path else digest}

    inputs = [entry("compute-engine", pricing_path, None)]
    if gpus or gpus_sha256:
        inputs.append(entry("compute-engine-gpus", gpus, gpus_sha256))
    return {"written_by": "scripts/price_rows.py", "inputs": inputs,
            "csv_sha256": hashlib.sha256(csv_text.encode("utf-8")).hexdigest()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pricing", type=Path, help="a saved pricing.yml of Cyclenerd/google-cloud-pricing-cost-"
                                                   "calculator")
    parser.add_argument("--gpus", type=Path, help="a saved catalogs/v8/gcp/vms.csv of skypilot-org/skypilot-catalog "
                                                  "(or its one-GPU rows, with its header)")
    parser.add_argument("--read", required=True, help="the day it was read, YYYY-MM-DD")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = render(args.pricing, args.gpus, read=args.read)
    args.out.write_text(text, encoding="utf-8", newline="")
    side = args.out.with_name(args.out.stem + SIDECAR_SUFFIX)
    record = sidecar(args.pricing, args.gpus, read=args.read, csv_text=text)
    side.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"{args.out}: {text.count(chr(10)) - 1} rows from {args.pricing}; sources in {side}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
