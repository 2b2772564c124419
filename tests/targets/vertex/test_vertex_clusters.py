"""Clusters are safe to manage (issue 29): ``tfcloud cluster delete`` checks the ID first and refuses while jobs run
on the cluster (naming them; ``--force`` overrides); ``create`` checks every field as a job would and is idempotent
by submission, so that a retried create never reports someone else's cluster and a lost answer is resolved by
looking; a delete whose answer was lost but whose cluster is gone succeeds. On the emulator with injected faults,
the real aiplatform_v1 clients, nothing patched."""

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
from tfcloud.errors import SubmitError, TfcloudError, ValidationError
from tfcloud.flow import clusters
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState
from tfcloud.targets import VertexTarget

IMAGE = "localhost:5000/tfcloud/clusters:test"
SA = "trainer@tfcloud-test.iam.gserviceaccount.com"
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
    for info in _clusters(emulator):  # each test starts with none
        clusters.delete_cluster(info, force=True)


@pytest.fixture
def backend(env: Any) -> Iterator[VertexBackend]:
    where = VertexTarget(project="tfcloud-test", region="us-central1", emulator_host=env.endpoint)
    backend = VertexBackend(settings=Settings(target="vertex"), target=where,
                            retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
    yield backend
    backend.close()


def _clusters(emulator: Any) -> list[str]:
    client = emulator.persistent_resource_client()
    try:
        return sorted(r.name.rsplit("/", 1)[-1] for r in client.list_persistent_resources(parent=emulator.parent))
    finally:
        client.transport.close()


def _labels(emulator: Any, cluster_id: str) -> dict[str, str]:
    client = emulator.persistent_resource_client()
    try:
        return dict(client.get_persistent_resource(name=f"{emulator.parent}/persistentResources/{cluster_id}").labels)
    finally:
        client.transport.close()


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


# --- delete -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["../../x", "x/../../y", "pr1\n", "", "projects/other-proj/locations/us-central1/"
                                 "persistentResources/c1", "projects/tfcloud-test/locations/europe-west4/"
                                 "persistentResources/c1"])
def test_delete_checks_the_id_before_any_call(env: Any, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    env.faults.fail("ListCustomJobs", code="PERMISSION_DENIED", times=5)  # a call made would show as exit 1
    env.faults.fail("DeletePersistentResource", code="PERMISSION_DENIED", times=5)
    assert main(["cluster", "delete", bad]) == 2
    err = capsys.readouterr().err
    assert "Invalid `cluster_id`" in err and "Traceback" not in err
    with pytest.raises(ValidationError) as caught:
        clusters.delete_cluster(bad)
    assert caught.value.field == "cluster_id"


def test_delete_refuses_while_a_job_runs_on_it_naming_the_job(env: Any, backend: VertexBackend, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "c21", *SHAPE]) == 0
    env.faults.hold_queued()
    job = _submit(backend, tmp_path, chief_config="CPU", persistent_resource="c21")
    capsys.readouterr()
    assert main(["cluster", "delete", "c21"]) == 2
    err = capsys.readouterr().err
    assert "Invalid `cluster_id`: expected a cluster no job runs on" in err
    assert job.job_id.rsplit("/", 1)[-1] in err and "--force" in err
    assert _clusters(env) == ["c21"]
    assert main(["cluster", "delete", "c21", "--force"]) == 0
    assert capsys.readouterr().out == "c21\tdeleted\n"
    assert _clusters(env) == []


def test_delete_after_the_jobs_ended_deletes(env: Any, backend: VertexBackend, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "c22", *SHAPE]) == 0
    job = _submit(backend, tmp_path, chief_config="CPU", persistent_resource="c22")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    assert main(["cluster", "delete", "c22"]) == 0
    assert _clusters(env) == []


def test_a_delete_whose_answer_was_lost_succeeds(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "c23", *SHAPE]) == 0
    capsys.readouterr()
    env.faults.fail("DeletePersistentResource", code="UNAVAILABLE", after=True, times=1)
    assert main(["cluster", "delete", "c23"]) == 0
    assert capsys.readouterr().out == "c23\tdeleted\n"
    assert _clusters(env) == []


