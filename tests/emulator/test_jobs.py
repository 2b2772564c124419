"""Vertex AI JobService on the emulator, driven by the real ``aiplatform_v1.JobServiceClient``."""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

import psutil
import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex

from tests.emulator.conftest import wait_until

pytestmark = pytest.mark.emulator

TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}


def pool(code: str, count: int = 1, **container: Any) -> vertex.WorkerPoolSpec:
    return vertex.WorkerPoolSpec(
        replica_count=count,
        machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
        container_spec=vertex.ContainerSpec(image_uri="us-docker.pkg.dev/p/r/train:1",
                                            command=[sys.executable, "-c", code], **container),
    )


def custom_job(*pools: vertex.WorkerPoolSpec, name: str = "emulator-test", labels: dict[str, str] | None = None,
               **spec: Any) -> vertex.CustomJob:
    return vertex.CustomJob(display_name=name, labels=labels or {},
                            job_spec=vertex.CustomJobSpec(worker_pool_specs=pools, **spec))


def follow(jobs: Any, name: str, timeout: float = 60) -> tuple[Any, list[str]]:
    states: list[str] = []

    def done() -> Any:
        job = jobs.get_custom_job(name=name)
        if not states or states[-1] != job.state.name:
            states.append(job.state.name)
        return job if job.state.name in TERMINAL else None

    return wait_until(done, timeout), states


def job_id(job: Any) -> str:
    return str(job.name.rsplit("/", 1)[1])


def test_a_job_goes_from_queued_to_succeeded_with_names_and_timestamps_as_vertex_sets_them(
        emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("print('hi')")))
    number = emulator.settings.project_number
    assert re.fullmatch(rf"projects/{number}/locations/us-central1/customJobs/\d{{19}}", created.name)
    assert created.state == vertex.JobState.JOB_STATE_QUEUED
    assert created.create_time and not created.start_time

    finished, states = follow(jobs, created.name)

    assert states[0] in ("JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING")
    assert states[-1] == "JOB_STATE_SUCCEEDED"
    assert states == sorted(states, key=["JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING",
                                         "JOB_STATE_SUCCEEDED"].index)
    assert created.create_time <= finished.start_time <= finished.end_time <= finished.update_time
    assert not finished.error.code
    # Named by project number or id, the job is the same one.
    assert jobs.get_custom_job(name=created.name.replace(number, emulator.project)).name == created.name


def test_every_replica_gets_vertex_environment(emulator: Any, jobs: Any, tmp_path: Any) -> None:
    dump = (f"import json, os; open(os.path.join({str(tmp_path)!r}, os.environ['CLOUD_ML_JOB_ID'] + '-' + "
            "json.loads(os.environ['CLUSTER_SPEC'])['task']['type'] + str(json.loads(os.environ['CLUSTER_SPEC'])"
            "['task']['index'])), 'w').write(json.dumps(dict(os.environ)))")
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool(dump), pool(dump, 2), pool(dump), pool(dump),
        base_output_directory=vertex.GcsDestination(output_uri_prefix="gs://bucket/out")))
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_SUCCEEDED", finished.error

    env = {p.name: json.loads(p.read_text()) for p in tmp_path.iterdir()}
    assert sorted(env) == sorted(f"{job_id(created)}-workerpool{p}" for p in ("00", "10", "11", "20", "30"))
    worker = env[f"{job_id(created)}-workerpool11"]
    cluster_spec, tf_config = json.loads(worker["CLUSTER_SPEC"]), json.loads(worker["TF_CONFIG"])
    assert sorted(cluster_spec["cluster"]) == ["workerpool0", "workerpool1", "workerpool2", "workerpool3"]
    assert len(cluster_spec["cluster"]["workerpool1"]) == 2
    assert cluster_spec["task"] == {"type": "workerpool1", "index": 1}
    assert cluster_spec["environment"] == "cloud"
    assert cluster_spec["job"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] == "n1-standard-4"
    assert tf_config["cluster"] == {"chief": cluster_spec["cluster"]["workerpool0"],
                                    "worker": cluster_spec["cluster"]["workerpool1"],
                                    "ps": cluster_spec["cluster"]["workerpool2"]}
    assert tf_config["task"] == {"type": "worker", "index": 1, "trial": ""}
    assert json.loads(env[f"{job_id(created)}-workerpool30"]["TF_CONFIG"])["task"]["type"] == "evaluator"
    assert json.loads(env[f"{job_id(created)}-workerpool00"]["TF_CONFIG"])["task"]["type"] == "chief"
    assert worker["AIP_MODEL_DIR"] == "gs://bucket/out/model/"
    assert worker["AIP_CHECKPOINT_DIR"] == "gs://bucket/out/checkpoints/"
    assert worker["AIP_TENSORBOARD_LOG_DIR"] == "gs://bucket/out/logs/"
    addresses = [a for addrs in cluster_spec["cluster"].values() for a in addrs]
    assert len(set(addresses)) == 5 and all(a.startswith("127.0.0.1:") for a in addresses)


