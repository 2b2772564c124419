"""One test per documented rule: a request Google refuses (the rule's id, on its field) and Google's own accepted
example of the same thing (no violation)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from tfcloud.google.rules import (
    ACCELERATORS,
    MACHINE_TYPES,
    SOURCES,
    TPU_MACHINES,
    Violation,
    check_custom_job,
    check_framework,
    check_image_architecture,
    check_labels,
    check_persistent_resource,
    check_sdk_rules,
    check_tpu_pod_image,
    check_worker_pool_specs,
)

TODAY = datetime.date(2026, 11, 26)


def pool(machine_type: str, accelerator: str | int | None = None, count: int = 0, *, replicas: int = 1,
         topology: str | None = None, disk: str | None = None, size: int | None = None,
         reservation: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"machine_type": machine_type}
    if accelerator is not None:
        spec["accelerator_type"] = accelerator
        spec["accelerator_count"] = count
    if topology is not None:
        spec["tpu_topology"] = topology
    if reservation is not None:
        spec["reservation_affinity"] = {"reservation_affinity_type": reservation}
    result: dict[str, Any] = {"machine_spec": spec, "replica_count": replicas,
                              "container_spec": {"image_uri": "us-docker.pkg.dev/p/r/i:t"}}
    if disk is not None or size is not None:
        result["disk_spec"] = {k: v for k, v in (("boot_disk_type", disk), ("boot_disk_size_gb", size)) if v}
    return result


def job(*pools: dict[str, Any], strategy: str | int | None = None, **spec: Any) -> dict[str, Any]:
    job_spec: dict[str, Any] = {"worker_pool_specs": list(pools), **spec}
    if strategy is not None:
        job_spec.setdefault("scheduling", {})["strategy"] = strategy
    return {"display_name": "train", "job_spec": job_spec, "labels": {"team": "ml"}}


def rules(violations: list[Violation]) -> list[str]:
    return [v.rule for v in violations]


def only(violations: list[Violation], rule: str) -> Violation:
    assert rules(violations) == [rule], [v.description for v in violations]
    return violations[0]


def check(body: dict[str, Any], location: str = "us-central1") -> list[Violation]:
    return check_custom_job(body, location=location, today=TODAY)


# -- every row names its source ----------------------------------------------------------------------------------
def test_every_table_row_names_a_source_read_on_a_date() -> None:
    rows: list[Any] = [*ACCELERATORS.values(), *MACHINE_TYPES.values(), *TPU_MACHINES.values()]
    for row in rows:
        assert row.source in SOURCES, row
    for source in SOURCES.values():
        assert isinstance(source.read, datetime.date) and source.url.startswith("https://")


def test_each_source_has_its_own_plausible_read_date() -> None:
    import dataclasses
    import inspect

    from tfcloud.google.rules import VERTEX_AI_LAUNCH, Source
    from tfcloud.google.rules import sources as module
    from tfcloud.google.rules.requests import REQUEST_SOURCES

    # Not one value by construction: the dataclass and the helpers that make the sources take no default date,
    # and the module holds no date every source shares.
    (read,) = [f for f in dataclasses.fields(Source) if f.name == "read"]
    assert read.default is dataclasses.MISSING and read.default_factory is dataclasses.MISSING
    for helper in (module._page, module._proto, module._sdk):
        assert inspect.signature(helper).parameters["read"].default is inspect.Parameter.empty, helper
    assert not [name for name, value in vars(module).items()
                if isinstance(value, datetime.date) and name != "VERTEX_AI_LAUNCH"]
    today = datetime.date.today()
    for key, source in {**SOURCES, **REQUEST_SOURCES}.items():
        # Plausible: never in the future, never before the content could exist (the page's own date where it
        # gives one, else Vertex AI's launch: no Vertex AI page or aiplatform_v1 proto predates it).
        assert VERTEX_AI_LAUNCH <= source.read <= today, (key, source.read)
        assert source.since is None or source.since <= source.read, (key, source.since, source.read)
        assert source.read.isoformat() in str(source), key
    assert SOURCES["locations"].since == datetime.date(2026, 4, 10)  # "page last updated 2026-04-10"
    # A source read again carries its new day; the others keep theirs.
    assert SOURCES["tpu-training"].read == datetime.date(2026, 11, 29)
    assert SOURCES["configure-compute"].read == TODAY


def test_a_violation_names_field_rule_source_and_fix() -> None:
    found = only(check(job(pool("ct5lp-hightpu-4t"))), "tpu-topology-required")
    assert found.field == "job_spec.worker_pool_specs[0].machine_spec.tpu_topology"
    assert "2x2" in found.description and "received no tpu_topology" in found.description
    assert "worker_spec_utils" in found.source and "2026-11-26" in found.source


# -- machine types and accelerators ------------------------------------------------------------------------------
def test_machine_type_for_training() -> None:
    only(check(job(pool("ct5p-hightpu-4t", topology="2x2x1"))), "machine-type-for-training")
    only(check(job(pool("n1-highcpu-8"))), "machine-type-for-training")
    assert check(job(pool("n1-standard-4"))) == []  # Google's example: n1-standard-4, no accelerator


def test_accelerator_for_training() -> None:
    # TPU v4 pods are in Google's enum but not offered for custom training.
    only(check(job(pool("n1-standard-8", "TPU_V4_POD", 8))), "accelerator-for-training")
    only(check(job(pool("n1-standard-8", 10, 8))), "accelerator-for-training")
    assert check(job(pool("n1-standard-8", "NVIDIA_TESLA_P4", 1))) == []


def test_accelerator_for_machine() -> None:
    only(check(job(pool("e2-standard-8", "NVIDIA_TESLA_T4", 1))), "accelerator-for-machine")
    assert check(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))) == []


def test_accelerator_required_on_an_accelerator_optimized_machine() -> None:
    only(check(job(pool("a2-highgpu-1g"))), "accelerator-required")
    assert check(job(pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1))) == []  # Google's example


def test_accelerator_count() -> None:
    only(check(job(pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 2))), "accelerator-count")
    only(check(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 3))), "accelerator-count")
    assert check(job(pool("a2-highgpu-2g", "NVIDIA_TESLA_A100", 2))) == []


def test_enum_numbers_are_accepted_as_names() -> None:
    assert check(job(pool("n1-standard-8", 5, 1))) == []  # 5: NVIDIA_TESLA_T4
    only(check(job(pool("n1-standard-8", 1, 1))), "accelerator-no-longer-offered")  # 1: K80


def test_n1_gpu_limits() -> None:
    found = only(check(job(pool("n1-standard-96", "NVIDIA_TESLA_V100", 1))), "n1-gpu-limits")
    assert "at most 12 vCPUs" in found.description and "n1-standard-8" in found.description
    assert check(job(pool("n1-standard-8", "NVIDIA_TESLA_V100", 1))) == []
    assert check(job(pool("n1-standard-96", "NVIDIA_TESLA_V100", 8))) == []


def test_accelerator_no_longer_offered() -> None:
    found = only(check(job(pool("n1-standard-8", "NVIDIA_TESLA_K80", 1))), "accelerator-no-longer-offered")
    assert "T4_1X" in found.description


def test_accelerator_end_of_support_is_judged_on_the_day() -> None:
    body = job(pool("n1-standard-8", "NVIDIA_TESLA_P100", 1))
    assert check_custom_job(body, location="us-central1", today=datetime.date(2026, 9, 14)) == []
    found = only(check_custom_job(body, location="us-central1", today=datetime.date(2026, 9, 15)),
                 "accelerator-end-of-support")
    assert "2026-09-15" in found.description


# -- regions -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("location", "body"), [
    ("europe-west4", job(pool("ct5lp-hightpu-4t", topology="2x2"))),
    ("me-central2", job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1))),
    ("europe-west2", job(pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1))),
])
def test_accelerator_region(location: str, body: dict[str, Any]) -> None:
    found = only(check(body, location), "accelerator-region")
    assert location in found.description


def test_accelerator_region_accepted_where_google_serves_it() -> None:
    assert check(job(pool("ct5lp-hightpu-4t", topology="2x2")), "us-west4") == []
    assert check(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1)), "europe-west4") == []


def test_region_serves_training() -> None:
    only(check(job(pool("n1-standard-4")), "mars-north1"), "region-serves-training")
    assert check(job(pool("n1-standard-4")), "asia-south2") == []


# -- TPUs --------------------------------------------------------------------------------------------------------
def test_tpu_topology_required_for_v5e_and_v6e() -> None:
    only(check(job(pool("ct6e-standard-4t")), "us-east5"), "tpu-topology-required")
    # Google's examples: ct5lp-hightpu-4t with tpu_topology 2x2; ct6e-standard-4t with 2x2.
    assert check(job(pool("ct5lp-hightpu-4t", topology="2x2"))) == []
    assert check(job(pool("ct6e-standard-4t", topology="2x2")), "us-east5") == []


def test_tpu_topology_valid() -> None:
    only(check(job(pool("ct5lp-hightpu-8t", topology="2x2"))), "tpu-topology-valid")
    assert check(job(pool("ct5lp-hightpu-4t", topology="4x4"))) == []  # 4 hosts, one replica


def test_tpu_topology_not_taken() -> None:
    only(check(job(pool("n1-standard-8", topology="2x2"))), "tpu-topology-not-taken")
    assert check(job(pool("cloud-tpu", "TPU_V3", 8))) == []  # Google's TPU v3 example


def test_tpu_one_pool_one_replica() -> None:
    chief_and_tpu = job(pool("n1-standard-4"), pool("cloud-tpu", "TPU_V3", 8))
    found = only(check(chief_and_tpu), "tpu-one-pool-one-replica")
    assert found.field == "job_spec.worker_pool_specs[1]"
    only(check(job(pool("ct5lp-hightpu-4t", replicas=2, topology="2x2"))), "tpu-one-pool-one-replica")
    only(check(job(pool("ct5lp-hightpu-4t", topology="2x2"), {}, {}, pool("n1-standard-4"))),
         "tpu-one-pool-one-replica")
    assert check(job(pool("ct5lp-hightpu-4t", topology="4x4"))) == []


def test_spot_multi_host_tpu() -> None:
    found = only(check(job(pool("ct5lp-hightpu-4t", topology="4x4"), strategy="SPOT")), "spot-multi-host-tpu")
    assert "4 hosts" in found.description
    assert check(job(pool("ct5lp-hightpu-4t", topology="2x2"), strategy="SPOT")) == []
    only(check(job(pool("ct5lp-hightpu-4t", topology="4x4"), strategy=4)), "spot-multi-host-tpu")


def test_tpu_framework() -> None:
    pools = [pool("ct6e-standard-4t", topology="2x2")]
    found = only(check_framework(pools, "tensorflow"), "tpu-framework")
    assert "TPU_V5E_8X" in found.description
    assert check_framework(pools, "jax") == []
    assert check_framework([pool("ct5lp-hightpu-8t", topology="2x4")], "tensorflow") == []


# -- disks -------------------------------------------------------------------------------------------------------
def test_boot_disk_type() -> None:
    h200 = ("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8)
    only(check(job(pool(*h200, disk="pd-ssd"))), "boot-disk-type")
    only(check(job(pool("a4-highgpu-8g", "NVIDIA_B200", 8))), "boot-disk-type")  # DiskSpec's default: pd-ssd
    assert check(job(pool(*h200))) == []  # DiskSpec's default on A3 Ultra: hyperdisk-balanced
    assert check(job(pool("a4-highgpu-8g", "NVIDIA_B200", 8, disk="hyperdisk-balanced"))) == []
    assert check(job(pool("n1-standard-4", disk="pd-standard", size=100))) == []


def test_boot_disk_size() -> None:
    only(check(job(pool("n1-standard-4", disk="pd-ssd", size=50))), "boot-disk-size")
    assert check(job(pool("n1-standard-4", disk="pd-ssd", size=200))) == []


# -- capacity ----------------------------------------------------------------------------------------------------
def test_reservation_required_for_gb200() -> None:
    gb200 = ("a4x-highgpu-4g", "NVIDIA_GB200", 4)
    only(check(job(pool(*gb200, disk="hyperdisk-balanced"))), "reservation-required")
    assert check(job(pool(*gb200, disk="hyperdisk-balanced", reservation="SPECIFIC_RESERVATION"))) == []


def test_tpu_pod_tensorflow_image() -> None:
    # Google's example ("Training with TPU accelerators", TPU Pod): FROM the pod base image, CMD; a TPU Pod job on
    # Python with ENTRYPOINT, or a container spec that sets a command, is refused; a single-host slice is not a pod.
    pod = [pool("ct5lp-hightpu-4t", topology="4x4")]
    base = "us-docker.pkg.dev/vertex-ai/training/tf-tpu-pod-base-cp310:latest"
    assert check_tpu_pod_image(pod, base_image=base, runs_as_cmd=True) == []
    assert check_tpu_pod_image(pod, base_image=base.replace("us-", "asia-", 1), runs_as_cmd=True) == []
    found = only(check_tpu_pod_image(pod, base_image="python:3.12-slim", runs_as_cmd=False),
                 "tpu-pod-tensorflow-image")
    assert found.received == "FROM python:3.12-slim, the command as ENTRYPOINT"
    commanded = [{**pod[0], "container_spec": {"command": ["python3", "x.py"]}}]
    only(check_tpu_pod_image(commanded, base_image=base, runs_as_cmd=True), "tpu-pod-tensorflow-image")
    assert check_tpu_pod_image([pool("ct5lp-hightpu-4t", topology="2x2")], base_image="python:3.12-slim",
                               runs_as_cmd=False) == []


def test_arm_image_required() -> None:
    pools = [pool("a4x-highgpu-4g", "NVIDIA_GB200", 4)]
    only(check_image_architecture(pools, frozenset({"amd64"})), "arm-image-required")
    assert check_image_architecture(pools, frozenset({"arm64"})) == []


def test_flex_start_accelerator_and_one_machine() -> None:
    only(check(job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 1), strategy="FLEX_START")), "flex-start-accelerator")
    a100 = pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)
    only(check(job(a100, pool("a2-highgpu-2g", "NVIDIA_TESLA_A100", 2), strategy="FLEX_START")),
         "flex-start-one-machine")
    assert check(job(a100, a100, strategy="FLEX_START")) == []


def test_flex_start_timeout_and_wait() -> None:
    a100 = pool("a2-highgpu-1g", "NVIDIA_TESLA_A100", 1)
    long = job(a100, scheduling={"strategy": "FLEX_START", "timeout": f"{8 * 86400}s"})
    only(check(long), "flex-start-timeout")
    only(check(job(a100, scheduling={"max_wait_duration": "3600s"})), "flex-start-max-wait")
    assert check(job(a100, scheduling={"strategy": "FLEX_START", "timeout": "86400s",
                                       "max_wait_duration": "3600s"})) == []


# -- the SDK's own checks ----------------------------------------------------------------------------------------
def test_experiment_with_tensorboard() -> None:
    both = job(pool("n1-standard-4"), experiment="projects/p/locations/l/metadataStores/default/contexts/e",
               tensorboard="projects/p/locations/l/tensorboards/1", service_account="sa@p.iam.gserviceaccount.com")
    only(check_sdk_rules(both), "experiment-with-tensorboard")
    one = job(pool("n1-standard-4"), experiment="projects/p/locations/l/metadataStores/default/contexts/e",
              service_account="sa@p.iam.gserviceaccount.com")
    assert check_sdk_rules(one) == []


def test_experiment_service_account() -> None:
    body = job(pool("n1-standard-4"), experiment="projects/p/locations/l/metadataStores/default/contexts/e")
    only(check_sdk_rules(body), "experiment-service-account")


# -- names -------------------------------------------------------------------------------------------------------
def test_labels() -> None:
    assert rules(check_labels({"Team": "ml"})) == ["label-key"]
    assert rules(check_labels({"team": "ML"})) == ["label-value"]
    assert rules(check_labels({"k": "x" * 64})) == ["label-value"]  # the Labels overview's 63 (the proto: 64)
    assert check_labels({"k" * 63: "x" * 63}) == []
    assert rules(check_labels({f"k{i}": "v" for i in range(65)})) == ["labels-count"]
    assert check_labels({"équipe": "données", "team_1": "", "a-b": "c_d"}) == []  # international characters


def test_display_name() -> None:
    body = job(pool("n1-standard-4"))
    only(check({**body, "display_name": "x" * 129}), "display-name")
    only(check({**body, "display_name": ""}), "display-name")
    assert check({**body, "display_name": "ü" * 128}) == []


def test_first_pool_required() -> None:
    only(check(job({}, pool("n1-standard-4"))), "first-pool-required")


def test_worker_pool_specs_takes_its_field_and_strategy() -> None:
    found = check_worker_pool_specs([pool("ct5lp-hightpu-4t", topology="4x4")], location="us-central1",
                                    today=TODAY, field="trial_job_spec.worker_pool_specs",
                                    scheduling_strategy="SPOT")
    assert only(found, "spot-multi-host-tpu").field.startswith("trial_job_spec.worker_pool_specs[0]")


# -- persistent resources ----------------------------------------------------------------------------------------
def test_persistent_resource() -> None:
    resource = {"display_name": "c", "resource_pools": [pool("n1-standard-96", "NVIDIA_TESLA_V100", 1)]}
    found = only(check_persistent_resource(resource, location="us-central1", today=TODAY), "n1-gpu-limits")
    assert found.field.startswith("resource_pools[0]")
    ok = {"resource_pools": [pool("n1-standard-8", "NVIDIA_TESLA_T4", 1)],
          "resource_runtime_spec": {"service_account_spec": {"enable_custom_service_account": True}}}
    assert check_persistent_resource(ok, location="us-central1", today=TODAY) == []
    only(check_persistent_resource({"resource_pools": []}, location="us-central1", today=TODAY),
         "resource-pool-required")


# -- the emulator's input: proto-plus to_dict, default fields and enum numbers included ---------------------------
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "vertex"


@pytest.mark.parametrize("name", ["tpu_v5e_multihost", "parameter_server", "evaluator_only", "flex_start",
                                  "h200_hyperdisk", "reservation_specific", "tpu"])
def test_a_proto_plus_dict_of_each_golden_passes(name: str) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(GOLDEN.joinpath(f"{name}.json").read_text())
    as_dict = type(job).to_dict(job, preserving_proto_field_name=True)  # enums as numbers, defaults included
    assert check_custom_job(as_dict, location="us-central1", today=TODAY) == []


def test_a_proto_plus_dict_is_refused_as_the_json_is() -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(GOLDEN.joinpath("tpu_v5e.json").read_text())
    job.job_spec.worker_pool_specs[0].machine_spec.tpu_topology = ""
    as_dict = type(job).to_dict(job, preserving_proto_field_name=True)
    only(check_custom_job(as_dict, location="us-central1", today=TODAY), "tpu-topology-required")
