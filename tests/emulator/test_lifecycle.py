"""The emulator as a process (``python -m tfcloud.emulator.cli start``): its replicas never outlive it, SIGKILL
included; ``--data-dir`` keeps jobs across a restart, and without it a restarted emulator says its jobs are gone."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import psutil
import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex
from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport
from google.cloud.aiplatform_v1.services.persistent_resource_service.transports.grpc import (
    PersistentResourceServiceGrpcTransport,
)
from google.cloud.devtools import cloudbuild_v1 as cloudbuild
from google.cloud.devtools.cloudbuild_v1.services.cloud_build.transports.grpc import CloudBuildGrpcTransport

from tests.emulator.conftest import wait_until

pytestmark = pytest.mark.emulator

PARENT = "projects/life-project/locations/us-central1"


@contextmanager
def emulator_process(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """``tfcloud emulator start ARGS`` as a child process; yields it, its gRPC endpoint and what it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.emulator.cli", "start", "--no-storage", "--project", "life-project", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300"})
    assert process.stdout is not None
    printed: list[str] = []
    try:
        for line in process.stdout:
            printed.append(line.rstrip("\n"))
            if line.startswith("Press Ctrl-C to stop."):
                break
        else:
            raise AssertionError(f"the emulator did not start: {printed}")
        endpoint = next(m.group(1) for line in printed if (m := re.search(r"listening on (127\.0\.0\.1:\d+)", line)))
        yield process, endpoint, printed
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(60)
        process.stdout.close()


@contextmanager
def build_client(endpoint: str) -> Iterator[Any]:
    client = cloudbuild.CloudBuildClient(transport=CloudBuildGrpcTransport(channel=grpc.insecure_channel(endpoint)))
    try:
        yield client
    finally:
        client.transport.close()


@contextmanager
def resource_client(endpoint: str) -> Iterator[Any]:
    client = vertex.PersistentResourceServiceClient(
        transport=PersistentResourceServiceGrpcTransport(channel=grpc.insecure_channel(endpoint)))
    try:
        yield client
    finally:
        client.transport.close()


@contextmanager
def job_client(endpoint: str) -> Iterator[Any]:
    client = vertex.JobServiceClient(transport=JobServiceGrpcTransport(channel=grpc.insecure_channel(endpoint)))
    try:
        yield client
    finally:
        client.transport.close()


def sleeper_job(marker: str) -> vertex.CustomJob:
    """A chief that starts a child of its own, and both sleep: ``marker`` is in both command lines."""
    code = ("import subprocess, sys, time; "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]]); "
            "print('started', flush=True); time.sleep(600)")
    return vertex.CustomJob(display_name="sleeper", job_spec=vertex.CustomJobSpec(worker_pool_specs=[
        vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                              container_spec=vertex.ContainerSpec(image_uri="local/sleeper",
                                                                  command=[sys.executable, "-c", code],
                                                                  args=[marker]))]))


def sleeper_study(marker: str) -> vertex.HyperparameterTuningJob:
    spec = vertex.StudySpec.ParameterSpec
    return vertex.HyperparameterTuningJob(
        display_name="sleeping-study", max_trial_count=1, parallel_trial_count=1,
        study_spec=vertex.StudySpec(
            metrics=[vertex.StudySpec.MetricSpec(metric_id="accuracy",
                                                 goal=vertex.StudySpec.MetricSpec.GoalType.MAXIMIZE)],
            parameters=[spec(parameter_id="units", integer_value_spec=spec.IntegerValueSpec(min_value=1, max_value=3),
                             scale_type=spec.ScaleType.UNIT_LINEAR_SCALE)]),
        trial_job_spec=sleeper_job(marker).job_spec)


