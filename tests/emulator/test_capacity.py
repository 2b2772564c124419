"""Capacity on the emulator, through the real ``aiplatform_v1`` clients: Flex Start waiting for VMs (and giving up
after its max wait), reservations, and persistent resources whose jobs skip the VMs' provisioning."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex
from google.protobuf import duration_pb2

from tests.emulator.conftest import wait_until
from tests.emulator.test_jobs import follow, job_id

pytestmark = pytest.mark.emulator

A100 = {"machine_type": "a2-highgpu-1g", "accelerator_type": vertex.AcceleratorType.NVIDIA_TESLA_A100,
        "accelerator_count": 1}


def gpu_job(*, name: str, machine: dict[str, Any] | None = None, count: int = 1, **spec: Any) -> vertex.CustomJob:
    pool = vertex.WorkerPoolSpec(
        replica_count=count, machine_spec=vertex.MachineSpec(**(machine or A100)),
        container_spec=vertex.ContainerSpec(image_uri="us-docker.pkg.dev/p/r/train:1",
                                            command=[sys.executable, "-c", "print('trained')"]))
    return vertex.CustomJob(display_name=name, job_spec=vertex.CustomJobSpec(worker_pool_specs=[pool], **spec))


def flex_start(max_wait_s: int | None = None) -> vertex.Scheduling:
    scheduling = vertex.Scheduling(strategy=vertex.Scheduling.Strategy.FLEX_START)
    if max_wait_s is not None:
        scheduling.max_wait_duration = duration_pb2.Duration(seconds=max_wait_s)
    return scheduling


def service_lines(emulator: Any, job: Any) -> list[str]:
    """The service's own log lines about ``job`` (what Cloud Logging holds under its task "service")."""
    return [s.entry.text_payload for s in emulator.log_store.entries()
            if s.entry.resource.labels.get("job_id") == job_id(job)
            and s.entry.resource.labels.get("task_name") == "service"]


def test_flex_start_waits_in_pending_until_capacity_returns(emulator: Any, jobs: Any) -> None:
    emulator.faults.exhaust_capacity(machine_type="a2-highgpu-1g")
    created = jobs.create_custom_job(parent=emulator.parent,
                                     custom_job=gpu_job(name="flex-wait", scheduling=flex_start(0)))
    wait_until(lambda: any("Waiting for resources (FLEX_START" in line
                           for line in service_lines(emulator, created)))
    got = jobs.get_custom_job(name=created.name)
    assert got.state == vertex.JobState.JOB_STATE_PENDING  # no capacity, no time limit: it waits
    assert got.job_spec.scheduling.strategy == vertex.Scheduling.Strategy.FLEX_START
    assert "max_wait_duration" in got.job_spec.scheduling and got.job_spec.scheduling.max_wait_duration.seconds == 0
    emulator.faults.restore_capacity()
    job, _ = follow(jobs, created.name)
    assert job.state == vertex.JobState.JOB_STATE_SUCCEEDED, job.error


def test_flex_start_fails_once_its_max_wait_has_passed(emulator: Any, jobs: Any) -> None:
    emulator.faults.exhaust_capacity()
    created = jobs.create_custom_job(parent=emulator.parent,
                                     custom_job=gpu_job(name="flex-expire", scheduling=flex_start(1)))
    job, states = follow(jobs, created.name)
    assert job.state == vertex.JobState.JOB_STATE_FAILED
    assert "JOB_STATE_RUNNING" not in states
    assert job.error.code == 8  # RESOURCE_EXHAUSTED
    assert job.error.message == ("Resources are insufficient in region: us-central1. The job could not get its "
                                 "resources within its max_wait_duration of 1s (FLEX_START).")
    assert job.job_spec.scheduling.max_wait_duration.seconds == 1


def test_a_standard_job_without_capacity_fails_at_once(emulator: Any, jobs: Any) -> None:
    emulator.faults.exhaust_capacity()
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(
        name="standard-none", scheduling=vertex.Scheduling(strategy=vertex.Scheduling.Strategy.STANDARD)))
    job, _ = follow(jobs, created.name)
    assert job.state == vertex.JobState.JOB_STATE_FAILED and job.error.code == 8
    assert job.error.message.startswith("Resources are insufficient in region: us-central1.")
    assert job.job_spec.scheduling.strategy == vertex.Scheduling.Strategy.STANDARD