def test_a_delete_whose_answers_are_all_lost_looks(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "c24", *SHAPE]) == 0
    capsys.readouterr()
    env.faults.fail("DeletePersistentResource", code="UNAVAILABLE", after=True, times=1000)
    assert main(["cluster", "delete", "c24"]) == 0  # the last look finds it gone
    assert _clusters(env) == []


def test_delete_of_a_missing_cluster_is_not_found(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "delete", "never-made"]) == 2
    assert "not found" in capsys.readouterr().err


# --- create -------------------------------------------------------------------------------------------------
def test_a_retried_create_never_reports_someone_elses_cluster(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "shared", *SHAPE]) == 0  # someone else's
    theirs = _labels(env, "shared")
    capsys.readouterr()
    env.faults.fail("CreatePersistentResource", code="UNAVAILABLE", times=1)  # one transient error first
    assert main(["cluster", "create", "shared", "--chief-config", "T4_1X"]) == 1
    err = capsys.readouterr().err
    assert "already exists that this command did not create; nothing was created" in err
    assert _clusters(env) == ["shared"] and _labels(env, "shared") == theirs


def test_a_create_whose_look_up_goes_unanswered_says_the_cluster_exists(
        env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Created, then Vertex AI stops answering the look-ups: exit 3, saying the cluster exists (and bills) and how to
    see and delete it."""
    env.faults.fail("GetPersistentResource", code="UNAVAILABLE", times=1000)
    assert main(["cluster", "create", "c31", *SHAPE]) == 3
    err = capsys.readouterr().err
    assert "Cluster c31 was created, but Vertex AI stopped answering" in err and "it exists" in err
    assert "tfcloud cluster list --region us-central1" in err and "tfcloud cluster delete c31" in err
    env.faults.clear()
    assert _clusters(env) == ["c31"]


def test_a_create_whose_answer_was_lost_is_found_by_looking(env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    env.faults.fail("CreatePersistentResource", code="UNAVAILABLE", after=True, times=1)
    assert main(["cluster", "create", "lost", *SHAPE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "RUNNING"
    assert _clusters(env) == ["lost"]


def test_a_create_whose_answers_are_all_lost_is_found_by_looking(env: Any,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    env.faults.fail("CreatePersistentResource", code="UNAVAILABLE", after=True, times=1000)
    assert main(["cluster", "create", "lost-all", *SHAPE]) == 0
    assert _clusters(env) == ["lost-all"]


BAD_CREATES = [
    (["--network", "my-vpc"], "network"),
    (["--network", "projects/1/global/networks/vpc\n"], "network"),
    (["--display-name", "team\ncluster"], "display_name"),
    (["--display-name", "x" * 200], "display_name"),
    (["--display-name", " "], "display_name"),
    (["--chief-config", "TPU"], "chief_config"),
    (["--worker-config", "TPU", "--worker-count", "2"], "worker_count"),
    (["--label", "tfcloud-submission=x"], "labels"),
    (["--label", "Team=x"], "labels"),
    (["--worker-count", "-1"], "worker_count"),
    (["--chief-config", "A100_1X", "--region", "europe-west2"], "machine"),  # tfcloud.google.rules: not served there
]


@pytest.mark.parametrize(("args", "field"), BAD_CREATES, ids=[f"{f}-{i}" for i, (_, f) in enumerate(BAD_CREATES)])
def test_create_checks_every_field_before_creating(env: Any, args: list[str], field: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "create", "checked", *args]) == 2
    err = capsys.readouterr().err
    assert f"Invalid `{field}`" in err and "Traceback" not in err
    assert _clusters(env) == []


@pytest.mark.parametrize("bad", ["../../x", "c1\n", "C1", "x" * 64])
def test_the_sdk_checks_its_input(env: Any, bad: str) -> None:
    with pytest.raises(ValidationError) as caught:
        clusters.create_cluster(bad)
    assert caught.value.field == "cluster_id"
    with pytest.raises(TfcloudError):
        clusters.create_cluster("ok", display_name="a\tb")
    with pytest.raises(ValidationError):
        clusters.delete_cluster("ok", force="yes")  # type: ignore[arg-type]
    assert _clusters(env) == []


# --- a job's service account on a cluster ------------------------------------------------------------------------
def test_a_job_with_a_service_account_needs_a_cluster_that_enables_it(env: Any, backend: VertexBackend,
                                                                      tmp_path: Path) -> None:
    assert main(["cluster", "create", "plain", *SHAPE]) == 0
    with pytest.raises(SubmitError, match="enable_custom_service_account"):
        _submit(backend, tmp_path, chief_config="CPU", persistent_resource="plain", service_account=SA)
    assert main(["cluster", "create", "own-sa", *SHAPE, "--custom-service-account"]) == 0
    with pytest.raises(SubmitError, match="service_account is required"):
        _submit(backend, tmp_path, chief_config="CPU", persistent_resource="own-sa")
    job = _submit(backend, tmp_path, chief_config="CPU", persistent_resource="own-sa", service_account=SA)
    assert job.wait(timeout=60).state is JobState.SUCCEEDED


# --- beside clusters: a replica the job lacks ------------------------------------------------------------------
def test_logs_of_a_replica_the_job_lacks_is_refused_naming_those_it_has(
        env: Any, backend: VertexBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = _submit(backend, tmp_path, chief_config="CPU", worker_count=1, worker_config="CPU")
    assert job.wait(timeout=60).state is JobState.SUCCEEDED
    capsys.readouterr()
    assert main(["logs", job.job_id, "--replica", "worker-99"]) == 2
    err = capsys.readouterr().err
    assert "Invalid `--replica`: expected one of the job's replicas: chief-0, worker-0, received 'worker-99'" in err
    assert main(["logs", job.job_id, "--replica", "worker-0"]) == 0


# --- a job on a cluster: looked up before anything is built or uploaded ------------------------------------------
@pytest.mark.parametrize(("args", "field", "says"), [
    (["--persistent-resource", "nosuch"], "persistent_resource", "tfcloud cluster create nosuch"),
    (["--persistent-resource", "c31", "--worker-count", "1", "--worker-config", "T4_1X"], "worker_config",
     "n1-standard-8 + 1 x NVIDIA_TESLA_T4"),
    (["--persistent-resource", "c31", "--service-account", SA], "service_account", "--custom-service-account"),
])
def test_a_job_on_a_cluster_that_cannot_hold_it_is_refused_before_anything_is_built(
        env: Any, tmp_path: Path, args: list[str], field: str, says: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", "localhost:1/nowhere")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert main(["cluster", "create", "c31", *SHAPE]) == 0
    jobs = env.job_client()
    try:
        before = list(jobs.list_custom_jobs(parent=env.parent))
        script = tmp_path / "train.py"
        script.write_text("print('trained')\n")
        capsys.readouterr()
        # A Docker engine that does not exist: nothing may be built (the lookup comes first).
        code = main(["submit", str(script), "--vertex", "--chief-config", "CPU", *args])
        err = capsys.readouterr().err
        assert code == 2, err
        assert f"Invalid `{field}`" in err and says in err and "Traceback" not in err, err
        assert list(jobs.list_custom_jobs(parent=env.parent)) == before
    finally:
        jobs.transport.close()


def test_the_cluster_verbs_take_the_place_as_every_verb_does(env: Any, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--vertex, --project, --region, --emulator-host and -o reach the emulator with no TFCLOUD_EMULATOR_HOST set;
    a job option and another target are refused (exit 2)."""
    monkeypatch.delenv("TFCLOUD_EMULATOR_HOST")
    place = ["--vertex", "--emulator-host", env.endpoint, "--project", "tfcloud-test", "--region", "us-central1"]
    assert main(["cluster", "create", "c41", *SHAPE, *place]) == 0
    capsys.readouterr()
    assert main(["cluster", "list", "--vertex", "--emulator-host", env.endpoint, "--json"]) == 0
    assert [row["cluster_id"] for row in json.loads(capsys.readouterr().out)] == ["c41"]
    assert main(["cluster", "list", "-o", f"emulator_host={env.endpoint}"]) == 0
    assert capsys.readouterr().out.startswith("c41\t")
    assert main(["cluster", "list", *place, "-o", "spot=1"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "Error: Invalid `spot`: expected a place option of the vertex target (project, region, emulator_host), "
        "received 'spot, a job option'.")
    assert main(["cluster", "list", "--local"]) == 2  # a cluster is a Vertex AI persistent resource
    assert "No such option: --local" in capsys.readouterr().err
    assert main(["cluster", "delete", "c41", *place]) == 0
    assert capsys.readouterr().out == "c41\tdeleted\n"