def processes_with(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if marker in (process.info["cmdline"] or []) and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


def test_sigkill_of_the_emulator_leaves_no_replica_process() -> None:
    marker = f"tfcloud-lifecycle-{uuid.uuid4().hex}"
    with emulator_process() as (process, endpoint, _), job_client(endpoint) as jobs:
        job = jobs.create_custom_job(parent=PARENT, custom_job=sleeper_job(marker))
        wait_until(lambda: jobs.get_custom_job(name=job.name).state.name == "JOB_STATE_RUNNING")
        wait_until(lambda: len(processes_with(marker)) == 2)  # the replica and its own child
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        wait_until(lambda: not processes_with(marker))


def test_without_a_data_dir_a_restarted_emulator_says_earlier_jobs_are_gone() -> None:
    with emulator_process("--port", "0") as (_, endpoint, printed), job_client(endpoint) as jobs:
        assert any("starts empty" in line for line in printed)
        with pytest.raises(exceptions.NotFound) as caught:
            jobs.get_custom_job(name=f"{PARENT}/customJobs/1234567890123456789")
        assert "earlier jobs are gone" in caught.value.message
        assert "--data-dir" in caught.value.message
        with build_client(endpoint) as builds, pytest.raises(exceptions.NotFound, match="earlier builds are gone"):
            builds.get_build(project_id="life-project", id="0a1b2c3d-no-such-build")


def test_a_data_dir_keeps_jobs_across_a_restart(tmp_path: Path) -> None:
    marker = f"tfcloud-lifecycle-{uuid.uuid4().hex}"
    data = tmp_path / "state"
    with emulator_process("--data-dir", str(data)) as (process, endpoint, printed), job_client(endpoint) as jobs:
        assert not any("starts empty" in line for line in printed)
        done = jobs.create_custom_job(parent=PARENT, custom_job=vertex.CustomJob(
            display_name="quick", labels={"kept": "yes"}, job_spec=vertex.CustomJobSpec(worker_pool_specs=[
                vertex.WorkerPoolSpec(replica_count=1,
                                      machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                      container_spec=vertex.ContainerSpec(
                                          image_uri="local/quick", command=[sys.executable, "-c", "print(1)"]))])))
        wait_until(lambda: jobs.get_custom_job(name=done.name).state.name == "JOB_STATE_SUCCEEDED", timeout=60)
        running = jobs.create_custom_job(parent=PARENT, custom_job=sleeper_job(marker))
        wait_until(lambda: jobs.get_custom_job(name=running.name).state.name == "JOB_STATE_RUNNING")
        study = jobs.create_hyperparameter_tuning_job(parent=PARENT, hyperparameter_tuning_job=sleeper_study(marker))
        wait_until(lambda: jobs.get_hyperparameter_tuning_job(name=study.name).trials)
        with build_client(endpoint) as builds:
            build_id = builds.create_build(project_id="life-project", build=cloudbuild.Build(
                steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker", args=["build", "."])],
                tags=["kept"])).metadata.build.id
            wait_until(lambda: builds.get_build(project_id="life-project", id=build_id).status.name == "FAILURE")
        with resource_client(endpoint) as resources:
            resources.create_persistent_resource(
                parent=PARENT, persistent_resource_id="kept-cluster", persistent_resource=vertex.PersistentResource(
                    resource_pools=[vertex.ResourcePool(
                        machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"), replica_count=1)])).result(60)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    wait_until(lambda: not processes_with(marker))

    with emulator_process("--data-dir", str(data)) as (_, endpoint, printed), job_client(endpoint) as jobs:
        # the two CustomJobs, the tuning job and its trial's job; all but the first had not ended
        assert any("4 jobs kept from earlier runs (3 had not ended and are FAILED now), 1 builds, 1 persistent "
                   "resources" in line for line in printed), printed
        kept = jobs.get_custom_job(name=done.name)
        assert kept.state.name == "JOB_STATE_SUCCEEDED"
        assert kept.labels["kept"] == "yes"
        assert kept.create_time == done.create_time
        lost = jobs.get_custom_job(name=running.name)
        assert lost.state.name == "JOB_STATE_FAILED"
        assert lost.error.code == 10
        assert "the emulator restarted" in lost.error.message
        listed = [job.name for job in jobs.list_custom_jobs(parent=PARENT)]
        assert listed == [running.name, done.name]
        kept_study = jobs.get_hyperparameter_tuning_job(name=study.name)
        assert kept_study.state.name == "JOB_STATE_FAILED"
        assert "the emulator restarted" in kept_study.error.message
        assert kept_study.study_spec.metrics[0].metric_id == "accuracy"
        with build_client(endpoint) as builds:
            kept_build = builds.get_build(project_id="life-project", id=build_id)
            assert kept_build.status.name == "FAILURE"
            assert list(kept_build.tags) == ["kept"]
        with resource_client(endpoint) as resources:
            cluster = resources.get_persistent_resource(name=f"{PARENT}/persistentResources/kept-cluster")
            assert cluster.state.name == "RUNNING"
            assert cluster.resource_pools[0].id == "resource-pool-0"


def test_a_build_that_had_not_ended_comes_back_internal_error(tmp_path: Path) -> None:
    """The rules a kept resource follows on restart, as values (a WORKING build is hard to leave behind without a
    Docker engine)."""
    from tfcloud.emulator.store import RESTARTED_BUILD, Store, fail_build

    before = Store(tmp_path, cloudbuild.Build, restart=fail_build, noun="builds")
    before.save_message(cloudbuild.Build(id="b-1", name="projects/p/locations/global/builds/b-1",
                                         status=cloudbuild.Build.Status.WORKING))
    after = Store(tmp_path, cloudbuild.Build, restart=fail_build, noun="builds")
    [(build, _)] = after.restore()
    assert build.status.name == "INTERNAL_ERROR"
    assert build.status_detail == RESTARTED_BUILD
    assert (after.kept, after.failed_on_restart) == (1, 1)
    assert Store(tmp_path, cloudbuild.Build, restart=fail_build).restore()[0][0].status.name == "INTERNAL_ERROR"


def test_a_persistent_resource_that_was_provisioning_comes_back_error(tmp_path: Path) -> None:
    from tfcloud.emulator.store import RESTARTED_RESOURCE, Store, fail_resource

    provisioning = vertex.PersistentResource(name=f"{PARENT}/persistentResources/a",
                                             state=vertex.PersistentResource.State.PROVISIONING)
    running = vertex.PersistentResource(name=f"{PARENT}/persistentResources/b",
                                        state=vertex.PersistentResource.State.RUNNING)
    before = Store(tmp_path, vertex.PersistentResource, restart=fail_resource)
    before.save_message(provisioning)
    before.save_message(running)
    restored = {r.name.rsplit("/", 1)[-1]: r for r, _ in
                Store(tmp_path, vertex.PersistentResource, restart=fail_resource).restore()}
    assert restored["a"].state.name == "ERROR"
    assert restored["a"].error.message == RESTARTED_RESOURCE
    assert restored["b"].state.name == "RUNNING"