def test_a_job_on_a_reservation_keeps_its_capacity(emulator: Any, jobs: Any) -> None:
    emulator.faults.exhaust_capacity()  # on-demand VMs are gone; the reservation's are held for the project
    reservation = "projects/tfcloud-test/zones/us-central1-a/reservations/my-reservation"
    affinity = vertex.ReservationAffinity(
        reservation_affinity_type=vertex.ReservationAffinity.Type.SPECIFIC_RESERVATION,
        key="compute.googleapis.com/reservation-name", values=[reservation])
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(
        name="reserved", machine={**A100, "reservation_affinity": affinity},
        scheduling=vertex.Scheduling(disable_retries=True)))
    job, _ = follow(jobs, created.name)
    assert job.state == vertex.JobState.JOB_STATE_SUCCEEDED, job.error
    shown = job.job_spec.worker_pool_specs[0].machine_spec.reservation_affinity
    assert shown.reservation_affinity_type == vertex.ReservationAffinity.Type.SPECIFIC_RESERVATION
    assert shown.key == "compute.googleapis.com/reservation-name" and list(shown.values) == [reservation]
    assert job.job_spec.scheduling.disable_retries


def test_get_returns_tensorboard_and_experiment(emulator: Any, jobs: Any) -> None:
    parent = "projects/tfcloud-test/locations/us-central1"
    spec = {"tensorboard": f"{parent}/tensorboards/42",
            "experiment": f"{parent}/metadataStores/default/contexts/exp",
            "experiment_run": f"{parent}/metadataStores/default/contexts/exp-run-1",
            "service_account": "trainer@tfcloud-test.iam.gserviceaccount.com",
            "base_output_directory": vertex.GcsDestination(output_uri_prefix="gs://bkt/out")}
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(name="tb", **spec))
    job, _ = follow(jobs, created.name)
    assert (job.job_spec.tensorboard, job.job_spec.experiment, job.job_spec.experiment_run) == (
        spec["tensorboard"], spec["experiment"], spec["experiment_run"])


# -- persistent resources: an emulator whose on-demand jobs take 10 minutes to provision ------------------------
@pytest.fixture(scope="module")
def slow_emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator, JobTimings

    with Emulator(project="tfcloud-test", storage=False,
                  timings=JobTimings(pending=600, resource_provisioning=0.1)) as emu:
        yield emu


def test_a_persistent_resource_lives_and_its_jobs_start_without_provisioning(slow_emulator: Any) -> None:
    resources = slow_emulator.persistent_resource_client()
    jobs = slow_emulator.job_client()
    try:
        operation = resources.create_persistent_resource(
            parent=slow_emulator.parent, persistent_resource_id="my-cluster",
            persistent_resource=vertex.PersistentResource(display_name="my cluster", resource_pools=[
                vertex.ResourcePool(id="chief", machine_spec=vertex.MachineSpec(**A100), replica_count=2)]))
        created = operation.result(timeout=30)
        number = slow_emulator.settings.project_number
        assert created.name == f"projects/{number}/locations/us-central1/persistentResources/my-cluster"
        assert created.state == vertex.PersistentResource.State.RUNNING and created.start_time
        assert [r.name for r in resources.list_persistent_resources(parent=slow_emulator.parent)] == [created.name]
        with pytest.raises(exceptions.AlreadyExists):
            resources.create_persistent_resource(
                parent=slow_emulator.parent, persistent_resource_id="my-cluster", persistent_resource=created)

        # An on-demand job waits for its VMs (10 minutes here); the one on the resource runs on its VMs at once.
        on_demand = jobs.create_custom_job(parent=slow_emulator.parent, custom_job=gpu_job(name="on-demand"))
        on_cluster = jobs.create_custom_job(parent=slow_emulator.parent, custom_job=gpu_job(
            name="on-cluster", persistent_resource_id="my-cluster"))
        job, _ = follow(jobs, on_cluster.name)
        assert job.state == vertex.JobState.JOB_STATE_SUCCEEDED, job.error
        assert job.job_spec.persistent_resource_id == "my-cluster"
        lines = service_lines(slow_emulator, job)
        assert "Waiting for job to be provisioned." not in lines
        assert any("scheduled on persistent resource my-cluster" in line for line in lines)
        assert jobs.get_custom_job(name=on_demand.name).state == vertex.JobState.JOB_STATE_PENDING
        jobs.cancel_custom_job(name=on_demand.name)

        # Jobs the resource cannot hold are refused when created.
        with pytest.raises(exceptions.InvalidArgument, match="matches no resource pool"):
            jobs.create_custom_job(parent=slow_emulator.parent, custom_job=gpu_job(
                name="wrong-machine", machine={"machine_type": "n1-standard-4"}, persistent_resource_id="my-cluster"))
        too_many = gpu_job(name="too-many", persistent_resource_id="my-cluster")
        too_many.job_spec.worker_pool_specs.append(gpu_job(name="workers", count=3).job_spec.worker_pool_specs[0])
        with pytest.raises(exceptions.InvalidArgument, match="more than the resource pool"):
            jobs.create_custom_job(parent=slow_emulator.parent, custom_job=too_many)
        with pytest.raises(exceptions.NotFound):
            jobs.create_custom_job(parent=slow_emulator.parent, custom_job=gpu_job(
                name="no-cluster", persistent_resource_id="no-such-cluster"))

        resources.delete_persistent_resource(name=created.name).result(timeout=30)
        with pytest.raises(exceptions.NotFound):
            resources.get_persistent_resource(name=created.name)
        assert list(resources.list_persistent_resources(parent=slow_emulator.parent)) == []
    finally:
        resources.transport.close()
        jobs.transport.close()