def test_a_replica_exiting_non_zero_fails_the_job_and_stops_the_others(emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("import time; time.sleep(60)"),
        pool("import sys; sys.exit(int(__import__('os').environ['CLUSTER_SPEC'][-3:-1] or 0) * 0 + 1)"),
    ))
    started = time.monotonic()
    finished, states = follow(jobs, created.name)
    assert time.monotonic() - started < 20
    assert states[-1] == "JOB_STATE_FAILED"
    assert finished.error.code == 3
    assert finished.error.message.startswith("The replica workerpool1-0 exited with a non-zero status of 1.")
    assert finished.end_time
    assert not _replica_processes(job_id(created))


def test_parameter_servers_are_stopped_when_the_chief_succeeds(emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("print('chief done')"), vertex.WorkerPoolSpec(), pool("import time; time.sleep(600)")))
    finished, _ = follow(jobs, created.name, timeout=30)
    assert finished.state.name == "JOB_STATE_SUCCEEDED"
    assert not _replica_processes(job_id(created))


def test_cancel_a_running_job(emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("import time; print('up', flush=True); time.sleep(600)")))
    wait_until(lambda: jobs.get_custom_job(name=created.name).state.name == "JOB_STATE_RUNNING")
    jobs.cancel_custom_job(name=created.name)
    assert jobs.get_custom_job(name=created.name).state.name in ("JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED")
    finished, states = follow(jobs, created.name)
    assert states[-1] == "JOB_STATE_CANCELLED"
    assert finished.error.code == 1
    assert not _replica_processes(job_id(created))
    with pytest.raises(exceptions.FailedPrecondition):
        jobs.cancel_custom_job(name=created.name)


def test_cancel_a_queued_job(emulator: Any, jobs: Any) -> None:
    emulator.faults.hold_queued()
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("print(1)")))
    time.sleep(0.5)
    assert jobs.get_custom_job(name=created.name).state.name == "JOB_STATE_QUEUED"
    jobs.cancel_custom_job(name=created.name)
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_CANCELLED" and not finished.start_time


def test_delete_a_finished_job_and_not_a_running_one(emulator: Any, jobs: Any) -> None:
    running = jobs.create_custom_job(parent=emulator.parent,
                                     custom_job=custom_job(pool("import time; time.sleep(600)")))
    with pytest.raises(exceptions.FailedPrecondition):
        jobs.delete_custom_job(name=running.name)
    jobs.cancel_custom_job(name=running.name)
    follow(jobs, running.name)
    jobs.delete_custom_job(name=running.name).result(timeout=30)
    with pytest.raises(exceptions.NotFound):
        jobs.get_custom_job(name=running.name)
    with pytest.raises(exceptions.NotFound):
        jobs.delete_custom_job(name=running.name)


