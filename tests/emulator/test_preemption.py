"""Preemption on the emulator, and restarts as Vertex AI does them: a preempted replica restarts alone by default,
the whole job restarts with ``scheduling.restart_job_on_worker_restart`` (what ``--max-restarts`` and ``--spot``
ask for), and nothing restarts with ``disable_retries``. With real TensorFlow: a MultiWorkerMirrored job from
tfcloud's own request and launcher loses its worker mid-training and finishes, resuming from the checkpoint."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform_v1 as vertex
from google.cloud.logging_v2.types import ListLogEntriesRequest

from tests.emulator.test_jobs import follow, job_id
from tfcloud.emulator import Emulator
from tfcloud.emulator.jobs import MAX_REPLICA_RESTARTS
from tfcloud.entry.launcher import render_launcher
from tfcloud.errors import ValidationError
from tfcloud.flow.validate import build_job
from tfcloud.google.vertex.request import custom_job_request, restart_scheduling

pytestmark = pytest.mark.emulator

SCRIPTS = Path(__file__).resolve().parent.parent / "targets" / "scripts"

# The worker says "ready" and waits to be preempted on its first start, then ends; the chief waits for it (as a
# MultiWorkerMirrored chief would) and says how often it started.
REPLICA = textwrap.dedent("""
    import json, os, sys, time
    task = json.loads(os.environ["TF_CONFIG"])["task"]["type"]
    shared = sys.argv[1]
    with open(os.path.join(shared, task + ".starts"), "a") as f:
        f.write("x")
    if task == "worker":
        if not os.path.exists(os.path.join(shared, "preempted-once")):
            open(os.path.join(shared, "preempted-once"), "w").close()
            print("ready", flush=True)
            time.sleep(60)
            sys.exit("not preempted")
        open(os.path.join(shared, "worker-done"), "w").close()
    else:
        while not os.path.exists(os.path.join(shared, "worker-done")):
            time.sleep(0.05)
    print("done", task, flush=True)
