"""The plan in brief that a submission keeps (tfcloud.flow.submission), read back through the SDK from any process:
what ``tfcloud ui`` shows on a job's page."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import tfcloud
from tfcloud import sdk


def test_a_local_submission_keeps_its_plan_beside_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    monkeypatch.setenv("TFCLOUD_WORKER_COUNT", "1")
    with tfcloud.submit(script, distribution_strategy=None, entry_point_args=["--epochs", "2"]) as job:
        job.wait(60)
    plan = sdk.submitted_plan(job.job_id)
    assert plan == {
        "entry_point": str(script), "args": ["--epochs", "2"], "target": "local", "strategy": "(the script's own)",
        "strategy_reason": "distribution_strategy=None: the script sets up its own strategy",
        "pools": [{"role": "chief", "replicas": 1, "machine_type": "n1-standard-4", "accelerator": "-"},
                  {"role": "worker", "replicas": 1, "machine_type": "n1-standard-4", "accelerator": "-"}],
        "image": None, "labels": {}, "job_id": job.job_id, "secrets": {}, "env_names": [], "data": [],
        "request": None,
        "sources": {"state_dir": {"value": os.environ["TFCLOUD_HOME"], "from": "TFCLOUD_HOME"},
                    "worker_count": {"value": 1, "from": "TFCLOUD_WORKER_COUNT"}},
        "rerun": {"head": ["tfcloud", "submit", str(script), "--target", "local", "--chief-config", "CPU",
                           "--worker-count", "1", "--worker-config", "CPU", "--strategy", "none"],
                  "args": ["--epochs", "2"], "not_reproduced": []},
    }
    record = Path(os.environ["TFCLOUD_HOME"]) / "jobs" / job.job_id / "plan.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600


def test_a_job_without_a_readable_record_has_no_plan() -> None:
    assert sdk.submitted_plan("1234567890") is None  # submitted elsewhere
    record = Path(os.environ["TFCLOUD_HOME"]) / "submissions" / "987.json"
    record.parent.mkdir(parents=True)
    record.write_text("{not json")
    assert sdk.submitted_plan("987") is None


def test_the_record_keeps_secrets_by_reference_env_names_data_and_the_request_without_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the dashboard shows of a submitted job is what the plan shows: secrets by reference, env names (their
    values only in the rerun command, which needs them; not in the request's container env), data sets, Vertex
    AI's request."""
    import json

    from tfcloud.flow.settings import Settings
    from tfcloud.flow.submission import summary
    from tfcloud.flow.validate import build_job

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="CPU", project="my-project",
                             region="us-central1", env={"MODE": "very-secret-value"},
                             secrets={"TOKEN": "projects/my-project/secrets/t/versions/1"},
                             data="train=gs://bucket/train")
    request = target.request(spec, image_uri="us-docker.pkg.dev/my-project/r/train:1")
    assert request is not None and "very-secret-value" in json.dumps(request)  # the request Google gets has it
    kept = summary(spec, target, Settings(target="vertex"), image="us-docker.pkg.dev/my-project/r/train:1",
                   request=request)
    assert kept["secrets"] == {"TOKEN": "projects/my-project/secrets/t/versions/1"}
    assert kept["env_names"] == ["MODE"]
    assert kept["data"] == [{"name": "train", "variable": "TFCLOUD_DATA_TRAIN", "source": "gs://bucket/train"}]
    container = kept["request"]["job_spec"]["worker_pool_specs"][0]["container_spec"]
    assert {"name": "MODE", "value": "(not shown)"} in container["env"]
    assert "very-secret-value" not in json.dumps({k: v for k, v in kept.items() if k != "rerun"})
    assert "MODE=very-secret-value" in kept["rerun"]["head"]  # the command that submits it again needs it (0600)
