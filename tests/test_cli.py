from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tfcloud import COMMON_MACHINE_CONFIGS, __version__
from tfcloud.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"tfcloud {__version__}\n"


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("submit", "machines", "status", "logs", "cancel"):
        assert command in out


def test_console_script_runs(script: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", str(script), "--worker-count", "-3"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == "Error: Invalid `worker_count`: expected an integer ≥ 0, received -3.\n"


def test_machines_json_is_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == list(COMMON_MACHINE_CONFIGS)
    assert data["T4_1X"] == {"machine_type": "n1-standard-8", "cpu_cores": 8, "memory_gb": 30,
                             "accelerator_type": "NVIDIA_TESLA_T4", "accelerator_count": 1}
    assert data["TPU_V5P_8X"] == {"machine_type": "ct5p-hightpu-4t", "cpu_cores": None, "memory_gb": None,
                                  "accelerator_type": "TPU_V5P", "accelerator_count": 4, "tpu_topology": "2x2x2",
                                  "tpu_hosts": 2}


def test_machines_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines"]) == 0
    out = capsys.readouterr().out
    assert "a3-highgpu-8g" in out and "H100_8X" in out


def test_dry_run_plan_json(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(script), "--vertex", "--worker-count", "2", "--worker-config", "T4_1X",
                 "--label", "team=ml", "--dry-run", "--json", "--", "--epochs", "3", "--name=a b"])
    assert code == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["strategy"] == "tf.distribute.MultiWorkerMirroredStrategy"
    assert plan["strategy_reason"] == "a chief and 2 worker(s)"
    assert plan["pools"] == [
        {"role": "chief", "replicas": 1, "machine_type": "n1-standard-8", "accelerator": "1 x NVIDIA_TESLA_T4"},
        {"role": "worker", "replicas": 2, "machine_type": "n1-standard-8", "accelerator": "1 x NVIDIA_TESLA_T4"},
    ]
    assert plan["args"] == ["--epochs", "3", "--name=a b"]
    assert plan["command"] == ["python", "tfcloud_launcher.py", "--epochs", "3", "--name=a b"]
    assert plan["labels"] == {"team": "ml"}
    assert any("tf-keras" in note for note in plan["notes"])


def test_dry_run_plan_text_shows_strategy_pools_launcher_and_args(script: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(script), "--worker-count", "1", "--ps-count", "1", "--dry-run", "--", "-v"])
    err = capsys.readouterr().err
    assert code == 0
    assert "Strategy: tf.distribute.ParameterServerStrategy (1 parameter server(s) requested)" in err
    assert "Each replica runs: python tfcloud_launcher.py -v" in err
    assert 'Script args: ["-v"]' in err
    assert "tf.distribute.Server(" in err  # the launcher itself is shown
    for role in ("chief", "worker", "ps"):
        assert f"│ {role} " in err


def test_sdk_dry_run_returns_the_plan(script: Path) -> None:
    import tfcloud
    from tfcloud.plan import Plan

    plan = tfcloud.run(entry_point=str(script), worker_count=1, worker_config="CPU", dry_run=True)
    assert isinstance(plan, Plan)
    assert plan.strategy == "tf.distribute.MultiWorkerMirroredStrategy"
    assert "MultiWorkerMirroredStrategy()" in plan.launcher


def test_run_is_a_no_op_inside_a_job(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfcloud

    monkeypatch.setenv("TFCLOUD_REMOTE", "1")
    assert tfcloud.remote() is True
    # Even invalid arguments do nothing inside a job: the job's own call must never fail or submit.
    assert tfcloud.run(entry_point="whatever.txt", worker_count=-1) is None


def test_local_job_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import tfcloud
    from tfcloud.backends.local import LocalJob
    from tfcloud.states import JobState

    (tmp_path / "hello.py").write_text("print('hello from', __import__('os').environ['TFCLOUD_REPLICA'])\n")
    handle = tfcloud.run(entry_point=str(tmp_path / "hello.py"), distribution_strategy=None, worker_count=1,
                         worker_config="CPU")
    assert isinstance(handle, tfcloud.Job) and isinstance(handle.handle, LocalJob)
    assert handle["job_id"] == handle.job_id and handle["docker_image"] is None  # tensorflow-cloud's result keys
    assert handle.wait(60).state is JobState.SUCCEEDED
    capsys.readouterr()

    assert main(["list", "--local", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["job_id"], row["state"], row["exit_code"]) for row in rows] == [(handle.job_id, "succeeded", 0)]

    assert main(["status", handle.job_id]) == 0
    assert capsys.readouterr().out == f"{handle.job_id}\tsucceeded\n"

    assert main(["logs", handle.job_id, "--replica", "worker-0"]) == 0
    assert capsys.readouterr().out.strip() == "worker-0 | hello from worker-0"

    assert main(["list", "--local", "--state", "running", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []

    assert main(["list", "--state", "sleeping"]) == 2
    assert capsys.readouterr().err.startswith("Error: Invalid `--state`: expected one of queued, provisioning")
