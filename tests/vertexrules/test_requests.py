"""tfcloud.google.rules.requests: the request fields beyond machines, as the emulator enforces them."""

from __future__ import annotations

from typing import Any

import pytest

from tfcloud.google.rules.requests import REQUEST_RULES, REQUEST_SOURCES, check_job_fields


def _pool(**changes: Any) -> dict[str, Any]:
    pool: dict[str, Any] = {"replica_count": 1, "machine_spec": {"machine_type": "n1-standard-4"},
                            "container_spec": {"image_uri": "us-docker.pkg.dev/p/r/i:1"}}
    pool.update(changes)
    return pool


def test_a_plain_spec_breaks_nothing() -> None:
    assert check_job_fields({"worker_pool_specs": [_pool(), {}, _pool(replica_count=2)],
                             "service_account": "trainer@my-project.iam.gserviceaccount.com",
                             "network": "projects/123456/global/networks/my-vpc",
                             "base_output_directory": {"output_uri_prefix": "gs://bucket/out"}}) == []


@pytest.mark.parametrize(("spec", "field", "rule"), [
    ({"worker_pool_specs": [_pool(replica_count=2)]}, "job_spec.worker_pool_specs[0].replica_count", "replica-count"),
    ({"worker_pool_specs": [_pool(), _pool(replica_count=0)]}, "job_spec.worker_pool_specs[1].replica_count",
     "replica-count"),
    ({"worker_pool_specs": [_pool(machine_spec={})]}, "job_spec.worker_pool_specs[0].machine_spec.machine_type",
     "worker-pools"),
    ({"worker_pool_specs": [_pool()] * 5}, "job_spec.worker_pool_specs", "worker-pools"),
    ({"worker_pool_specs": [_pool(container_spec={})]}, "job_spec.worker_pool_specs[0]", "task"),
    ({"worker_pool_specs": [_pool(machine_spec={"machine_type": "n1-standard-4", "accelerator_count": 1})]},
     "job_spec.worker_pool_specs[0].machine_spec.accelerator_type", "accelerator-pair"),
    ({"worker_pool_specs": [_pool(machine_spec={"machine_type": "n1-standard-4",
                                                "accelerator_type": "NVIDIA_TESLA_T4"})]},
     "job_spec.worker_pool_specs[0].machine_spec.accelerator_type", "accelerator-pair"),
    ({"worker_pool_specs": [_pool()], "service_account": "Trainer"}, "job_spec.service_account", "service-account"),
    ({"worker_pool_specs": [_pool()], "network": "projects/my-project/global/networks/vpc"}, "job_spec.network",
     "network"),
    ({"worker_pool_specs": [_pool()], "base_output_directory": {"output_uri_prefix": "s3://b/o"}},
     "job_spec.base_output_directory.output_uri_prefix", "output-uri"),
])
def test_each_rule_names_its_field_rule_and_source(spec: dict[str, Any], field: str, rule: str) -> None:
    found = check_job_fields(spec)
    assert [(v.field, v.rule) for v in found] == [(field, rule)]
    assert found[0].source == str(REQUEST_SOURCES[REQUEST_RULES[rule].source])
    assert "2026-11-26" in found[0].source


def test_every_rule_has_a_source() -> None:
    assert {rule.source for rule in REQUEST_RULES.values()} <= set(REQUEST_SOURCES)