def test_list_with_filter_and_paging(emulator: Any, jobs: Any) -> None:
    parent = f"projects/{emulator.project}/locations/europe-west4"
    names = [jobs.create_custom_job(parent=parent, custom_job=custom_job(
        pool("print(1)" if i % 2 == 0 else "import sys; sys.exit(2)"), name=f"listed-{i}",
        labels={"batch": "a" if i < 3 else "b"})).name for i in range(5)]
    for name in names:
        follow(jobs, name)

    first = jobs.list_custom_jobs(request={"parent": parent, "page_size": 2})
    page = next(iter(first.pages))
    assert len(page.custom_jobs) == 2 and page.next_page_token
    listed = [job.name for job in jobs.list_custom_jobs(request={"parent": parent, "page_size": 2})]
    # newest first, all pages (the session's emulator may hold other tests' jobs in this region: they come after)
    assert listed[:len(names)] == list(reversed(names))

    def matching(expression: str) -> list[str]:
        found = jobs.list_custom_jobs(request={"parent": parent, "filter": expression})
        return sorted(job.display_name for job in found)

    assert matching('state="JOB_STATE_FAILED"') == ["listed-1", "listed-3"]
    assert matching('display_name:"listed-*" AND labels.batch=b') == ["listed-3", "listed-4"]
    assert matching('NOT display_name="listed-0" AND state!="JOB_STATE_FAILED"') == ["listed-2", "listed-4"]
    assert matching("labels.batch:*") == [f"listed-{i}" for i in range(5)]
    assert matching('create_time>"2000-01-01T00:00:00Z"') == [f"listed-{i}" for i in range(5)]
    with pytest.raises(exceptions.InvalidArgument):
        matching("state=")


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (vertex.CustomJob(display_name="no-pools", job_spec=vertex.CustomJobSpec()), "worker_pool_specs"),
        (custom_job(pool("1"), name=""), "display_name"),
        (custom_job(pool("1", 2)), r"worker_pool_specs\[0\]\.replica_count; Message: expected exactly 1 replica"),
        (custom_job(vertex.WorkerPoolSpec(replica_count=1, container_spec=vertex.ContainerSpec(image_uri="i"))),
         "machine_type"),
        (custom_job(vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="m"))),
         "container_spec"),
    ],
)
def test_invalid_jobs_are_rejected_with_invalid_argument(emulator: Any, jobs: Any, job: Any, message: str) -> None:
    with pytest.raises(exceptions.InvalidArgument, match=message):
        jobs.create_custom_job(parent=emulator.parent, custom_job=job)


def test_malformed_names_and_missing_jobs(emulator: Any, jobs: Any) -> None:
    with pytest.raises(exceptions.InvalidArgument):
        jobs.create_custom_job(parent="projects/p", custom_job=custom_job(pool("1")))
    with pytest.raises(exceptions.InvalidArgument):
        jobs.get_custom_job(name=f"{emulator.parent}/customJobs/not-a-number")
    with pytest.raises(exceptions.NotFound):
        jobs.get_custom_job(name=f"{emulator.parent}/customJobs/123")
    with pytest.raises(exceptions.NotFound):
        jobs.cancel_custom_job(name=f"{emulator.parent}/customJobs/123")


def test_a_pool_without_a_command_fails_in_local_process_mode(emulator: Any, jobs: Any) -> None:
    spec = vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                 container_spec=vertex.ContainerSpec(image_uri="unknown-image"))
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(spec))
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_FAILED"
    assert "no command" in finished.error.message and "entrypoints=" in finished.error.message


def _replica_processes(job: str) -> list[psutil.Process]:
    """Processes still alive whose environment names this job (zombies are waited for by the runner)."""
    found = []
    for process in psutil.process_iter(["pid"]):
        try:
            if process.environ().get("CLOUD_ML_JOB_ID") == job and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_a_tpu_vm_request_is_accepted_and_read_back_with_its_topology(emulator: Any, jobs: Any) -> None:
    from pathlib import Path

    golden = Path(__file__).parent.parent / "golden" / "vertex" / "tpu_v5e_multihost.json"
    job = vertex.CustomJob.from_json(golden.read_text())
    job.job_spec.worker_pool_specs[0].container_spec.command = [sys.executable, "-c", "print('on the TPU VM')"]
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=job)
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_SUCCEEDED"
    (pool_0,) = finished.job_spec.worker_pool_specs
    assert (pool_0.machine_spec.machine_type, pool_0.machine_spec.tpu_topology) == ("ct5lp-hightpu-4t", "4x4")
