"""Capacity fallback on the emulator (``--fallback``, tfcloud/google/vertex/fallback.py): a region out of stock
(the emulator's ``stockout``, as Vertex AI reports it) moves the job to its first alternative that has VMs, with
the same image; an attempt left QUEUED longer than ``--fallback-after`` is cancelled before the next is created;
without ``--fallback`` the failure names capacity and the flag. The real aiplatform_v1 clients, nothing patched;
the emulator in process mode, and once in Docker mode (the replica a container of the job's image)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud.cli import main
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState
from tfcloud.view.outcome import failure

IMAGE = "localhost:5000/tfcloud/fallback:test"
PROJECT = "tfcloud-test"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(
        project=PROJECT, storage=False, entrypoints={IMAGE: [sys.executable, "-c", "print('trained')"]}
    ) as emu:
        yield emu


@pytest.fixture
def env(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    yield emulator
    emulator.faults.clear()


def _submit(env: Any, tmp_path: Path, **options: Any) -> VertexJob:
    """The job as `tfcloud submit --vertex` makes it (its image already built), through the target's backend."""
    return _submit_image(env, tmp_path, IMAGE, **options)


def _jobs(env: Any, region: str, tmp_path: Path) -> list[Any]:
    """The test's jobs in ``region`` (the emulator is the module's: each test's jobs carry its own name)."""
    client = env.job_client()
    try:
        return [
            j
            for j in client.list_custom_jobs(parent=f"projects/{PROJECT}/locations/{region}")
            if j.display_name == tmp_path.name
        ]
    finally:
        client.transport.close()


