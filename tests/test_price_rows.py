"""tfcloud/google/catalog/price_rows.csv is exactly what scripts/price_rows.py writes from its pinned sources: the
sidecar price_rows.sources.json names each source (repository, commit, path, the day read, sha256) and the CSV's
digest; given the saved sources (TFCLOUD_PRICE_SOURCES=DIR with pricing.yml and vms.csv) the CSV is regenerated and
compared byte for byte. No network."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from tfcloud.google.catalog.price_table import PRICE_SOURCES, SOURCE_COMMITS, price_rows

ROOT = Path(__file__).resolve().parent.parent
CSV = ROOT / "tfcloud" / "google" / "catalog" / "price_rows.csv"
SIDECAR = CSV.with_name("price_rows.sources.json")
#: Read at collection: the autouse fixture clears TFCLOUD_* variables before each test.
SAVED_SOURCES = os.environ.get("TFCLOUD_PRICE_SOURCES")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("price_rows_script", ROOT / "scripts" / "price_rows.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record() -> dict[str, object]:
    record: dict[str, object] = json.loads(SIDECAR.read_text(encoding="utf-8"))
    return record


def test_the_csv_is_the_one_the_script_recorded() -> None:
    # A row edited, added or removed by hand changes the digest the script wrote beside the CSV.
    assert hashlib.sha256(CSV.read_bytes()).hexdigest() == _record()["csv_sha256"]


def test_the_sidecar_names_the_pinned_sources_the_price_table_cites() -> None:
    inputs = _record()["inputs"]
    assert isinstance(inputs, list) and [i["source"] for i in inputs] == ["compute-engine", "compute-engine-gpus"]
    for entry in inputs:
        repo, commit, path = SOURCE_COMMITS[entry["source"]]
        source = PRICE_SOURCES[entry["source"]]
        assert (entry["repository"], entry["commit"], entry["path"]) == (f"https://github.com/{repo}", commit, path)
        assert entry["url"] == source.url and f"/blob/{commit}/{path}" in source.url
        assert entry["read"] == source.read
    pricing = inputs[0]
    assert len(str(pricing["sha256"])) == 64 and pricing["bytes"] == 3931096
    # Every row carries the day its source was read, as the sidecar records it.
    read = {e["source"]: e["read"] for e in inputs}
    for row in price_rows():
        if row.source in read:
            assert row.read == read[row.source], row


def test_the_script_renders_a_saved_pricing_file_deterministically(tmp_path: Path) -> None:
    # The script's own path on a two-machine pricing.yml: rows sorted, Spot beside on demand, nothing derived.
    script = _script()
    saved = tmp_path / "pricing.yml"
    saved.write_text("compute:\n  instance:\n    n1-standard-4:\n      cost:\n        us-central1: {hour: 0.19, "
                     "hour_spot: 0.04}\n    not-a-training-type:\n      cost:\n        us-central1: {hour: 1.0}\n",
                     encoding="utf-8")
    text = script.render(saved, None, read="2026-11-26")
    assert text == ("item,region,capacity,usd_per_hour,source,read,with_accelerators,note\n"
                    "n1-standard-4,us-central1,compute-engine,0.19,compute-engine,2026-11-26,,\n"
                    "n1-standard-4,us-central1,compute-engine-spot,0.04,compute-engine,2026-11-26,,\n")
    record = script.sidecar(saved, None, read="2026-11-26", csv_text=text)
    assert record["csv_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert record["inputs"][0]["sha256"] == hashlib.sha256(saved.read_bytes()).hexdigest()


def test_the_csv_regenerates_byte_for_byte_from_the_saved_sources() -> None:
    where = SAVED_SOURCES
    if not where:
        pytest.skip("set TFCLOUD_PRICE_SOURCES=DIR holding the pinned pricing.yml (and vms.csv) (the commands are in "
                    "scripts/price_rows.py's docstring) to regenerate price_rows.csv; they are not kept here")
    pricing, vms = Path(where) / "pricing.yml", Path(where) / "vms.csv"
    inputs = _record()["inputs"]
    assert isinstance(inputs, list)
    script = _script()
    assert script.sha256(pricing) == inputs[0]["sha256"], f"{pricing} is not the pinned {inputs[0]['url']}"
    if inputs[1]["sha256"] is not None and vms.exists():
        assert script.sha256(vms) == inputs[1]["sha256"], f"{vms} is not the pinned {inputs[1]['url']}"
    read = inputs[0]["read"]
    if vms.exists():
        assert script.render(pricing, vms, read=read).encode("utf-8") == CSV.read_bytes()
    else:  # the machine rows alone: the CSV's rows from pricing.yml, in the script's order
        lines = CSV.read_text(encoding="utf-8").splitlines(keepends=True)
        mine = [line for line in lines[1:] if ",compute-engine," in line and not line.startswith("NVIDIA_")]
        assert script.render(pricing, None, read=read) == lines[0] + "".join(mine)
