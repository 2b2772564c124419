"""The region rows of the rules table against what Google's pages confirmed on the day they were read: every row
has a check, every confirmed region is one of its row's and names a read page, the SDK's list of regions differs
from the training regions only where docs/vertex.md says so (and those regions are refused), and docs/vertex.md's
table of what was and was not confirmed is the one the data makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.vertexrules.test_checks import check, job, only, pool
from tfcloud.vertexrules import ACCELERATORS, SOURCES, TRAINING_REGIONS
from tfcloud.vertexrules.data import REGION_CHECKS, SDK_ONLY_REGIONS

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_of_regions_has_a_check_and_confirms_only_its_own_regions() -> None:
    offered = {name for name, info in ACCELERATORS.items() if info.offered}
    assert set(REGION_CHECKS) == {"TRAINING_REGIONS"} | offered
    assert REGION_CHECKS["TRAINING_REGIONS"].regions == TRAINING_REGIONS
    for name, row in REGION_CHECKS.items():
        if name != "TRAINING_REGIONS":
            assert row.regions == ACCELERATORS[name].regions, name
        assert set(row.confirmed) <= row.regions, (name, set(row.confirmed) - row.regions)
        assert set(row.confirmed.values()) <= set(SOURCES), name
        assert row.unconfirmed == row.regions - set(row.confirmed)


def test_what_the_pages_confirmed() -> None:
    # The nine US regions of the Locations page's list (its Japanese copy), and Cloud TPU's zones for TPU v5e.
    us = {r for r in TRAINING_REGIONS if r.startswith("us-")}
    assert {r for r, key in REGION_CHECKS["TRAINING_REGIONS"].confirmed.items() if key == "locations-ja"} == us
    assert len(us) == 9
    assert REGION_CHECKS["TPU_V5_LITEPOD"].unconfirmed == frozenset()
    # No copy reached the Locations page's accelerator tables: no GPU row is confirmed.
    gpus = [name for name, info in ACCELERATORS.items() if info.offered and not info.is_tpu]
    assert all(not REGION_CHECKS[name].confirmed for name in gpus)


def test_the_sdk_lists_every_training_region_and_only_the_documented_others() -> None:
    base = pytest.importorskip("google.cloud.aiplatform.constants.base")
    supported = frozenset(base.SUPPORTED_REGIONS)
    assert supported >= TRAINING_REGIONS, TRAINING_REGIONS - supported
    assert supported - TRAINING_REGIONS == SDK_ONLY_REGIONS, "re-read the Locations page and update docs/vertex.md"


@pytest.mark.parametrize("region", sorted(SDK_ONLY_REGIONS - {"global"}))
def test_regions_only_the_sdk_lists_are_refused(region: str) -> None:
    found = only(check(job(pool("n1-standard-4")), region), "region-serves-training")
    assert region in found.description


@pytest.mark.parametrize(("region", "body"), [
    ("us-south1", job(pool("ct5lp-hightpu-4t", topology="2x2"))),  # Cloud TPU makes v5e there; Vertex AI: unread
    ("asia-south2", job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))),
    ("europe-west2", job(pool("a3-highgpu-1g", "NVIDIA_H100_80GB", 1))),
])
def test_an_accelerator_outside_its_row_is_refused(region: str, body: dict[str, Any]) -> None:
    found = only(check(body, region), "accelerator-region")
    assert region in found.description


def test_the_docs_table_of_what_was_confirmed_is_generated_from_the_data() -> None:
    from tfcloud.targets.vertex import rulesdoc

    text = (ROOT / "docs" / "vertex.md").read_text(encoding="utf-8")
    block = text.partition(rulesdoc.REGIONS_START + "\n")[2].partition(rulesdoc.REGIONS_END)[0]
    assert block == rulesdoc.regions_table(), "run `python docs/captures.py options` and commit docs/vertex.md"
    assert "| NVIDIA_TESLA_T4 | 18 | – | " in block  # a GPU row, none of it confirmed
    assert "not confirmed on 2026-11-26" in text.lower()