def test_a_region_out_of_stock_runs_the_job_in_its_first_alternative_with_the_same_image(
    env: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env.faults.stockout("us-central1")
    env.faults.stockout("europe-west4", spot=True)  # the first alternative asks for Spot VMs there: none either
    with caplog.at_level(logging.WARNING, logger="tfcloud"):
        job = _submit(
            env, tmp_path, fallback=["region=europe-west4,spot=true", "region=europe-west4", "region=us-east1"]
        )
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    assert job.name.split("/")[3] == "europe-west4"
    (first,) = _jobs(env, "us-central1", tmp_path)
    spot, ran = sorted(_jobs(env, "europe-west4", tmp_path), key=lambda j: j.create_time)
    assert ran.name == job.name and _jobs(env, "us-east1", tmp_path) == []  # the third was never needed
    assert [j.state.name for j in (first, spot, ran)] == ["JOB_STATE_FAILED", "JOB_STATE_FAILED", "JOB_STATE_SUCCEEDED"]
    assert first.error.code == spot.error.code == 8  # RESOURCE_EXHAUSTED
    first_id = first.name.rsplit("/", 1)[1]
    assert dict(first.labels)["tfcloud-attempt"] == "1" and "tfcloud-fallback-of" not in first.labels
    assert dict(ran.labels)["tfcloud-attempt"] == "3" and dict(ran.labels)["tfcloud-fallback-of"] == first_id
    assert spot.job_spec.scheduling.strategy.name == "SPOT" and ran.job_spec.scheduling.strategy.name != "SPOT"
    images = {j.job_spec.worker_pool_specs[0].container_spec.image_uri for j in (first, spot, ran)}
    assert images == {IMAGE}  # one image, no rebuild
    said = [r.getMessage() for r in caplog.records]
    assert any(
        m.startswith(
            f"Job {first_id} in us-central1 found no capacity: Resources are insufficient in "
            "region: us-central1; trying fallback 1 (region=europe-west4, spot=True)."
        )
        for m in said
    ), said
    assert any(
        m.startswith(f"Fallback 2 (region=europe-west4) got its VMs: job {job.job_id} runs in europe-west4.")
        for m in said
    ), said


def test_an_attempt_queued_past_fallback_after_is_cancelled_before_the_next(
    env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env.faults.stockout("us-central1", queued=True)  # as for want of quota: the job waits QUEUED
    job = _submit(env, tmp_path, fallback=["region=europe-west4"], fallback_after="1s")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    (first,) = _jobs(env, "us-central1", tmp_path)
    (second,) = _jobs(env, "europe-west4", tmp_path)
    assert first.state.name == "JOB_STATE_CANCELLED" and second.name == job.name
    # at most one attempt alive: the first had ended when the second was created
    assert first.end_time <= second.create_time
    first_id = first.name.rsplit("/", 1)[1]
    assert main(["status", job.name]) == 0  # status says which attempt this is, and of what
    assert f"attempt   2: fallback 1 of job {first_id}, which found no capacity" in capsys.readouterr().out


def test_without_fallback_a_stockout_fails_naming_capacity_and_the_flag(env: Any, tmp_path: Path) -> None:
    env.faults.stockout("us-central1")
    job = _submit(env, tmp_path)
    assert job.wait(timeout=60).state is JobState.FAILED
    error = failure(job)
    assert error is not None
    assert "Resources are insufficient in region: us-central1." in str(error)
    assert "capacity, not your code" in str(error) and "--fallback region=europe-west4" in str(error)


def test_when_every_alternative_is_out_of_stock_the_last_attempt_fails(env: Any, tmp_path: Path) -> None:
    for region in ("us-central1", "europe-west4"):
        env.faults.stockout(region)
    job = _submit(env, tmp_path, fallback=["region=europe-west4"])
    assert job.wait(timeout=60).state is JobState.FAILED
    assert job.name.split("/")[3] == "europe-west4"
    assert [j.state.name for j in _jobs(env, "us-central1", tmp_path)] == ["JOB_STATE_FAILED"]


def test_each_alternative_is_checked_at_plan_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    base = ["submit", str(script), "--vertex", "--project", PROJECT, "--chief-config", "CPU", "--dry-run"]
    assert main([*base, "--fallback", "region=europe-west4", "--fallback", "region=us-east1,spot=true"]) == 0
    out = capsys.readouterr().err  # the plan is for people: on stderr
    assert "Note: Fallback 1: region=europe-west4 -> europe-west4; " in out
    assert "Note: Fallback 2: region=us-east1, spot=True -> us-east1; " in out
    bad = {
        "region=mars-west1": "Invalid `fallback[1] (region=mars-west1): region`: expected a region Vertex AI "
        "serves custom training in",
        "zone=x": "Invalid `fallback[1]`: expected keys among region, chief_config, worker_config, spot, "
        "reservation, received 'zone'.",
        "chief_config=A100_1X,region=europe-west1": "Invalid `fallback[1] (chief_config=A100_1X, "
        "region=europe-west1): chief_config`: expected an accelerator "
        "Vertex AI serves for training in europe-west1",
        "worker_config=T4_1X": "Invalid `fallback[1].worker_config`: expected a pool the job has",
        "spot=maybe": "Invalid `fallback[1].spot`: expected true or false",
    }
    for alternative, message in bad.items():
        assert main([*base, "--fallback", alternative]) == 2
        assert message in capsys.readouterr().err, alternative
    assert main([*base, "--fallback-after", "5m"]) == 2
    assert "Invalid `fallback_after`: expected to be left unset without --fallback" in capsys.readouterr().err
    assert main([*base, "--fallback", "region=europe-west4", "--persistent-resource", "c1"]) == 2
    assert "Invalid `fallback`: expected to be left unset on a persistent resource" in capsys.readouterr().err


# --- Docker mode: the replicas are containers of the job's image on the session's engine ---------------------------
@pytest.fixture(scope="module")
def docker_env(engine: Any) -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(project=PROJECT, storage=False, docker_host=engine.docker_host) as emu:
        yield emu


@pytest.mark.docker
def test_in_docker_mode_a_stockout_then_a_queue_move_the_job_to_the_one_alternative_that_runs(
    docker_env: Any, python_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The first region is out of stock (fails), the second keeps the job QUEUED past --fallback-after (cancelled
    before the next is created), the third runs the job's one image as a container; without --fallback the same
    stockout fails naming capacity and the flag."""
    for key, value in docker_env.settings.env.items():
        monkeypatch.setenv(key, value)
    docker_env.faults.stockout("us-central1")
    docker_env.faults.stockout("europe-west4", queued=True)
    try:
        with caplog.at_level(logging.WARNING, logger="tfcloud"):
            job = _submit_image(
                docker_env,
                tmp_path,
                python_base,
                fallback=["region=europe-west4", "region=us-east1"],
                fallback_after="1s",
            )
        assert job.wait(timeout=120).state is JobState.SUCCEEDED
        (first,) = _jobs(docker_env, "us-central1", tmp_path)
        (queued,) = _jobs(docker_env, "europe-west4", tmp_path)
        (ran,) = _jobs(docker_env, "us-east1", tmp_path)
        assert ran.name == job.name
        assert [j.state.name for j in (first, queued, ran)] == [
            "JOB_STATE_FAILED",
            "JOB_STATE_CANCELLED",
            "JOB_STATE_SUCCEEDED",
        ]
        assert queued.end_time <= ran.create_time  # never two attempts alive: exactly one ran
        images = {j.job_spec.worker_pool_specs[0].container_spec.image_uri for j in (first, queued, ran)}
        assert images == {python_base}  # one image, no rebuild
        said = [r.getMessage() for r in caplog.records]
        assert any(
            m.startswith(f"Fallback 2 (region=us-east1) got its VMs: job {job.job_id} runs in us-east1.") for m in said
        ), said

        alone = tmp_path / "alone"
        alone.mkdir()
        failed = _submit_image(docker_env, alone, python_base)
        assert failed.wait(timeout=60).state is JobState.FAILED
        error = str(failure(failed))
        assert "Resources are insufficient in region: us-central1." in error
        assert "capacity, not your code" in error and "--fallback region=" in error
    finally:
        docker_env.faults.clear()


def _submit_image(env: Any, tmp_path: Path, image: str, **options: Any) -> VertexJob:
    """The job as `tfcloud submit --vertex` makes it, ``image`` its built image, through the target's backend."""
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(
        entry_point=str(script),
        target="vertex",
        project=PROJECT,
        region="us-central1",
        emulator_host=env.endpoint,
        distribution_strategy=None,
        chief_config="CPU",
        display_name=tmp_path.name,
        **options,
    )
    job, _ = prepare(spec, target, tmp_path)
    backend = VertexBackend(
        settings=Settings(target="vertex"),
        target=target,  # type: ignore[arg-type]
        retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10),
    )
    return backend.submit(replace(job, image=ImageRef(uri=image)))
