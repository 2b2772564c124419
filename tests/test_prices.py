"""The price table and the sums a plan shows: pure values, no network."""

from __future__ import annotations

import pytest

from tfcloud.machines import COMMON_MACHINE_CONFIGS
from tfcloud.prices import PRICE_DATE, job_price, machine_price

T4 = COMMON_MACHINE_CONFIGS["T4_1X"]
CPU = COMMON_MACHINE_CONFIGS["CPU"]


def test_a_pool_costs_its_machine_plus_its_accelerators_per_replica() -> None:
    assert machine_price(CPU) == (pytest.approx(0.21849885), None)
    assert machine_price(T4)[0] == pytest.approx(0.4369977 + 0.4025)
    price = job_price([("chief", 1, T4), ("worker", 2, T4), ("ps", 1, CPU)], region="us-central1", timeout_s=7200)
    assert price.per_hour == pytest.approx(3 * (0.4369977 + 0.4025) + 0.21849885)
    assert price.ceiling == pytest.approx(2 * price.per_hour)
    lines = price.lines()
    assert lines[:3] == ["Price: chief (1 replica): $0.84/h", "Price: worker (2 replicas): $1.68/h",
                         "Price: ps (1 replica): $0.22/h"]
    assert lines[3] == "Price: job: $2.74/h (on demand; list price in us-central1)"
    assert lines[4] == "Price: at most $5.47 with --timeout 7200s"
    assert f"price table of {PRICE_DATE}" in lines[5] and "Vertex AI pricing" in lines[5]


def test_an_unknown_price_is_said_not_guessed() -> None:
    h200 = COMMON_MACHINE_CONFIGS["H200_8X"]
    assert machine_price(h200) == (None, "no price known for a3-ultragpu-8g in us-central1")
    price = job_price([("chief", 1, h200)], region="us-central1")
    assert price.per_hour is None and price.ceiling is None
    assert "Price: job: unknown (no price known for a3-ultragpu-8g in us-central1)" in price.lines()
    elsewhere = job_price([("chief", 1, CPU)], region="europe-west4", timeout_s=60)
    assert elsewhere.per_hour is None
    assert elsewhere.lines()[0].startswith("Price: no price known for europe-west4 (tfcloud's table has us-central1")


def test_spot_without_a_spot_price_shows_the_on_demand_price_as_its_ceiling() -> None:
    price = job_price([("chief", 1, CPU)], region="us-central1", spot=True)
    assert price.capacity == "spot" and price.fallback and price.per_hour == pytest.approx(0.21849885)
    assert "no spot price in the table, spot is billed below it, so this is a ceiling" in price.lines()[1]
