"""Docker mode: the replica containers of an emulator killed with SIGKILL are removed (by its reaper)."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

import pytest
from google.cloud import aiplatform_v1 as vertex

from tests.emulator.conftest import wait_until
from tests.emulator.test_lifecycle import PARENT, emulator_process, job_client
from tfcloud.emulator._reaper import INSTANCE_LABEL

pytestmark = [pytest.mark.emulator, pytest.mark.docker]


def test_sigkill_of_the_emulator_removes_its_replica_containers(engine: Any, python_base: str) -> None:
    client = engine.client()
    try:
        with emulator_process("--docker-host", engine.docker_host) as (process, endpoint, printed), \
                job_client(endpoint) as jobs:
            assert f"Replicas run on the Docker engine at {engine.docker_host}" in printed
            job = jobs.create_custom_job(parent=PARENT, custom_job=vertex.CustomJob(
                display_name="in-a-container", job_spec=vertex.CustomJobSpec(worker_pool_specs=[
                    vertex.WorkerPoolSpec(replica_count=1,
                                          machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                          container_spec=vertex.ContainerSpec(
                                              image_uri=python_base,
                                              command=["python3", "-c", "import time; time.sleep(600)"]))])))
            name = f"tfcloud-emulator-{job.name.rsplit('/', 1)[-1]}-workerpool0-0"
            running = wait_until(lambda: client.containers.list(filters={"name": name}), timeout=60)
            assert INSTANCE_LABEL in running[0].labels
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        wait_until(lambda: not client.containers.list(all=True, filters={"name": name}), timeout=60)
    finally:
        client.close()


def test_an_emulator_starting_removes_containers_whose_emulator_is_gone(engine: Any, python_base: str) -> None:
    from tfcloud.emulator import Emulator
    from tfcloud.emulator._reaper import PID_LABEL, owner_labels

    finished = subprocess.Popen(["true"])
    finished.wait()
    client = engine.client()
    sleep = ["python3", "-c", "import time; time.sleep(600)"]
    try:
        orphan = client.containers.run(python_base, sleep, detach=True, name="tfcloud-emulator-orphan",
                                       labels={**owner_labels("gone"), PID_LABEL: str(finished.pid)})
        owned = client.containers.run(python_base, sleep, detach=True, name="tfcloud-emulator-owned",
                                      labels=owner_labels("alive"))  # this process: its emulator is alive
        with Emulator(project="orphans", storage=False, docker_host=engine.docker_host):
            names = {c.name for c in client.containers.list(all=True)}
            assert orphan.name not in names
            assert owned.name in names
    finally:
        for name in ("tfcloud-emulator-orphan", "tfcloud-emulator-owned"):
            for container in client.containers.list(all=True, filters={"name": name}):
                container.remove(force=True)
        client.close()
