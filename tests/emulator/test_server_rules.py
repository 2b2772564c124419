"""What Google refuses, the emulator refuses, whoever sends it: INVALID_ARGUMENT with Vertex AI's message shape
("List of found errors:\\t1.Field: F; Message: M\\t") and a ``google.rpc.BadRequest`` whose field violations
client code reads (google-api-core puts it in ``exc.details``). Driven by Google's own GAPIC clients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex
from google.rpc import error_details_pb2

from tests.emulator.test_jobs import custom_job, follow, pool

pytestmark = pytest.mark.emulator


def refused(call: Callable[[], Any]) -> tuple[str, list[str]]:
    """The message and the violated fields of a call that must end INVALID_ARGUMENT."""
    with pytest.raises(exceptions.InvalidArgument) as raised:
        call()
    requests = [detail for detail in raised.value.details if isinstance(detail, error_details_pb2.BadRequest)]
    assert requests, f"no google.rpc.BadRequest in {raised.value.details!r}"
    return raised.value.message, [v.field for request in requests for v in request.field_violations]


def machine(**spec: Any) -> vertex.CustomJob:
    job = custom_job(pool("print('never')"))
    for key, value in spec.items():
        setattr(job.job_spec.worker_pool_specs[0].machine_spec, key, value)
    return job


POOL = "job_spec.worker_pool_specs[0]"


@pytest.mark.parametrize(("job", "field"), [
    (machine(machine_type="n1-fake-8"), f"{POOL}.machine_spec.machine_type"),
    (machine(accelerator_count=1), f"{POOL}.machine_spec.accelerator_type"),
    (machine(accelerator_type=vertex.AcceleratorType.NVIDIA_TESLA_T4), f"{POOL}.machine_spec.accelerator_type"),
    (machine(machine_type="e2-standard-8", accelerator_type=vertex.AcceleratorType.NVIDIA_TESLA_T4,
             accelerator_count=1), f"{POOL}.machine_spec.accelerator_type"),
    (machine(machine_type="n1-standard-4", accelerator_type=vertex.AcceleratorType.NVIDIA_TESLA_T4,
             accelerator_count=3), f"{POOL}.machine_spec.accelerator_count"),
    (machine(machine_type="ct6e-standard-4t"), f"{POOL}.machine_spec.tpu_topology"),
], ids=["unknown-machine", "count-without-type", "type-without-count", "t4-on-e2", "three-t4s", "tpu-no-topology"])
def test_machines_and_accelerators_as_the_table_says(emulator: Any, jobs: Any, job: Any, field: str) -> None:
    message, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=job))
    assert field in fields
    assert message.startswith(f"List of found errors:\t1.Field: {fields[0]}; Message: ")


def test_the_accelerator_pair_message_is_vertexs(emulator: Any, jobs: Any) -> None:
    message, _ = refused(lambda: jobs.create_custom_job(parent=emulator.parent,
                                                        custom_job=machine(accelerator_count=1)))
    assert message == (f"List of found errors:\t1.Field: {POOL}.machine_spec.accelerator_type; Message: Both "
                       "`accelerator_type` and `accelerator_count` should be specified or none.\t")


def test_boot_disks_regions_and_every_violation_at_once(emulator: Any, jobs: Any) -> None:
    job = custom_job(pool("print('never')"))
    job.job_spec.worker_pool_specs[0].disk_spec = vertex.DiskSpec(boot_disk_type="pd-fake")
    _, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=job))
    assert f"{POOL}.disk_spec.boot_disk_type" in fields
    _, fields = refused(lambda: jobs.create_custom_job(parent="projects/p/locations/mars-north1",
                                                       custom_job=custom_job(pool("pass"))))
    assert "location" in fields
    both = machine(machine_type="n1-fake-8")
    both.display_name = ""
    message, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=both))
    assert {"display_name", f"{POOL}.machine_spec.machine_type"} <= set(fields)
    assert "\t2.Field: " in message


@pytest.mark.parametrize(("region", "spec", "field"), [
    ("europe-west6", {"machine_type": "g2-standard-4", "accelerator_type": vertex.AcceleratorType.NVIDIA_L4,
                      "accelerator_count": 1}, f"{POOL}.machine_spec.accelerator_type"),  # † on the Locations page
    ("us-east1", {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"},
     f"{POOL}.machine_spec.accelerator_type"),  # listed there, but Cloud TPU makes no v5e in us-east1
    ("us-east7", {}, "location"),  # the SDK names it, the Locations page does not
], ids=["l4-dagger", "v5e-us-east1", "sdk-only-region"])
def test_regions_as_the_locations_page_says(emulator: Any, jobs: Any, region: str, spec: dict[str, Any],
                                            field: str) -> None:
    parent = emulator.parent.rsplit("/", 1)[0] + "/" + region
    _, fields = refused(lambda: jobs.create_custom_job(parent=parent, custom_job=machine(**spec)))
    assert field in fields


@pytest.mark.parametrize(("labels", "field"), [
    ({"team": "Research"}, "labels['team']"),
    ({"team": "x" * 100}, "labels['team']"),
    ({"team": "x" * 64}, "labels['team']"),
    ({"Team": "research"}, "labels['Team']"),
    ({"1team": "research"}, "labels['1team']"),
    ({"team": "a b"}, "labels['team']"),
    ({f"k{i}": "v" for i in range(65)}, "labels"),
], ids=["capital-value", "long-value", "64-characters", "capital-key", "digit-first", "space", "65-labels"])
def test_labels_google_refuses(emulator: Any, jobs: Any, labels: dict[str, str], field: str) -> None:
    _, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent,
                                                       custom_job=custom_job(pool("pass"), labels=labels)))
    assert field in fields


def test_labels_with_international_characters_are_accepted(emulator: Any, jobs: Any) -> None:
    labels = {"équipe": "données", "チーム": "研究", "k" * 63: "v" * 63}
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("pass"), labels=labels))
    assert dict(created.labels) == labels
    follow(jobs, created.name)


@pytest.mark.parametrize(("change", "field"), [
    (lambda job: setattr(job, "display_name", ""), "display_name"),
    (lambda job: setattr(job, "display_name", "x" * 129), "display_name"),
    (lambda job: setattr(job.job_spec, "service_account", "not an email"), "job_spec.service_account"),
    (lambda job: setattr(job.job_spec, "network", "my-vpc"), "job_spec.network"),
    (lambda job: setattr(job.job_spec, "network", "projects/my-project/global/networks/vpc"), "job_spec.network"),
    (lambda job: setattr(job.job_spec, "base_output_directory", vertex.GcsDestination(
        output_uri_prefix="/tmp/out")), "job_spec.base_output_directory.output_uri_prefix"),
    (lambda job: job.job_spec.worker_pool_specs[0].__setattr__("python_package_spec", vertex.PythonPackageSpec(
        executor_image_uri="i", python_module="m", package_uris=["http://x/p.tar.gz"])),
     f"{POOL}.python_package_spec.package_uris[0]"),
], ids=["no-name", "long-name", "service-account", "network-name", "network-project-id", "output-uri",
        "package-uri"])
def test_names_accounts_networks_and_uris(emulator: Any, jobs: Any, change: Callable[[Any], None],
                                          field: str) -> None:
    job = custom_job(pool("pass"))
    change(job)
    _, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=job))
    assert field in fields


def test_a_tuning_jobs_trial_spec_and_a_persistent_resource_are_held_to_the_same_table(emulator: Any,
                                                                                          jobs: Any) -> None:
    study = vertex.StudySpec(
        metrics=[vertex.StudySpec.MetricSpec(metric_id="loss", goal=vertex.StudySpec.MetricSpec.GoalType.MINIMIZE)],
        parameters=[vertex.StudySpec.ParameterSpec(parameter_id="lr", double_value_spec=vertex.StudySpec.
                                                   ParameterSpec.DoubleValueSpec(min_value=0.1, max_value=0.2))])
    tuning = vertex.HyperparameterTuningJob(display_name="t", study_spec=study, max_trial_count=1,
                                            parallel_trial_count=1, trial_job_spec=machine(
                                                machine_type="n1-fake-8").job_spec)
    _, fields = refused(lambda: jobs.create_hyperparameter_tuning_job(parent=emulator.parent,
                                                                      hyperparameter_tuning_job=tuning))
    assert "trial_job_spec.worker_pool_specs[0].machine_spec.machine_type" in fields
    resources = emulator.persistent_resource_client()
    try:
        resource = vertex.PersistentResource(resource_pools=[vertex.ResourcePool(
            machine_spec=vertex.MachineSpec(machine_type="e2-standard-8", accelerator_type="NVIDIA_TESLA_T4",
                                            accelerator_count=1), replica_count=1)])
        _, fields = refused(lambda: resources.create_persistent_resource(
            parent=emulator.parent, persistent_resource=resource, persistent_resource_id="refused"))
        assert "resource_pools[0].machine_spec.accelerator_type" in fields
    finally:
        resources.transport.close()


# -- List methods --------------------------------------------------------------------------------------------------
def _list(jobs: Any, emulator: Any, **request: Any) -> Any:
    return jobs.list_custom_jobs(request=vertex.ListCustomJobsRequest(parent=emulator.parent, **request))


@pytest.mark.parametrize("text", [
    'bogus_field="x"', 'display_name>"a"', 'state<"JOB_STATE_RUNNING"', 'state="JOB_STATE_BOGUS"',
    'create_time>"yesterday"', "just-a-word", 'update_time>"2026-01-01T00:00:00Z"', 'labels>"x"',
    "(" * 2000 + 'display_name="x"' + ")" * 2000, "NOT " * 2000 + 'display_name="x"', 'display_name="x" AND (',
    'display_name="unterminated',
])
def test_unsupported_or_malformed_filters_are_invalid_argument(emulator: Any, jobs: Any, text: str) -> None:
    _, fields = refused(lambda: list(_list(jobs, emulator, filter=text)))
    assert fields == ["filter"]


def test_supported_filters_still_filter(emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("pass"), name="filter-me", labels={"rules-test": "filters"}))
    follow(jobs, created.name)
    for text in ['display_name="filter-me"', 'display_name:"filter-*"', "labels.rules-test=filters",
                 "labels.rules-test:*", 'create_time>="2020-01-01T00:00:00Z" AND state="JOB_STATE_SUCCEEDED"',
                 'NOT display_name="other" AND labels.rules-test="filters"']:
        assert [job.name for job in _list(jobs, emulator, filter=text)
                if job.labels.get("rules-test")] == [created.name], text


def test_a_page_token_is_bound_to_its_request(emulator: Any, jobs: Any) -> None:
    for _ in range(2):
        follow(jobs, jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
            pool("pass"), labels={"rules-test": "pages"})).name)
    first = _list(jobs, emulator, filter="labels.rules-test=pages", page_size=1)
    token = first.next_page_token
    assert token
    second = _list(jobs, emulator, filter="labels.rules-test=pages", page_size=5, page_token=token)
    assert len(list(second)) == 1  # page_size may change between pages (AIP-158)
    _, fields = refused(lambda: list(_list(jobs, emulator, filter="labels.rules-test:*", page_size=1,
                                           page_token=token)))
    assert fields == ["page_token"]
    _, fields = refused(lambda: list(_list(jobs, emulator, page_token="not-a-token")))
    assert fields == ["page_token"]


def test_read_mask_is_honoured(emulator: Any, jobs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("pass"), labels={"rules-test": "mask"}))
    follow(jobs, created.name)
    (masked,) = _list(jobs, emulator, filter="labels.rules-test=mask", read_mask={"paths": ["name", "display_name"]})
    assert (masked.name, masked.display_name) == (created.name, created.display_name)
    assert not masked.job_spec.worker_pool_specs and not masked.labels and not masked.create_time
    _, fields = refused(lambda: list(_list(jobs, emulator, filter="labels.rules-test=mask",
                                           read_mask={"paths": ["no_such_field"]})))
    assert fields == ["read_mask"]
    _, fields = refused(lambda: list(_list(jobs, emulator, filter="labels.rules-test=nothing-matches",
                                           read_mask={"paths": ["no_such_field"]})))
    assert fields == ["read_mask"]  # checked against the resource, found or not
    request = vertex.ListHyperparameterTuningJobsRequest(parent=emulator.parent, read_mask={"paths": ["no_such_field"]})
    _, fields = refused(lambda: list(jobs.list_hyperparameter_tuning_jobs(request=request)))
    assert fields == ["read_mask"]


# -- Cloud Logging -------------------------------------------------------------------------------------------------
def _entries(logs: Any, emulator: Any, **request: Any) -> Any:
    from google.cloud.logging_v2.types import ListLogEntriesRequest

    return logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{emulator.project}"], **request))


@pytest.mark.parametrize(("request_fields", "field"), [
    ({"page_size": 5000}, "page_size"),
    ({"filter": 'timestamp>="not-a-time"'}, "filter"),
    ({"filter": 'severity>="LOUD"'}, "filter"),
    ({"filter": 'noSuchField="x"'}, "filter"),
    ({"filter": "(" * 2000 + "x" + ")" * 2000}, "filter"),
    ({"page_token": "bm90IGEgdG9rZW4="}, "page_token"),
], ids=["page-size-over-1000", "bad-time", "bad-severity", "unknown-field", "deep", "bad-token"])
def test_logging_refuses_what_the_service_refuses(emulator: Any, logs: Any, request_fields: dict[str, Any],
                                                  field: str) -> None:
    _, fields = refused(lambda: list(_entries(logs, emulator, **request_fields)))
    assert fields == [field]


def test_logging_page_tokens_are_bound_and_1000_is_served(emulator: Any, logs: Any) -> None:
    from google.api import monitored_resource_pb2
    from google.cloud.logging_v2.types import LogEntry

    log_name = f"projects/{emulator.project}/logs/rules-test"
    logs.write_log_entries(entries=[LogEntry(
        log_name=log_name, text_payload=f"line {i}",
        resource=monitored_resource_pb2.MonitoredResource(type="global")) for i in range(3)])
    pager = _entries(logs, emulator, filter=f'logName="{log_name}"', page_size=2)
    token = pager.next_page_token
    assert token and len(list(_entries(logs, emulator, filter=f'logName="{log_name}"', page_size=1000,
                                       page_token=token))) == 1
    _, fields = refused(lambda: list(_entries(logs, emulator, filter=f'logName="{log_name}" AND "line"',
                                              page_token=token)))
    assert fields == ["page_token"]


def test_a_replica_that_prints_is_still_found_by_a_bare_text_query(emulator: Any, jobs: Any, logs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("print('needle-in-the-log')")))
    follow(jobs, created.name)
    found = list(_entries(logs, emulator, filter=f'resource.labels.job_id="{created.name.rsplit("/", 1)[1]}" '
                                                 'AND "needle-in-the-log"'))
    assert [entry.text_payload for entry in found] == ["needle-in-the-log"]


def test_the_emulator_refuses_a_request_that_slipped_past_the_client(emulator: Any, jobs: Any) -> None:
    """A user's own request built with a plausible but unlisted machine (the SDK's MachineConfig does not check)."""
    job = custom_job(pool("pass"))
    job.job_spec.worker_pool_specs[0].machine_spec.machine_type = "n1-highcpu-4"
    _, fields = refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=job))
    assert fields == [f"{POOL}.machine_spec.machine_type"]


def test_a_tail_with_a_malformed_filter_is_invalid_argument(emulator: Any, logs: Any) -> None:
    from google.cloud.logging_v2.types import TailLogEntriesRequest

    request = TailLogEntriesRequest(resource_names=[f"projects/{emulator.project}"],
                                    filter='timestamp>="not-a-time"')
    _, fields = refused(lambda: next(iter(logs.tail_log_entries(requests=iter([request])))))
    assert fields == ["filter"]


def test_study_and_resource_id_refusals_carry_their_field_too(emulator: Any, jobs: Any) -> None:
    tuning = vertex.HyperparameterTuningJob(display_name="t", max_trial_count=1, parallel_trial_count=1,
                                            trial_job_spec=custom_job(pool("pass")).job_spec)
    message, fields = refused(lambda: jobs.create_hyperparameter_tuning_job(parent=emulator.parent,
                                                                            hyperparameter_tuning_job=tuning))
    assert fields == ["study_spec.metrics"]
    assert message.startswith("List of found errors:\t1.Field: study_spec.metrics; Message: ")
    resources = emulator.persistent_resource_client()
    try:
        resource = vertex.PersistentResource(resource_pools=[vertex.ResourcePool(
            machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"), replica_count=1)])
        _, fields = refused(lambda: resources.create_persistent_resource(
            parent=emulator.parent, persistent_resource=resource, persistent_resource_id="Not_An_Id"))
        assert fields == ["persistent_resource_id"]
    finally:
        resources.transport.close()


def test_output_only_fields_of_a_request_are_ignored_and_invalid_times_refused(emulator: Any, jobs: Any) -> None:
    import datetime as dt

    job = custom_job(pool("pass"))
    job.state = vertex.JobState.JOB_STATE_SUCCEEDED
    job.start_time = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    job.name = "projects/other/locations/us-central1/customJobs/1"
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=job)
    assert created.state == vertex.JobState.JOB_STATE_QUEUED
    assert not created.start_time and created.name != job.name
    follow(jobs, created.name)
    bad = custom_job(pool("pass"))
    bad.job_spec.scheduling = vertex.Scheduling(timeout={"seconds": 10, "nanos": -1})
    refused(lambda: jobs.create_custom_job(parent=emulator.parent, custom_job=bad))
