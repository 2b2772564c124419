"""The region rows of the rules table against Google's Locations page as tfcloud.google.rules.locations transcribes
it: the training regions are its Available locations, each accelerator's regions are the page's rows for it less
those marked † (and the one another Google page contradicts), the SDK's list differs only where docs/vertex.md says,
and docs/vertex.md's table is the one the data makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.vertexrules.test_checks import check, job, only, pool
from tfcloud.google.rules import ACCELERATORS, SOURCES, TRAINING_REGIONS
from tfcloud.google.rules.locations import (
    ACCELERATORS_BY_REGION,
    AVAILABLE_LOCATIONS,
    PAGE_NAMES,
    REFUSED_THOUGH_LISTED,
    SDK_ONLY_REGIONS,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_training_regions_are_the_pages_available_locations() -> None:
    assert TRAINING_REGIONS == AVAILABLE_LOCATIONS
    assert len(TRAINING_REGIONS) == 39
    assert set(ACCELERATORS_BY_REGION) <= TRAINING_REGIONS  # every row of the accelerator table is a training region


def test_each_accelerators_regions_are_its_rows_of_the_page_less_the_dagger_and_the_contradicted() -> None:
    assert set(PAGE_NAMES) == {label for row in ACCELERATORS_BY_REGION.values() for label in row}
    for name, info in ACCELERATORS.items():
        if not info.offered:
            assert info.regions == frozenset()
            continue
        labels = {label for label, page_name in PAGE_NAMES.items() if page_name == name}
        assert len(labels) == 1, name
        listed = {region for region, row in ACCELERATORS_BY_REGION.items() if any(row.get(x) for x in labels)}
        assert info.regions == listed - {region for (n, region) in REFUSED_THOUGH_LISTED if n == name}, name
    assert all(key in SOURCES for key in REFUSED_THOUGH_LISTED.values())


@pytest.mark.parametrize(("name", "region"), [
    ("NVIDIA_L4", "me-central2"), ("NVIDIA_L4", "europe-west2"), ("NVIDIA_H200_141GB", "asia-south2"),
    ("NVIDIA_TESLA_T4", "europe-central2"), ("NVIDIA_H100_80GB", "europe-west2"), ("TPU_V6E", "us-south1"),
])
def test_a_region_the_page_lists_for_training_is_served(name: str, region: str) -> None:
    assert region in ACCELERATORS[name].regions


@pytest.mark.parametrize(("region", "body"), [
    # marked † on the page ("isn't available for training")
    ("europe-west6", job(pool("g2-standard-4", "NVIDIA_L4", 1))),
    ("asia-northeast1", job(pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1))),
    ("us-south1", job(pool("ct5lp-hightpu-4t", topology="2x2"))),
    # not listed for the accelerator at all
    ("us-west1", job(pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1))),
    ("asia-south2", job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))),
    ("us-east5", job(pool("a4-highgpu-8g", "NVIDIA_B200", 8, disk="hyperdisk-balanced"))),
    # listed by the page, refused because Cloud TPU does not make v5e there
    ("us-east1", job(pool("ct5lp-hightpu-4t", topology="2x2"))),
])
def test_an_accelerator_outside_its_row_is_refused(region: str, body: dict[str, Any]) -> None:
    found = only(check(body, region), "accelerator-region")
    assert region in found.description


def test_an_accelerator_the_page_newly_lists_is_accepted() -> None:
    assert check(job(pool("g2-standard-4", "NVIDIA_L4", 1)), "me-central2") == []
    assert check(job(pool("a3-highgpu-1g", "NVIDIA_H100_80GB", 1)), "europe-west2") == []


def test_the_sdk_names_every_training_region_and_only_the_documented_others() -> None:
    base = pytest.importorskip("google.cloud.aiplatform.constants.base")
    supported = frozenset(base.SUPPORTED_REGIONS)
    assert supported >= TRAINING_REGIONS, TRAINING_REGIONS - supported
    assert supported - TRAINING_REGIONS == SDK_ONLY_REGIONS, "re-read the Locations page and update docs/vertex.md"


@pytest.mark.parametrize("region", sorted(SDK_ONLY_REGIONS - {"global"}))
def test_regions_only_the_sdk_names_are_refused(region: str) -> None:
    found = only(check(job(pool("n1-standard-4")), region), "region-serves-training")
    assert region in found.description


def test_the_docs_table_of_the_page_is_generated_from_the_data() -> None:
    from tests.docgen import generator

    rulesdoc = generator("gen_rules")

    text = (ROOT / "docs" / "vertex.md").read_text(encoding="utf-8")
    block = text.partition(rulesdoc.REGIONS_START + "\n")[2].partition(rulesdoc.REGIONS_END)[0]
    assert block == rulesdoc.regions_table(), "run `python docs/captures.py options` and commit docs/vertex.md"
    v5e = "| TPU_V5_LITEPOD | TPU v5e | us-central1, us-west1, us-west4 | europe-west4, us-south1 | us-east1 ("
    assert v5e in block