""")


@pytest.fixture(scope="module")
def gcs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gcs")


@pytest.fixture(scope="module")
def output_emulator(gcs_root: Path) -> Iterator[Emulator]:
    with Emulator(project="tfcloud-recovery", storage=False, local_output_root=gcs_root) as emulator:
        yield emulator


@pytest.fixture
def client(output_emulator: Emulator) -> Iterator[Any]:
    jobs = output_emulator.job_client()
    yield jobs
    jobs.transport.close()
    output_emulator.faults.clear()


def small_job(script: Path, shared: Path, scheduling: vertex.Scheduling | None, pools: int = 2) -> vertex.CustomJob:
    def pool() -> vertex.WorkerPoolSpec:
        return vertex.WorkerPoolSpec(
            replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
            container_spec=vertex.ContainerSpec(image_uri="local/r:1", command=[sys.executable, str(script)],
                                                args=[str(shared)]))

    spec = vertex.CustomJobSpec(worker_pool_specs=[pool() for _ in range(pools)])
    if scheduling is not None:
        spec.scheduling = scheduling
    return vertex.CustomJob(display_name="preempted", job_spec=spec)


def service_lines(emulator: Emulator, created: Any) -> list[str]:
    with emulator.logging_client() as logs:
        entries = logs.list_log_entries(request=ListLogEntriesRequest(
            resource_names=[f"projects/{emulator.project}"],
            filter=f'resource.labels.job_id="{job_id(created)}" AND resource.labels.task_name="service"'))
        return [entry.text_payload for entry in entries]


def task_lines(emulator: Emulator, created: Any, task: str) -> list[str]:
    with emulator.logging_client() as logs:
        entries = logs.list_log_entries(request=ListLogEntriesRequest(
            resource_names=[f"projects/{emulator.project}"], order_by="timestamp asc",
            filter=f'resource.labels.job_id="{job_id(created)}" AND resource.labels.task_name="{task}"'))
        return [entry.text_payload for entry in entries]


SCHEDULINGS = {
    # name: (scheduling, final state, chief starts, worker starts, what the service says)
    "default: the worker restarts alone": (None, "JOB_STATE_SUCCEEDED", 1, 2, "Restarting it (restart 1 of"),
    "restart_job_on_worker_restart: every replica restarts": (
        vertex.Scheduling(restart_job_on_worker_restart=True), "JOB_STATE_SUCCEEDED", 2, 2,
        "Restarting every replica of the job (restart_job_on_worker_restart; restart 1 of"),
    "disable_retries: the job fails": (
        vertex.Scheduling(restart_job_on_worker_restart=True, disable_retries=True), "JOB_STATE_FAILED", 1, 1,
        "Job failed. The replica workerpool1-0 exited with a non-zero status of 137. Termination reason: killed by "
        "signal 9."),
}


@pytest.mark.parametrize("case", list(SCHEDULINGS))
def test_a_preempted_replica_restarts_as_the_scheduling_says(output_emulator: Emulator, client: Any,
                                                             tmp_path: Path, case: str) -> None:
    scheduling, final, chief_starts, worker_starts, said = SCHEDULINGS[case]
    script = tmp_path / "replica.py"
    script.write_text(REPLICA)
    output_emulator.faults.preempt("workerpool1-0", when_line="ready")
    created = client.create_custom_job(parent=output_emulator.parent,
                                       custom_job=small_job(script, tmp_path, scheduling))
    finished, _ = follow(client, created.name, timeout=60)
    service = service_lines(output_emulator, created)
    assert finished.state.name == final, service
    assert "Replica workerpool1-0 was preempted: its VM was reclaimed." in service
    assert any(said in line for line in service), service
    assert len((tmp_path / "chief.starts").read_text()) == chief_starts
    assert len((tmp_path / "worker.starts").read_text()) == worker_starts


def test_a_replica_killed_by_a_signal_more_often_than_vertex_allows_fails_the_job(
        output_emulator: Emulator, client: Any, tmp_path: Path) -> None:
    script = tmp_path / "replica.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    created = client.create_custom_job(parent=output_emulator.parent,
                                       custom_job=small_job(script, tmp_path, None, pools=1))
    finished, _ = follow(client, created.name, timeout=60)
    assert finished.state.name == "JOB_STATE_FAILED"
    restarts = [line for line in service_lines(output_emulator, created) if "Restarting it" in line]
    assert len(restarts) == MAX_REPLICA_RESTARTS  # the sixth loss is final
    assert "killed by signal 9" in finished.error.message


def test_preempt_needs_a_line_or_a_time(output_emulator: Emulator) -> None:
    with pytest.raises(ValidationError, match="exactly one of when_line and after_s"):
        output_emulator.faults.preempt("workerpool0-0")


# -- the request: max_restarts and spot as Vertex AI's restart options ----------------------------------------
@pytest.mark.parametrize(("options", "expected"), [
    ({}, {}),
    ({"max_restarts": 0}, {"disable_retries": True}),
    ({"max_restarts": 0, "restart_on_worker_restart": True}, {"disable_retries": True}),
    ({"max_restarts": 3}, {"restart_job_on_worker_restart": True}),
    ({"spot": True}, {"restart_job_on_worker_restart": True, "strategy": "SPOT"}),
    ({"spot": True, "worker_count": 0, "worker_config": "auto"}, {"strategy": "SPOT"}),
    ({"spot": True, "max_restarts": 0}, {"disable_retries": True, "strategy": "SPOT"}),
])
def test_max_restarts_and_spot_become_the_requests_scheduling(tmp_path: Path, options: dict[str, Any],
                                                              expected: dict[str, Any]) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    spec, target = build_job(**{"entry_point": script, "target": "vertex", "chief_config": "CPU",
                                "worker_count": 1, "worker_config": "CPU", **options})
    request = custom_job_request(spec, target, image_uri="r/i:1", submission_id="s")
    assert request["job_spec"].get("scheduling", {}) == expected
    assert restart_scheduling(spec, target) == {k: v for k, v in expected.items() if k != "strategy"}
    parsed = vertex.CustomJob.from_json(json.dumps(request))  # the real message takes every field
    assert parsed.job_spec.scheduling.disable_retries is bool(expected.get("disable_retries"))


# -- real TensorFlow: tfcloud's request and launcher, a preempted worker, fit resumes ------------------------
@pytest.mark.tensorflow
def test_a_preempted_multi_worker_job_restarts_and_resumes_from_its_checkpoint(
        output_emulator: Emulator, client: Any, tmp_path: Path, gcs_root: Path) -> None:
    pytest.importorskip("tf_keras")
    script = SCRIPTS / "train_resume.py"
    spec, target = build_job(entry_point=script, target="vertex", chief_config="CPU", worker_count=1,
                             worker_config="CPU", max_restarts=1, base_output_dir="gs://recovery-bucket/run",
                             entry_point_args=["5", "worker-0", "3", "wait"],
                             env={"TF_CPP_MIN_LOG_LEVEL": "2", "GRPC_FAIL_FAST": "use_caller"})
    launcher = tmp_path / "tfcloud_launcher.py"
    launcher.write_text(render_launcher(spec, script=str(script)))
    request = vertex.CustomJob.from_json(json.dumps(custom_job_request(spec, target, image_uri="local/t:1",
                                                                       submission_id="s")))
    assert request.job_spec.scheduling.restart_job_on_worker_restart
    for pool in request.job_spec.worker_pool_specs:
        pool.container_spec.command = [sys.executable, str(launcher)]
    output_emulator.faults.preempt("workerpool1-0", when_line="PREEMPT_ME")

    created = client.create_custom_job(parent=output_emulator.parent, custom_job=request)
    finished, _ = follow(client, created.name, timeout=300)
    chief, worker = (task_lines(output_emulator, created, t) for t in ("workerpool0-0", "workerpool1-0"))
    assert finished.state.name == "JOB_STATE_SUCCEEDED", "\n".join([str(finished.error), *chief[-40:], *worker[-40:]])
    service = service_lines(output_emulator, created)
    assert any("Replica workerpool1-0 was preempted." in line and "Restarting every replica" in line
               for line in service), service
    for name, lines in (("chief-0", chief), ("worker-0", worker)):
        epochs = [int(t.split()[1]) for t in lines if t.startswith("EPOCH_BEGIN ")]
        assert epochs == [1, 2, 3, 3, 4, 5], lines[-60:]
        resumed = [t for t in lines if "model.fit resumed" in t]
        assert len(resumed) == 1 and re.search(r"resumed at epoch 3 from the backup in .*/checkpoints/fit-1\.$",
                                               resumed[0])
        assert f"DONE {name}" in lines
    # gs://recovery-bucket/run, where the replicas could write: AIP_MODEL_DIR and the rest.
    run = gcs_root / "recovery-bucket" / "run"
    assert (run / "model" / "model.keras").is_file()
    assert (run / "checkpoints" / "final" / "checkpoint").is_file()


# The chief waits to be preempted on its first start (a marker in AIP_CHECKPOINT_DIR), then writes its model.
CONTAINER_REPLICA = textwrap.dedent("""
    import os, sys, time
    marker = os.path.join(os.environ["AIP_CHECKPOINT_DIR"], "started-once")
    if not os.path.exists(marker):
        open(marker, "w").close()
        print("ready", flush=True)
        time.sleep(60)
        sys.exit("not preempted")
    with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
        f.write("trained")
