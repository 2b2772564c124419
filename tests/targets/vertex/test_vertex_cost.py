"""Spend you can see (issue 37 item 3): ``tfcloud cost`` prices a finished Vertex AI job from the price table's rows
and the job's own times on the emulator (replicas x hourly price x the time from its replicas' start to its end),
says "unknown" where the table has no price, and "not billed" for a local job; ``tfcloud list`` has the column.
The real aiplatform_v1 clients on the emulator, nothing patched."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

import tfcloud
from tfcloud import sdk
from tfcloud.backends.base import BilledPool, Billing, JobInfo
from tfcloud.cli import main
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.catalog.price_table import price_rows
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState

IMAGE = "localhost:5000/tfcloud/cost:test"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-test", storage=False,
                  entrypoints={IMAGE: [sys.executable, "-c", "import time; time.sleep(1.5); print('trained')"]}) as emu:
        yield emu


@pytest.fixture
def env(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TFCLOUD_RETRY_DEADLINE", "3")
    yield emulator


def _submit(env: Any, tmp_path: Path, region: str = "us-central1", **spec_kwargs: object) -> VertexJob:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(entry_point=str(script), target="vertex", project="tfcloud-test", region=region,
                             emulator_host=env.endpoint, distribution_strategy=None, **spec_kwargs)
    job, _ = prepare(spec, target, tmp_path)
    backend = VertexBackend(settings=Settings(target="vertex"), target=target,
                            retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
    return backend.submit(replace(job, image=ImageRef(uri=IMAGE)))


def _row(item: str, region: str = "us-central1") -> float:
    return next(r.usd_per_hour for r in price_rows() if (r.item, r.region, r.capacity) == (item, region, "on-demand"))


def _times(env: Any, job: VertexJob) -> tuple[float, float]:
    client = env.job_client()
    try:
        found = client.get_custom_job(name=job.name)
    finally:
        client.transport.close()
    return found.start_time.timestamp(), found.end_time.timestamp()


def test_a_finished_job_costs_replicas_times_the_tables_price_times_its_run(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = _submit(env, tmp_path, chief_config="T4_1X", worker_config="T4_1X", worker_count=2)
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    start, end = _times(env, job)
    machine = next(p.machine_spec.machine_type for p in job.job.job_spec.worker_pool_specs)
    expected = 3 * (_row(machine) + _row("NVIDIA_TESLA_T4")) * (end - start) / 3600
    assert expected > 0
    capsys.readouterr()
    assert main(["cost", job.job_id, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["billed"] is True and out["capacity"] == "on-demand" and out["region"] == "us-central1"
    assert out["billed_seconds"] == pytest.approx(end - start)
    assert out["cost_usd"] == pytest.approx(expected)
    assert out["price_per_hour_usd"] == pytest.approx(3 * (_row(machine) + _row("NVIDIA_TESLA_T4")))
    assert sdk.cost(job.job_id).usd == pytest.approx(expected)
    assert main(["cost", job.job_id]) == 0
    text = capsys.readouterr().out
    assert "Capacity: on-demand in us-central1" in text and "Cost: $" in text
    assert "billed from when its replicas start running until it ends" in text


def test_a_price_the_table_lacks_is_unknown_never_a_guess(env: Any, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    job = _submit(env, tmp_path, chief_config="CPU", spot=True)
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    capsys.readouterr()
    assert main(["cost", job.job_id, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["capacity"] == "spot" and out["cost_usd"] is None and out["shown"] == "unknown"
    assert out["missing"] == ["no Spot price known for n1-standard-4 in us-central1"]
    assert main(["cost", job.job_id]) == 0
    assert "Cost: unknown (no Spot price known for n1-standard-4 in us-central1)" in capsys.readouterr().out


def test_list_has_a_cost_column(env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    job = _submit(env, tmp_path, chief_config="CPU")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["list", "--vertex"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "COST" in lines[0].split()
    mine = next(line for line in lines if line.startswith(job.job_id + " "))
    assert "$0." in mine
    assert main(["list", "--vertex", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert next(r for r in rows if r["job_id"] == job.job_id)["cost"]["billed"] is True


def test_a_local_job_is_not_billed_by_google(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    job = tfcloud.run(entry_point=str(script), distribution_strategy=None)
    assert job.wait(60).state is JobState.SUCCEEDED
    assert job.cost().short() == "not billed"
    capsys.readouterr()
    assert main(["cost"]) == 0  # the last job
    out = capsys.readouterr().out
    assert f"Job: {job.job_id}" in out
    assert "Cost: nothing billed by Google Cloud: a local job runs on machines you provide" in out


# --- each capacity kind, as values (JobInfo.billing as the Vertex AI backend fills it) ----------------------------
def _info(capacity: str, *, state: JobState = JobState.SUCCEEDED, started: float | None = 1000.0,
          ended: float | None = 1000.0 + 1800, **billing: Any) -> JobInfo:
    pools = (BilledPool(role="chief", replicas=1, machine_type="n1-standard-4"),
             BilledPool(role="worker", replicas=2, machine_type="n1-standard-4", accelerator="NVIDIA_TESLA_T4",
                        accelerator_count=1))
    return JobInfo(job_id="42", target="vertex", state=state, started=started, ended=ended,
                   billing=Billing(region="us-central1", capacity=capacity, pools=pools, **billing))


def test_a_running_job_costs_what_it_ran_so_far() -> None:
    hourly = 3 * _row("n1-standard-4") + 2 * _row("NVIDIA_TESLA_T4")
    found = sdk.cost_of(_info("on-demand", state=JobState.RUNNING, ended=None), now=1000.0 + 3600)
    assert found.running and found.usd == pytest.approx(hourly) and found.short().endswith("…")
    assert "so far (running)" in "\n".join(found.lines())


def test_a_job_that_never_started_cost_nothing() -> None:
    found = sdk.cost_of(_info("on-demand", state=JobState.CANCELLED, started=None), now=5000.0)
    assert found.usd == 0.0 and found.seconds == 0.0


def test_a_reservation_is_a_floor_a_persistent_resource_bills_as_the_cluster() -> None:
    found = sdk.cost_of(_info("reservation", reservation="any"))
    assert found.usd is None and found.short().startswith("≥$")
    assert "management fee is not in tfcloud's table" in "\n".join(found.lines())
    on_cluster = sdk.cost_of(_info("persistent-resource", resource="team"))
    assert not on_cluster.billed and on_cluster.short() == "cluster"
    assert "runs on persistent resource team, which is billed for as long as it runs" in on_cluster.note


def test_a_job_in_a_region_the_table_lacks_is_unknown() -> None:
    info = _info("on-demand")
    assert info.billing is not None
    elsewhere = replace(info, billing=replace(info.billing, region="europe-west4"))
    found = sdk.cost_of(elsewhere)
    assert found.usd is None and found.short() == "unknown"
    assert found.missing == ("no on-demand price known for n1-standard-4 in europe-west4",)
