"""The plan holds the request the target's backend sends: for Vertex AI the CustomJob as Google receives it
(`--json`'s `request`, `--show-request` in the text plan), and that exact request is one Google's client can send
and the emulator accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tfcloud.cli import main

TPU_JOB = ["--vertex", "--project", "proj-one", "--region", "us-central1", "--worker-count", "1", "--worker-config",
           "TPU_V5E_16X", "--timeout", "3600", "--restart-on-worker-restart", "--label", "équipe=données"]


def _planned(script: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    assert main(["submit", str(script), *flags, "--dry-run", "--json"]) == 0
    plan: dict[str, Any] = json.loads(capsys.readouterr().out)
    return plan


def test_the_json_plan_holds_the_customjob_with_tpu_topology_disk_and_scheduling(
        script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = _planned(script, capsys, *TPU_JOB)["request"]
    (pool,) = request["job_spec"]["worker_pool_specs"]
    assert pool["machine_spec"] == {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x4"}
    assert pool["disk_spec"] == {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}
    assert pool["container_spec"]["image_uri"].startswith("us-central1-docker.pkg.dev/proj-one/tfcloud/train:")
    assert request["job_spec"]["scheduling"] == {"timeout": "3600s", "restart_job_on_worker_restart": True}
    assert request["labels"] == {"équipe": "données", "tfcloud-submission": "planned"}
    assert request["display_name"] == "tfcloud-train"


def test_the_text_plan_shows_the_request_when_asked(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = _planned(script, capsys, *TPU_JOB)["request"]
    assert main(["submit", str(script), *TPU_JOB, "--dry-run", "--show-request"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    shown = text[text.index("\n{\n") + 1:text.index("\n}\n") + 2]  # the request, printed whole after the plan
    assert json.loads(shown) == request
    assert main(["submit", str(script), "--dry-run", "--show-request"]) == 0
    captured = capsys.readouterr()
    assert "Request: none (the local target sends no one request to start a job)" in captured.out + captured.err
    assert _planned(script, capsys)["request"] is None


@pytest.mark.emulator
def test_the_emulator_accepts_the_planned_request_through_googles_client(
        tfcloud_emulator: Any, script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    request = _planned(script, capsys, *TPU_JOB)["request"]
    client = tfcloud_emulator.job_client()
    try:
        created = client.create_custom_job(parent=tfcloud_emulator.parent,
                                           custom_job=aiplatform_v1.CustomJob.from_json(json.dumps(request)))
        sent = json.loads(aiplatform_v1.CustomJob.to_json(created, preserving_proto_field_name=True))
        pool = sent["job_spec"]["worker_pool_specs"][0]
        assert pool["machine_spec"]["tpu_topology"] == "4x4"
        assert pool["disk_spec"] == {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}
        assert sent["job_spec"]["scheduling"]["timeout"] == "3600s"
        client.cancel_custom_job(name=created.name)
    finally:
        client.transport.close()