# -- a region out of stock (tfcloud emulator start --stockout REGION[/MACHINE_TYPE][:spot] [--queued]) ------------
CPU = {"machine_type": "n1-standard-4"}


def _in(emulator: Any, region: str) -> str:
    return emulator.parent.rsplit("/", 1)[0] + "/" + region


def test_a_region_out_of_stock_fails_its_jobs_and_another_region_runs_them(emulator: Any, jobs: Any) -> None:
    emulator.faults.stockout("us-central1", machine_type="n1-standard-4")
    out = jobs.create_custom_job(parent=_in(emulator, "us-central1"), custom_job=gpu_job(name="out", machine=CPU))
    job, states = follow(jobs, out.name)
    assert job.state == vertex.JobState.JOB_STATE_FAILED and "JOB_STATE_RUNNING" not in states
    assert job.error.code == 8  # RESOURCE_EXHAUSTED
    assert job.error.message == "Resources are insufficient in region: us-central1. Please try a different region."
    elsewhere = jobs.create_custom_job(parent=_in(emulator, "southamerica-east1"),
                                       custom_job=gpu_job(name="elsewhere", machine=CPU))
    assert follow(jobs, elsewhere.name)[0].state == vertex.JobState.JOB_STATE_SUCCEEDED
    other_type = jobs.create_custom_job(parent=_in(emulator, "us-central1"), custom_job=gpu_job(
        name="other-type", machine={"machine_type": "n1-standard-8"}))
    assert follow(jobs, other_type.name)[0].state == vertex.JobState.JOB_STATE_SUCCEEDED


def test_a_spot_stockout_leaves_on_demand_vms(emulator: Any, jobs: Any) -> None:
    emulator.faults.stockout("us-central1", spot=True)
    spot = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(
        name="spot", machine=CPU, scheduling=vertex.Scheduling(strategy=vertex.Scheduling.Strategy.SPOT)))
    job, _ = follow(jobs, spot.name)
    assert job.state == vertex.JobState.JOB_STATE_FAILED and job.error.code == 8
    on_demand = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(name="on-demand", machine=CPU))
    assert follow(jobs, on_demand.name)[0].state == vertex.JobState.JOB_STATE_SUCCEEDED


def test_a_queued_stockout_keeps_the_job_queued_until_restocked(emulator: Any, jobs: Any) -> None:
    emulator.faults.stockout("us-central1", queued=True)
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(name="queued", machine=CPU))
    wait_until(lambda: any("Job is queued: resources are insufficient in region: us-central1" in line
                           for line in service_lines(emulator, created)))
    assert jobs.get_custom_job(name=created.name).state == vertex.JobState.JOB_STATE_QUEUED
    emulator.faults.restock("us-central1")
    job, _ = follow(jobs, created.name)
    assert job.state == vertex.JobState.JOB_STATE_SUCCEEDED, job.error


def test_a_queued_job_can_be_cancelled(emulator: Any, jobs: Any) -> None:
    emulator.faults.stockout("us-central1", queued=True)
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=gpu_job(name="queued-cancel", machine=CPU))
    wait_until(lambda: any("Job is queued" in line for line in service_lines(emulator, created)))
    jobs.cancel_custom_job(name=created.name)
    assert follow(jobs, created.name)[0].state == vertex.JobState.JOB_STATE_CANCELLED


@pytest.mark.parametrize(("text", "expected"), [
    ("us-central1", "us-central1"), ("europe-west4/a2-highgpu-1g", "europe-west4/a2-highgpu-1g"),
    ("us-east1:spot", "us-east1:spot"), (" asia-east1/n1-standard-4:spot ", "asia-east1/n1-standard-4:spot")])
def test_stockout_texts_read_as_the_cli_takes_them(text: str, expected: str) -> None:
    from tfcloud.emulator.faults import parse_stockout

    assert str(parse_stockout(text)) == expected


@pytest.mark.parametrize("text", ["", "US-CENTRAL1", "us-central1/", "us-central1:preemptible", "us/central1"])
def test_a_bad_stockout_is_refused_by_the_cli(text: str) -> None:
    from typer.testing import CliRunner

    from tfcloud.emulator.cli import app

    done = CliRunner().invoke(app, ["start", "--stockout", text])
    assert done.exit_code == 2
    assert "Invalid `--stockout`: expected REGION[/MACHINE_TYPE][:spot]" in done.output
    done = CliRunner().invoke(app, ["start", "--queued"])
    assert done.exit_code == 2 and "Invalid `--queued`: expected beside a --stockout" in done.output
