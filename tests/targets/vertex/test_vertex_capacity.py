"""The Vertex AI target's capacity options end to end on the emulator: bad combinations refused before anything
is created (exit 2, both options named), a Flex Start job whose max wait runs out, and a persistent resource's life
through ``tfcloud cluster`` with a job on it. The real aiplatform_v1 clients, nothing patched."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud.cli import main
from tfcloud.errors import ValidationError
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job, build_spec
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState
from tfcloud.targets import VertexTarget
from tfcloud.view.outcome import failure

IMAGE = "localhost:5000/tfcloud/capacity:test"
SA = "trainer@tfcloud-test.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    # Replicas need no TensorFlow here: the image runs a one-line script.
    with Emulator(project="tfcloud-test", storage=False,
                  entrypoints={IMAGE: [sys.executable, "-c", "print('trained')"]}) as emu:
        yield emu


@pytest.fixture
def env(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    yield emulator
    emulator.faults.clear()


@pytest.fixture
def backend(env: Any) -> Iterator[VertexBackend]:
    where = VertexTarget(project="tfcloud-test", region="us-central1", emulator_host=env.endpoint)
    backend = VertexBackend(settings=Settings(target="vertex"), target=where,
                            retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
    yield backend
    backend.close()


def _submit(backend: VertexBackend, tmp_path: Path, **spec_kwargs: object) -> VertexJob:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(entry_point=str(script), target="vertex", project="tfcloud-test", region="us-central1",
                             emulator_host=backend.target.emulator_host, distribution_strategy=None, **spec_kwargs)
    job, _ = prepare(spec, target, tmp_path)
    # The job's target (its options beside the fixture's place) makes the backend that submits it, as the SDK's
    # submit does: the backend sends the request its target describes.
    own = VertexBackend(settings=Settings(target="vertex"), target=target, retry=backend.retry)
    return own.submit(replace(job, image=ImageRef(uri=IMAGE)))


def _job_count(emulator: Any) -> int:
    client = emulator.job_client()
    try:
        return len(list(client.list_custom_jobs(parent=emulator.parent)))
    finally:
        client.transport.close()


BAD = [
    (["--max-wait", "30m"], "max_wait", "--scheduling flex-start"),
    (["--spot", "--scheduling", "flex-start", "--chief-config", "A100_1X"], "scheduling", "--spot"),
    (["--spot", "--reservation", "us-central1-a/res", "--service-account", SA], "reservation", "--spot"),
    (["--scheduling", "flex-start", "--chief-config", "A100_1X", "--reservation", "any", "--service-account", SA],
     "reservation", "--scheduling flex-start"),
    (["--persistent-resource", "my-cluster", "--spot"], "persistent_resource", "--scheduling/--spot"),
    (["--persistent-resource", "my-cluster", "--reservation", "any", "--service-account", SA],
     "persistent_resource", "--reservation"),
    (["--disable-retries", "--restart-on-worker-restart"], "disable_retries", "--restart-on-worker-restart"),
    (["--disable-retries", "--max-restarts", "2"], "disable_retries", "--max-restarts"),
    (["--tensorboard", "42", "--output-dir", "gs://bkt/out"], "service_account", "--tensorboard"),
    (["--tensorboard", "42", "--service-account", SA], "base_output_dir", "--tensorboard"),
    (["--experiment-run", "run-1"], "experiment_run", "--experiment"),
    # The SDK's checks (google-cloud-aiplatform jobs.py): no TensorBoard beside an experiment; an experiment needs
    # a service account. (A reservation needs none: Google states no such rule.)
    (["--experiment", "exp", "--tensorboard", "42", "--service-account", SA, "--output-dir", "gs://bkt/out"],
     "tensorboard", "--experiment"),
    (["--experiment", "exp"], "service_account", "--service-account"),
    (["--scheduling", "flex-start", "--chief-config", "A100_1X", "--worker-count", "1", "--worker-config",
      "H100_1X"], "worker_config", "--scheduling flex-start"),
]


@pytest.mark.parametrize(("args", "field", "other"), BAD, ids=[b[1] + "-" + b[0][0].lstrip("-") for b in BAD])
def test_combinations_vertex_refuses_exit_2_naming_both_and_create_nothing(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], field: str,
        other: str) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    before = _job_count(env)
    assert main(["submit", str(script), "--vertex", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Invalid `{field}`: expected ")
    assert other in err  # the other option, in the message or the hint that fixes it
    assert _job_count(env) == before


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"scheduling": "later"}, "Invalid `scheduling`: expected one of standard, spot, flex-start, received 'later'."),
    ({"scheduling": "flex-start", "chief_config": "A100_1X", "max_wait": "forever"},
     "Invalid `max_wait`: expected a duration such as 30m, 6h or 1d (or seconds), at most 14 days; 0 waits as long "
     "as it takes, received 'forever'."),
    ({"reservation": "projects/p-12345/zones/europe-west4-a/reservations/r", "service_account": SA},
     "Invalid `reservation`: expected a reservation in a zone of the job's region us-central1, received "
     "'projects/p-12345/zones/europe-west4-a/reservations/r'."),
    ({"persistent_resource": "Bad_Name"}, "Invalid `persistent_resource`: expected a persistent resource ID (1 to "
     "63 lowercase letters, digits or '-', starting with a letter) or "
     "projects/PROJECT/locations/REGION/persistentResources/ID, received 'Bad_Name'."),
    ({"tensorboard": "projects/p-12345/locations/europe-west4/tensorboards/1", "service_account": SA,
      "base_output_dir": "gs://bkt/out"},
     "Invalid `tensorboard`: expected a TensorBoard instance in the job's region us-central1, received "
     "'projects/p-12345/locations/europe-west4/tensorboards/1'."),
    ({"scheduling": "flex-start", "chief_config": "A100_1X", "timeout": 8 * 86400},
     "Invalid `timeout`: expected at most 604800 seconds (7 days) with scheduling=\"flex-start\", received 691200."),
])
def test_each_option_is_checked(script: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as err:
        build_spec(entry_point=str(script), target="vertex", region="us-central1", **kwargs)
    assert err.value.message == message


@pytest.mark.parametrize("option", ["scheduling", "reservation", "persistent_resource", "tensorboard", "experiment"])
def test_vertex_options_are_refused_elsewhere(script: Path, option: str) -> None:
    with pytest.raises(ValidationError) as err:
        build_spec(entry_point=str(script), target="local", **{option: "standard" if option == "scheduling" else "x"})
    assert err.value.field == option and "(it is an option of: vertex)" in err.value.message


def test_spot_is_scheduling_spot(script: Path) -> None:
    one = build_job(entry_point=str(script), target="vertex", spot=True)[1]
    other = build_job(entry_point=str(script), target="vertex", scheduling="spot")[1]
    assert one == other and one.spot and one.scheduling is not None and one.scheduling.value == "SPOT"


def test_flex_start_job_fails_when_its_max_wait_runs_out(env: Any, backend: VertexBackend, tmp_path: Path) -> None:
    env.faults.exhaust_capacity(machine_type="a2-highgpu-1g")
    job = _submit(backend, tmp_path, chief_config="A100_1X", scheduling="flex-start", max_wait="1s")
    info = job.wait(timeout=60)
    assert info.state is JobState.FAILED
    error = failure(job)
    assert error is not None and "Resources are insufficient in region: us-central1. The job could not get its " \
                                 "resources within its max_wait_duration of 1s (FLEX_START)." in str(error)
    assert job.job.job_spec.scheduling.max_wait_duration.total_seconds() == 1


def test_a_cluster_lives_through_the_cli_and_runs_a_job(env: Any, backend: VertexBackend, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    shape = ["--chief-config", "CPU", "--worker-count", "1", "--worker-config", "CPU"]
    assert main(["cluster", "create", "team-cluster", *shape, "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["state"] == "RUNNING"
    assert [(p["pool_id"], p["machine_type"], p["replica_count"]) for p in created["pools"]] == [
        ("chief", "n1-standard-4", 1), ("worker", "n1-standard-4", 1)]
    assert created["price_per_hour_usd"] == pytest.approx(2 * 0.21849885)  # what it costs while it exists

    env.faults.exhaust_capacity()  # on-demand VMs are gone; the cluster's are held
    job = _submit(backend, tmp_path, chief_config="CPU", worker_count=1, worker_config="CPU",
                  persistent_resource="team-cluster")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    assert job.job.job_spec.persistent_resource_id == "team-cluster"

    assert main(["cluster", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("team-cluster\tRUNNING\tchief: 1 x n1-standard-4, worker: 1 x ")
    assert "\t$0.44/h while it exists (on demand, us-central1)\tidle " in listed  # idle since its job ended
    assert main(["cluster", "delete", "team-cluster"]) == 0
    assert capsys.readouterr().out == "team-cluster\tdeleted\n"
    assert main(["cluster", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["cluster", "delete", "team-cluster"]) == 2  # gone: not found, exit 2


def test_cluster_create_checks_before_creating(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "Bad_Id"]) == 2
    assert "Invalid `cluster_id`" in capsys.readouterr().err
    assert main(["cluster", "create", "ok-id", "--worker-count", "-1"]) == 2
    assert "Invalid `worker_count`" in capsys.readouterr().err
    assert main(["cluster", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