""")


@pytest.mark.docker
def test_a_preempted_container_restarts_and_writes_to_the_local_output_root(engine: Any, python_base: str,
                                                                            tmp_path: Path) -> None:
    root = tmp_path / "gcs"
    with Emulator(project="tfcloud-recovery", storage=False, docker_host=engine.docker_host,
                  local_output_root=root) as emulator:
        emulator.faults.preempt("workerpool0-0", when_line="ready")
        pool = vertex.WorkerPoolSpec(
            replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
            container_spec=vertex.ContainerSpec(image_uri=python_base, command=["python3", "-c", CONTAINER_REPLICA]))
        jobs = emulator.job_client()
        try:
            created = jobs.create_custom_job(parent=emulator.parent, custom_job=vertex.CustomJob(
                display_name="container", job_spec=vertex.CustomJobSpec(
                    worker_pool_specs=[pool],
                    base_output_directory=vertex.GcsDestination(output_uri_prefix="gs://bucket/run"))))
            finished, _ = follow(jobs, created.name, timeout=120)
        finally:
            jobs.transport.close()
        service = service_lines(emulator, created)
    assert finished.state.name == "JOB_STATE_SUCCEEDED", service
    assert "Replica workerpool0-0 was preempted: its VM was reclaimed." in service
    assert (root / "bucket" / "run" / "model" / "model.txt").read_text() == "trained"
