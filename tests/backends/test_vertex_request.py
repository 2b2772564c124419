"""The CustomJob request as a value: golden files per strategy, and the real client's message parses it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tfcloud.backends.vertex_request import custom_job_request, replica_name
from tfcloud.validate import build_spec

GOLDEN = Path(__file__).parent.parent / "golden" / "vertex"
UPDATE = os.environ.get("TFCLOUD_UPDATE_GOLDEN") == "1"
IMAGE = "us-central1-docker.pkg.dev/my-project/tfcloud/train:0123456789abcdef"

CASES: dict[str, dict[str, Any]] = {
    "one_device_gpu": {},
    "one_device_cpu": {"chief_config": "CPU", "entry_point_args": ["--epochs", "3", "--name=a b"]},
    "mirrored": {"chief_config": "T4_4X", "job_labels": {"team": "ml"}},
    "multi_worker_mirrored": {"worker_count": 2, "worker_config": "A100_1X", "chief_config": "A100_1X",
                              "service_account": "trainer@my-project.iam.gserviceaccount.com",
                              "env": {"TF_CPP_MIN_LOG_LEVEL": "2"}},
    "parameter_server": {"worker_count": 2, "worker_config": "CPU", "chief_config": "CPU", "ps_count": 1,
                         "evaluator_count": 1, "timeout": 7200, "spot": True, "restart_on_worker_restart": True,
                         "network": "projects/12345/global/networks/vpc", "base_output_dir": "gs://bkt/out"},
    "tpu": {"chief_config": "CPU", "worker_count": 1, "worker_config": "TPU"},
    "evaluator_only": {"chief_config": "CPU", "evaluator_count": 1},
}


def _request(name: str, script: Path) -> dict[str, Any]:
    spec = build_spec(entry_point=str(script), target="vertex", **CASES[name])
    return custom_job_request(spec, image_uri=IMAGE, submission_id="sub-0001")


@pytest.mark.parametrize("name", sorted(CASES))
def test_request_matches_golden(name: str, script: Path) -> None:
    request = _request(name, script)
    golden = GOLDEN / f"{name}.json"
    text = json.dumps(request, indent=2, sort_keys=True) + "\n"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"request changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_client_message_reads_the_request(name: str, script: Path) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(json.dumps(_request(name, script)))
    pools = job.job_spec.worker_pool_specs
    assert pools[0].replica_count == 1  # the chief pool has one replica
    assert pools[0].container_spec.image_uri == IMAGE
    assert list(pools[0].container_spec.args) == CASES[name].get("entry_point_args", [])
    assert job.labels["tfcloud-submission"] == "sub-0001"
    if name == "parameter_server":
        assert [p.replica_count for p in pools] == [1, 2, 1, 1]
        assert job.job_spec.scheduling.timeout.total_seconds() == 7200
        assert job.job_spec.scheduling.strategy == aiplatform_v1.Scheduling.Strategy.SPOT
    if name == "evaluator_only":
        assert [p.replica_count for p in pools] == [1, 0, 0, 1]
    if name == "tpu":
        assert pools[1].machine_spec.accelerator_type == aiplatform_v1.AcceleratorType.TPU_V3


@pytest.mark.parametrize(("task", "replica"), [
    ("workerpool0-0", "chief-0"), ("workerpool1-1", "worker-1"), ("workerpool2-0", "ps-0"),
    ("workerpool3-0", "evaluator-0"), ("service", "service"),
])
def test_replica_names_match_local_runs(task: str, replica: str) -> None:
    assert replica_name(task) == replica
