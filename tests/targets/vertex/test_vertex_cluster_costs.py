"""Idle clusters cost money (issue 37 item 3): ``tfcloud cluster list`` shows each persistent resource's price per
hour, how long it has run no job and what that idle time cost; ``tfcloud cluster gc --idle`` deletes the idle ones
(``--dry-run`` deletes nothing) and never one a job runs on; the idle warning is said once. On the emulator, the
real aiplatform_v1 clients, nothing patched."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud import sdk
from tfcloud.cli import main
from tfcloud.flow import clusters
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.catalog.price_table import price_rows
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState

IMAGE = "localhost:5000/tfcloud/idle:test"
SHAPE = ["--chief-config", "CPU"]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-test", storage=False,
                  entrypoints={IMAGE: [sys.executable, "-c", "print('trained')"]}) as emu:
        yield emu


@pytest.fixture
def env(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TFCLOUD_RETRY_DEADLINE", "3")
    yield emulator
    emulator.faults.clear()
    emulator.faults.release_queued()
    for info in clusters.list_clusters():  # each test starts with none
        clusters.delete_cluster(info.cluster_id, force=True)


def _names(emulator: Any) -> list[str]:
    client = emulator.persistent_resource_client()
    try:
        return sorted(r.name.rsplit("/", 1)[-1] for r in client.list_persistent_resources(parent=emulator.parent))
    finally:
        client.transport.close()


def _submit(env: Any, tmp_path: Path, **spec_kwargs: object) -> VertexJob:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(entry_point=str(script), target="vertex", project="tfcloud-test", region="us-central1",
                             emulator_host=env.endpoint, distribution_strategy=None, **spec_kwargs)
    job, _ = prepare(spec, target, tmp_path)
    backend = VertexBackend(settings=Settings(target="vertex"), target=target,
                            retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
    return backend.submit(replace(job, image=ImageRef(uri=IMAGE)))


def _start(env: Any, cluster_id: str) -> float:
    client = env.persistent_resource_client()
    try:
        return float(client.get_persistent_resource(
            name=f"{env.parent}/persistentResources/{cluster_id}").start_time.timestamp())
    finally:
        client.transport.close()


def test_list_shows_the_price_per_hour_the_idle_time_and_what_it_cost(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "idle-one", *SHAPE]) == 0
    assert main(["cluster", "create", "busy-one", *SHAPE]) == 0
    env.faults.hold_queued()
    job = _submit(env, tmp_path, chief_config="CPU", persistent_resource="busy-one")
    capsys.readouterr()
    assert main(["cluster", "list", "--json"]) == 0
    rows = {row["cluster_id"]: row for row in json.loads(capsys.readouterr().out)}
    per_hour = next(r.usd_per_hour for r in price_rows()
                    if (r.item, r.region, r.capacity) == ("n1-standard-4", "us-central1", "on-demand"))
    assert rows["idle-one"]["price_per_hour_usd"] == pytest.approx(per_hour)
    idle = rows["idle-one"]["idle_seconds"]
    assert idle is not None and idle >= 0
    assert rows["idle-one"]["idle_cost_usd"] == pytest.approx(per_hour * idle / 3600)
    assert rows["busy-one"]["idle_seconds"] is None and rows["busy-one"]["busy"] == [job.name]
    assert main(["cluster", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    idle_line = next(line for line in lines if line.startswith("idle-one\t"))
    assert "/h while it exists (on demand, us-central1)" in idle_line and "\tidle " in idle_line
    assert ", which cost $" in idle_line
    assert next(line for line in lines if line.startswith("busy-one\t")).endswith("\tbusy: 1 job running")
    on_cluster = sdk.cost(job.job_id)  # the job bills as the cluster, read from its CustomJob
    assert not on_cluster.billed and on_cluster.capacity == "persistent-resource" and on_cluster.short() == "cluster"


def test_gc_dry_run_deletes_nothing_gc_deletes_the_idle_one_and_keeps_the_busy_one(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "gc-idle", *SHAPE]) == 0
    assert main(["cluster", "create", "gc-busy", *SHAPE]) == 0
    env.faults.hold_queued()
    job = _submit(env, tmp_path, chief_config="CPU", persistent_resource="gc-busy")
    while time.time() - max(_start(env, "gc-idle"), _start(env, "gc-busy")) < 1.5:  # both idle-aged 1s or more
        time.sleep(0.1)
    capsys.readouterr()
    assert main(["cluster", "gc", "--idle", "1s", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gc-idle\twould delete\tidle ") and "gc-busy" not in out
    assert _names(env) == ["gc-busy", "gc-idle"]
    assert main(["cluster", "gc", "--idle", "1s"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gc-idle\tdeleted\tidle ") and "gc-busy" not in out
    assert _names(env) == ["gc-busy"]
    assert main(["cluster", "gc", "--idle", "1d"]) == 0  # nothing that old
    assert capsys.readouterr().err == "No cluster has been idle for 1d or longer.\n"
    env.faults.release_queued()
    assert job.wait(timeout=60).state is JobState.SUCCEEDED


def test_gc_refuses_a_bad_duration(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "gc", "--idle", "soon"]) == 2
    err = capsys.readouterr().err
    assert "Invalid `idle`: expected a duration such as 30m, 2h or 1d, received 'soon'" in err


def test_an_idle_cluster_is_warned_of_once(env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TFCLOUD_CLUSTER_IDLE_WARN", "1s")
    assert main(["cluster", "create", "forgotten", *SHAPE]) == 0
    while time.time() - _start(env, "forgotten") < 1.5:
        time.sleep(0.1)
    capsys.readouterr()
    assert main(["cluster", "list"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("Warning: cluster forgotten has run no job for ")
    assert "it bills while it exists. Delete it: tfcloud cluster delete forgotten --region us-central1" in err
    assert main(["cluster", "list"]) == 0
    assert "Warning" not in capsys.readouterr().err  # said once (a day)
    monkeypatch.setenv("TFCLOUD_CLUSTER_IDLE_WARN", "off")
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "other"))
    assert main(["cluster", "list"]) == 0
    assert "Warning" not in capsys.readouterr().err


def test_a_verb_that_talks_to_vertex_ai_warns_of_an_idle_cluster_once(
        env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`tfcloud status`, `list`, `cost` of Vertex AI jobs say the warning too (VertexTarget.notices), once a day a
    cluster; local jobs' verbs never look."""
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TFCLOUD_CLUSTER_IDLE_WARN", "1s")
    assert main(["cluster", "create", "left-on", *SHAPE]) == 0
    job = _submit(env, tmp_path, chief_config="CPU")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    while time.time() - _start(env, "left-on") < 1.5:
        time.sleep(0.1)
    capsys.readouterr()
    assert main(["status", job.job_id]) == 0
    assert "Warning: cluster left-on has run no job for " in capsys.readouterr().err
    assert main(["status", job.job_id]) == 0
    assert main(["list", "--vertex"]) == 0
    assert main(["cost", job.job_id]) == 0
    assert "Warning" not in capsys.readouterr().err  # once
