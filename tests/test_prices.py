"""Prices by how Google bills (tfcloud.google.catalog.prices over the dated rows of
tfcloud.google.catalog.price_table): the sums as values, and the
plan of a job on each capacity kind (on demand, Spot, Flex Start, a reservation, a persistent resource) through the
CLI's --dry-run --json and text plan. No network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS, MachineConfig
from tfcloud.google.catalog.price_table import BILLING, PRICE_SOURCES, ROW_KINDS, VERTEX_ROWS, PriceRow, price_rows
from tfcloud.google.catalog.prices import PRICE_DATE, cluster_price, job_price, machine_price
from tfcloud.google.rules import ACCELERATORS, MACHINE_TYPES, TRAINING_REGIONS

T4 = COMMON_MACHINE_CONFIGS["T4_1X"]
CPU = COMMON_MACHINE_CONFIGS["CPU"]
T4_REPLICA = 0.4369977 + 0.4025  # n1-standard-8 + 1 x T4, us-central1
A100 = COMMON_MACHINE_CONFIGS["A100_1X"]  # a2-highgpu-1g: Compute Engine prices it with its GPU


def _row(item: str, region: str, kind: str) -> PriceRow:
    (row,) = [r for r in price_rows() if (r.item, r.region, r.capacity) == (item, region, kind)]
    return row


#: n1-standard-8 + 1 x T4 in us-central1 at Compute Engine's price (what a reservation bills).
T4_COMPUTE_ENGINE = (_row("n1-standard-8", "us-central1", "compute-engine").usd_per_hour
                     + _row("NVIDIA_TESLA_T4", "us-central1", "compute-engine").usd_per_hour)


def test_every_row_names_its_source_and_a_date() -> None:
    for row in price_rows():
        source = PRICE_SOURCES[row.source]
        assert row.date and row.capacity in ROW_KINDS and row.usd_per_hour > 0
        if row.capacity.startswith("compute-engine"):  # Google's billing catalog, as a repository records it
            assert source.url.startswith(("https://github.com/Cyclenerd/", "https://github.com/skypilot-org/"))
            assert "Cloud Billing Catalog API" in source.title and "/blob/" in source.url and row.date == source.read
        else:
            assert source.url.startswith("https://cloud.google.com/")


def test_every_catalog_machine_has_compute_engine_prices_where_the_source_has_them() -> None:
    # Every training machine type the source prices has a row in every region the rules serve it in (its fixed
    # accelerators' regions, else every training region); the rest are the gaps docs/machines.md lists.
    priced = {(r.item, r.region) for r in price_rows() if r.capacity == "compute-engine"}
    assert len(priced) > 2000
    for name, row in MACHINE_TYPES.items():
        fixed = row.family not in ("n1", "cloud") and not row.cpu_only
        served = frozenset().union(*(ACCELERATORS[a].regions for a in row.accelerators)) if fixed \
            else TRAINING_REGIONS
        mine = {region for item, region in priced if item == name}
        assert mine <= served, name  # never a region the rules do not serve it in
        if row.cpu_only:
            assert mine == served, name
    assert _row("a2-highgpu-1g", "us-central1", "compute-engine").with_accelerators
    assert not _row("n1-standard-8", "us-central1", "compute-engine").with_accelerators


def test_a_pool_costs_its_machine_plus_its_accelerators_per_replica() -> None:
    assert machine_price(CPU) == (pytest.approx(0.21849885), None)
    assert machine_price(T4)[0] == pytest.approx(T4_REPLICA)
    price = job_price([("chief", 1, T4), ("worker", 2, T4), ("ps", 1, CPU)], region="us-central1", timeout_s=7200)
    assert price.per_hour == pytest.approx(3 * T4_REPLICA + 0.21849885)
    assert price.ceiling == pytest.approx(2 * price.per_hour) and price.at_most_per_hour is None
    lines = price.lines()
    assert lines[:3] == ["Price: chief (1 replica): $0.84/h", "Price: worker (2 replicas): $1.68/h",
                         "Price: ps (1 replica): $0.22/h"]
    assert lines[3] == "Price: job: $2.74/h (on demand; list price in us-central1)"
    assert lines[4] == "Price: at most $5.47 with --timeout 7200s"
    assert f"price table of {PRICE_DATE}" in lines[5] and "Vertex AI pricing" in lines[5]


@pytest.mark.parametrize("cpus", [16, 32, 64, 96])
def test_the_larger_n1_standard_types_have_no_derived_training_price(cpus: int) -> None:
    # Only n1-standard-4 and -8 were read from the pricing page; the others are unknown, never 4 vCPUs' price x
    # vCPUs / 4 (the page prices each machine type on its own).
    name = f"n1-standard-{cpus}"
    assert not [r for r in VERTEX_ROWS if r.item == name]
    assert {r.item for r in VERTEX_ROWS if r.item.startswith("n1-standard-")} == {"n1-standard-4", "n1-standard-8"}
    config = MachineConfig(cpu_cores=cpus, memory=cpus * 3.75)
    assert config.machine_type == name
    assert machine_price(config) == (None, f"no on-demand price known for {name} in us-central1")


def test_an_unknown_price_is_said_not_guessed() -> None:
    h200 = COMMON_MACHINE_CONFIGS["H200_8X"]
    assert machine_price(h200) == (None, "no on-demand price known for a3-ultragpu-8g in us-central1")
    price = job_price([("chief", 1, h200)], region="us-central1")
    assert price.per_hour is None and price.ceiling is None
    assert "Price: job: unknown (no on-demand price known for a3-ultragpu-8g in us-central1)" in price.lines()
    elsewhere = job_price([("chief", 1, CPU)], region="europe-west4", timeout_s=60)
    assert elsewhere.per_hour is None and elsewhere.ceiling is None
    assert elsewhere.lines()[0] == "Price: no on-demand price known for europe-west4 (tfcloud's table has us-central1)."


def test_spot_and_flex_start_without_their_price_are_unknown_with_the_on_demand_ceiling_said_as_one() -> None:
    spot = job_price([("chief", 1, T4)], region="us-central1", spot=True, timeout_s=3600)
    assert spot.capacity == "spot" and spot.per_hour is None  # never the on-demand price as the Spot price
    assert spot.at_most_per_hour == pytest.approx(T4_REPLICA) and spot.ceiling == pytest.approx(T4_REPLICA)
    lines = spot.lines()
    assert lines[1] == ("Price: job: unknown on Spot (no Spot price known for n1-standard-8 in us-central1); at most "
                        "$0.84/h, the on-demand list price in us-central1 (a ceiling, not the price: it is billed "
                        "below)")
    assert lines[2] == "Price: at most $0.84 with --timeout 3600s (from the on-demand ceiling)"
    assert lines[-1].startswith("Price: billing: Spot VMs \"have significant discounts\" and are billed by the job's "
                                "duration and machine type, not while it is queued or preempted; the page names no "
                                "rate, and Vertex AI's Spot training prices are not in tfcloud's table (Use Spot VMs "
                                "with training (https://cloud.google.com/vertex-ai/docs/training/")
    flex = job_price([("chief", 1, T4)], region="us-central1", flex_start=True)
    assert flex.capacity == "flex-start" and flex.per_hour is None
    assert '"up to 53%"' in flex.billing() and "kubernetes-engine/docs/concepts/dws" in flex.billing()
    assert flex.lines()[1].startswith("Price: job: unknown on Flex Start (Dynamic Workload Scheduler) (no Flex Start "
                                      "price known for n1-standard-8 in us-central1); at most $0.84/h")


def test_a_reservation_is_billed_at_its_compute_engine_price_and_fee_and_says_so() -> None:
    named = job_price([("chief", 1, A100), ("worker", 2, CPU)], region="europe-west4",
                      reservation="europe-west4-a/team", timeout_s=3600)
    compute_engine = (_row("a2-highgpu-1g", "europe-west4", "compute-engine").usd_per_hour  # its GPU included
                      + 2 * _row("n1-standard-4", "europe-west4", "compute-engine").usd_per_hour)
    assert named.capacity == "reservation" and named.basis == "compute-engine"
    assert named.per_hour == pytest.approx(compute_engine) and named.at_most_per_hour is None
    assert named.ceiling is None  # the fee's rate is unknown: no "at most"
    assert named.excludes == ("Vertex AI's training management fee (its rate is not in tfcloud's table)",)
    lines = named.lines()
    assert lines[2] == (f"Price: job: ${compute_engine:,.2f}/h (reservation europe-west4-a/team: Compute Engine "
                        "price in europe-west4) plus Vertex AI's training management fee (its rate is not in "
                        "tfcloud's table)")
    assert "Cloud Billing Catalog API, Compute Engine SKUs, as recorded by Cyclenerd" in lines[3]
    assert "the reservation's Compute Engine price (its on-demand rate, with any committed-use discount; the " \
        "reservation is billed while it exists) plus Vertex AI's training management fee (Use reservations with " \
        "training" in lines[-1]
    t4 = job_price([("chief", 1, T4)], region="us-central1", reservation="any")  # N1 + a GPU: both rows
    t4_compute_engine = (_row("n1-standard-8", "us-central1", "compute-engine").usd_per_hour
                         + _row("NVIDIA_TESLA_T4", "us-central1", "compute-engine").usd_per_hour)
    assert t4.per_hour == pytest.approx(t4_compute_engine)
    assert t4.lines()[1].endswith("; $0.84/h on demand if no reservation matches")
    # The sources line names the sources of the figures shown, and only those.
    assert [x.split(",")[0] for x in named.sources()] == ["Cloud Billing Catalog API"]
    assert any("skypilot-org/skypilot-catalog" in x for x in t4.sources())  # the T4's Compute Engine row
    assert any(x.startswith("Vertex AI pricing") for x in t4.sources())  # the on-demand fallback shown
    v100 = job_price([("chief", 1, COMMON_MACHINE_CONFIGS["V100_1X"])], region="asia-east1", reservation="any")
    assert v100.per_hour == pytest.approx(_row("n1-standard-8", "asia-east1", "compute-engine").usd_per_hour
                                          + _row("NVIDIA_TESLA_V100", "asia-east1", "compute-engine").usd_per_hour)
    assert "on demand if no reservation matches" not in v100.lines()[1]  # no training price in asia-east1
    h200 = job_price([("chief", 1, COMMON_MACHINE_CONFIGS["H200_8X"])], region="us-central1", reservation="any")
    assert h200.per_hour is None and h200.lines()[1] == (
        "Price: job: unknown on reservation any (no Compute Engine price known for a3-ultragpu-8g in us-central1)")
    assert job_price([("chief", 1, T4)], region="us-central1", reservation="none").capacity == "on-demand"


def test_spot_shows_compute_engines_spot_price_for_reference_never_as_the_jobs() -> None:
    spot = job_price([("chief", 2, A100)], region="us-central1", spot=True)
    reference = 2 * _row("a2-highgpu-1g", "us-central1", "compute-engine-spot").usd_per_hour
    assert spot.per_hour is None and spot.compute_engine_spot_per_hour == pytest.approx(reference)
    assert spot.at_most_per_hour is None  # no training price of a2-highgpu-1g on demand either: no ceiling
    assert (f"Price: Compute Engine's Spot price for these VMs in us-central1: ${reference:,.2f}/h (Compute "
            "Engine's, for reference, not the job's price: Google does not say Vertex AI bills it; Spot prices "
            "change up to once every 30 days)") in spot.lines()


def test_a_job_on_a_persistent_resource_is_not_charged_and_the_resource_is() -> None:
    price = job_price([("chief", 1, T4)], region="us-central1", persistent_resource="team-a100", spot=True,
                      timeout_s=3600)
    assert (price.capacity, price.per_hour, price.ceiling) == ("persistent-resource", 0.0, 0.0)
    assert price.lines()[0] == ("Price: job: not charged (it runs on persistent resource team-a100, which is billed "
                                "for as long as it runs, job or no job; `tfcloud cluster list` shows its price per "
                                "hour)")
    assert "Persistent resource overview, billing details" in price.lines()[1]
    cluster = cluster_price([(1, "n1-standard-8", "NVIDIA_TESLA_T4", 1), (2, "n1-standard-4", None, 0)],
                            region="us-central1")
    assert cluster.per_hour == pytest.approx(T4_REPLICA + 2 * 0.21849885)
    assert cluster.line() == "$1.28/h while it exists (on demand, us-central1)"
    unknown = cluster_price([(1, "a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)], region="us-central1")
    assert unknown.per_hour is None
    assert unknown.line() == "price unknown (no on-demand price known for a2-highgpu-1g in us-central1)"


# --- the plan of a job on each capacity kind, at the command line --------------------------------------------------
@pytest.fixture
def vertex_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", "127.0.0.1:9")  # never reached: a plan
    monkeypatch.setenv("TFCLOUD_PROJECT", "my-project")


@pytest.mark.parametrize(("flags", "capacity", "per_hour", "at_most", "said"), [
    ([], "on-demand", T4_REPLICA, None, "Price: job: $0.84/h (on demand; list price in us-central1)"),
    (["--spot"], "spot", None, T4_REPLICA, "Price: job: unknown on Spot (no Spot price known for n1-standard-8"),
    (["--reservation", "any"], "reservation", T4_COMPUTE_ENGINE, None,
     f"Price: job: ${T4_COMPUTE_ENGINE:,.2f}/h (reservation any: Compute Engine price in us-central1) plus Vertex "
     "AI's training management fee"),
    (["--persistent-resource", "team-t4"], "persistent-resource", 0.0, None,
     "Price: job: not charged (it runs on persistent resource team-t4"),
])
def test_the_plan_prices_a_job_on_each_capacity_kind(
        script: Path, vertex_env: None, capsys: pytest.CaptureFixture[str], flags: list[str], capacity: str,
        per_hour: float | None, at_most: float | None, said: str) -> None:
    argv = ["submit", str(script), "--vertex", "--chief-config", "T4_1X", *flags, "--dry-run"]
    assert main([*argv, "--json"]) == 0
    price = json.loads(capsys.readouterr().out)["price"]
    assert price["capacity"] == capacity and price["charged"] is (capacity != "persistent-resource")
    assert price["per_hour_usd"] == (None if per_hour is None else pytest.approx(per_hour))
    assert price["at_most_per_hour_usd"] == (None if at_most is None else pytest.approx(at_most))
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert said in captured.out + captured.err


def test_the_plan_prices_a_job_on_a_reservation_at_the_compute_engine_rows(
        script: Path, vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["submit", str(script), "--vertex", "--chief-config", "A100_1X", "--worker-count", "2",
            "--worker-config", "L4_1X", "--reservation", "us-central1-a/team", "--dry-run"]
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    price = json.loads(capsys.readouterr().out)["price"]
    expected = (_row("a2-highgpu-1g", "us-central1", "compute-engine").usd_per_hour
                + 2 * _row("g2-standard-8", "us-central1", "compute-engine").usd_per_hour)
    assert price["capacity"] == "reservation" and price["basis"] == "compute-engine"
    assert price["per_hour_usd"] == pytest.approx(expected) and price["at_most_per_hour_usd"] is None
    assert price["excludes"] == ["Vertex AI's training management fee (its rate is not in tfcloud's table)"]
    assert any("Compute Engine SKUs" in source for source in price["sources"])
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert (f"Price: job: ${expected:,.2f}/h (reservation us-central1-a/team: Compute Engine price in us-central1) "
            "plus Vertex AI's training management fee") in captured.out + captured.err


def test_the_plan_of_a_spot_job_gives_compute_engines_spot_price_apart(
        script: Path, vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["submit", str(script), "--vertex", "--chief-config", "L4_1X", "--spot", "--dry-run", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    price = json.loads(capsys.readouterr().out)["price"]
    assert price["capacity"] == "spot" and price["per_hour_usd"] is None  # Vertex AI's Spot price: unknown
    assert price["compute_engine_spot_per_hour_usd"] == pytest.approx(
        _row("g2-standard-8", "us-central1", "compute-engine-spot").usd_per_hour)


def test_the_plan_labels_a_flex_start_job_flex_start(script: Path, vertex_env: None,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["submit", str(script), "--vertex", "--chief-config", "A100_1X", "--scheduling", "flex-start",
            "--dry-run"]
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    price = json.loads(capsys.readouterr().out)["price"]
    assert price["capacity"] == "flex-start" and price["per_hour_usd"] is None
    assert "Dynamic Workload Scheduler" in price["billing"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Price: job: unknown on Flex Start (Dynamic Workload Scheduler) (no Flex Start price known for " \
           "a2-highgpu-1g in us-central1)" in text
    assert "on demand" not in text.split("Price: job:")[1].splitlines()[0]  # never labelled on-demand


def test_the_docs_price_section_and_machines_prices_show_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    docs = Path(__file__).resolve().parents[1] / "docs" / "vertex.md"
    section = docs.read_text().split("## Price in the plan", 1)[1].split("\n## ", 1)[0]
    for row in VERTEX_ROWS:  # each training price read, with its figure (n1-standard: linear in vCPUs, one shown)
        if row.item.startswith("n1-standard-") and row.item != "n1-standard-4":
            continue
        assert f"`{row.item}` ${row.usd_per_hour!r}" in section, row
    for capacity, (key, _) in BILLING.items():  # each capacity's rule names its Google page and the day read
        source = PRICE_SOURCES[key]
        rule = [line for line in section.splitlines() if line.startswith("| ") and source.url.split()[0] in line]
        assert rule and "read 2026-11-26" in section, capacity
    for key in ("compute-engine", "compute-engine-gpus"):  # the data sources, by commit
        assert PRICE_SOURCES[key].url in section
    assert "a3-ultragpu-8g (H200)" in section  # what still has no price is listed
    assert main(["machines", "--prices", "--json"]) == 0
    catalog = json.loads(capsys.readouterr().out)
    assert catalog["T4_1X"]["price_per_hour_usd"] == pytest.approx(T4_REPLICA)
    assert catalog["T4_1X"]["compute_engine_per_hour_usd"] == pytest.approx(
        _row("n1-standard-8", "us-central1", "compute-engine").usd_per_hour
        + _row("NVIDIA_TESLA_T4", "us-central1", "compute-engine").usd_per_hour)
    assert catalog["H200_8X"]["compute_engine_per_hour_usd"] is None  # a3-ultragpu-8g: no row, never guessed
    assert catalog["A100_1X"]["compute_engine_per_hour_usd"] == pytest.approx(
        _row("a2-highgpu-1g", "us-central1", "compute-engine").usd_per_hour)
    assert catalog["A100_1X"]["compute_engine_spot_per_hour_usd"] == pytest.approx(
        _row("a2-highgpu-1g", "us-central1", "compute-engine-spot").usd_per_hour)
    assert catalog["H100_8X"]["price_per_hour_usd"] is None  # a3-highgpu-8g: no row, no guess


def test_docs_machines_prices_tables_are_generated_from_the_table() -> None:
    from tests.docgen import generator

    rulesdoc = generator("gen_rules")

    text = (Path(__file__).resolve().parents[1] / "docs" / "machines.md").read_text(encoding="utf-8")
    block = text.partition(rulesdoc.PRICES_START + "\n")[2].partition(rulesdoc.PRICES_END)[0]
    assert block == rulesdoc.prices_tables(), "run `python docs/captures.py options` and commit docs/machines.md"
    assert "| a3-ultragpu-8g | – | – | – | 0 of 9 | all |" in block  # a gap is listed, never filled in


def test_cluster_create_dry_run_shows_what_the_cluster_costs_per_hour_and_creates_nothing(
        vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    # TFCLOUD_EMULATOR_HOST points at a closed port: a dry run never calls Google, nor needs credentials.
    argv = ["cluster", "create", "team-t4", "--chief-config", "T4_1X", "--worker-count", "2", "--worker-config",
            "CPU", "--dry-run"]
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    planned = json.loads(capsys.readouterr().out)
    assert planned["state"] == "DRY_RUN" and planned["name"].endswith("/locations/us-central1/persistentResources/"
                                                                       "team-t4")
    assert [(p["pool_id"], p["machine_type"], p["accelerator"], p["replica_count"]) for p in planned["pools"]] == [
        ("chief", "n1-standard-8", "1 x NVIDIA_TESLA_T4", 1), ("worker", "n1-standard-4", "-", 2)]
    expected = (_row("n1-standard-8", "us-central1", "on-demand").usd_per_hour
                + _row("NVIDIA_TESLA_T4", "us-central1", "on-demand").usd_per_hour
                + 2 * _row("n1-standard-4", "us-central1", "on-demand").usd_per_hour)
    assert planned["price_per_hour_usd"] == pytest.approx(expected)  # its machines' training prices, while it exists
    assert main(argv) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("team-t4\tDRY_RUN\tchief: 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4), worker: 2 x ")
    assert line.endswith(f"\t${expected:,.2f}/h while it exists (on demand, us-central1)")
    unknown = ["cluster", "create", "team-a100", "--chief-config", "A100_1X", "--dry-run"]
    assert main(unknown) == 0
    assert capsys.readouterr().out.strip().endswith(
        "price unknown (no on-demand price known for a2-highgpu-1g in us-central1)")  # said, not guessed


def test_cluster_create_dry_run_with_no_wait_is_refused(vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "team", "--chief-config", "CPU", "--dry-run", "--no-wait"]) == 2
    err = capsys.readouterr().err
    assert "wait" in err and "Drop --no-wait or --dry-run." in err and "Traceback" not in err
