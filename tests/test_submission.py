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
        "image": None, "labels": {}, "job_id": job.job_id,
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
