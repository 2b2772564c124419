from __future__ import annotations

import json
import re
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


def test_help_lists_every_command_without_importing_its_module() -> None:
    """`tfcloud --help` reads the commands' summaries from tfcloud/cli/_summaries.py: it imports no command
    module, and still lists each command with the start of its docstring."""
    code = ("import sys\nfrom tfcloud.cli import main\nassert main(['--help']) == 0\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.startswith('tfcloud.cli.') and not m.startswith('tfcloud.cli._')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    listed = {line.split()[0]: line for line in done.stdout.split("Commands:")[1].splitlines() if line.strip()}
    assert listed["submit"].split(None, 1)[1].startswith("Submit ENTRY_POINT as a distributed job")
    assert listed["stacks"].split(None, 1)[1].startswith("Print every thread's Python stack")
    assert {"build", "tune", "machines", "status", "logs", "cancel", "artifacts", "tensorboard", "list", "cost", "ui",
            "doctor", "docs", "emulator", "cluster"} <= set(listed)


def test_console_script_runs(script: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", str(script), "--worker-count", "-3"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == "Error: Invalid `worker_count`: expected an integer ≥ 0, received -3.\n"


def test_machines_json_is_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # Only what Google offers today: P100 after its end of support (2026-09-15) is left out.
    assert list(data) == [name for name in COMMON_MACHINE_CONFIGS if not name.startswith("P100")]
    assert data["T4_1X"] == {"machine_type": "n1-standard-8", "cpu_cores": 8, "memory_gb": 30,
                             "accelerator_type": "NVIDIA_TESLA_T4", "accelerator_count": 1}
    assert data["TPU_V5E_16X"] == {"machine_type": "ct5lp-hightpu-4t", "cpu_cores": None, "memory_gb": None,
                                   "accelerator_type": "TPU_V5_LITEPOD", "accelerator_count": 4,
                                   "tpu_topology": "4x4", "tpu_hosts": 4}


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
    assert plan["command_line"] == "python tfcloud_launcher.py --epochs 3 '--name=a b'"  # as a shell takes it
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
    for role in ("chief", "worker", "ps"):
        assert f"│ {role} " in err
    # The plan stays on screen: the generated launcher (hundreds of lines) only with --show-files.
    assert "tf.distribute.Server(" not in err
    assert err.splitlines()[-1].startswith("Generated: tfcloud_launcher.py (")
    assert err.splitlines()[-1].endswith(" lines); shown by --show-files (plan.launcher in Python)")
    assert len(err.splitlines()) < 40
    code = main(["submit", str(script), "--worker-count", "1", "--ps-count", "1", "--dry-run", "--show-files"])
    assert code == 0
    assert "tf.distribute.Server(" in capsys.readouterr().err  # the launcher itself is shown


def test_sdk_dry_run_returns_the_plan(script: Path) -> None:
    import tfcloud
    from tfcloud.flow.plan import Plan

    plan = tfcloud.run(entry_point=str(script), worker_count=1, worker_config="CPU", dry_run=True)
    assert isinstance(plan, Plan)
    assert plan.strategy == "tf.distribute.MultiWorkerMirroredStrategy"
    assert "MultiWorkerMirroredStrategy()" in plan.launcher
    # Readable where a script prints it, a REPL echoes it, a notebook shows it.
    assert repr(plan) == ("<Plan for train.py: local, tf.distribute.MultiWorkerMirroredStrategy, 2 replica(s); "
                          "print() it for the whole plan>")
    text = str(plan).splitlines()
    assert text[:5] == [
        f"Plan for {script} (target: local; nothing submitted)",
        "Strategy: tf.distribute.MultiWorkerMirroredStrategy (a chief and 1 worker(s))",
        "  role    replicas  machine type                            accelerator",
        "  chief   1         this machine (n1-standard-4 on Vertex)  -",
        "  worker  1         this machine (n1-standard-4 on Vertex)  -",
    ]
    assert "Each replica runs: python tfcloud_launcher.py" in text
    assert text[-1].startswith("Generated: tfcloud_launcher.py (")
    page = plan._repr_html_()
    assert "<th>role</th>" in page and "<td>worker</td>" in page and "MultiWorkerMirroredStrategy" in page
    printed: list[str] = []

    class Printer:  # IPython's RepresentationPrinter, as far as _repr_pretty_ uses it
        def text(self, value: str) -> None:
            printed.append(value)

    plan._repr_pretty_(Printer(), False)
    assert printed == [str(plan)]


def test_run_is_a_no_op_inside_a_job(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfcloud

    monkeypatch.setenv("TFCLOUD_REMOTE", "1")
    assert tfcloud.remote() is True
    # Even invalid arguments do nothing inside a job: the job's own call must never fail or submit.
    assert tfcloud.run(entry_point="whatever.txt", worker_count=-1) is None


def test_local_job_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import tfcloud
    from tfcloud.job.states import JobState
    from tfcloud.targets.local.backend import LocalJob

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
    assert capsys.readouterr().out.splitlines()[0] == f"{handle.job_id}  succeeded"

    assert main(["logs", handle.job_id, "--replica", "worker-0"]) == 0
    assert capsys.readouterr().out.strip() == "worker-0 | hello from worker-0"
    for follow in ([], ["-f"]):  # a replica the job does not have: refused, not an empty success
        assert main(["logs", handle.job_id, "--replica", "worker-9", *follow]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.splitlines() == [
            "Error: Invalid `--replica`: expected one of the job's replicas: chief-0, worker-0, received 'worker-9'.",
            f"`tfcloud status {handle.job_id} --json` lists them."]

    assert main(["list", "--local", "--state", "running", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []

    assert main(["list", "--state", "sleeping"]) == 2
    assert capsys.readouterr().err.startswith("Error: Invalid `--state`: expected one of queued, provisioning")


# --- what users see: -h, -q, -v, the failure tail -------------------------------------------------------------
def test_h_is_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: tfcloud [OPTIONS] COMMAND") and "-v, --verbose" in out and "-q, --quiet" in out
    assert main(["submit", "-h"]) == 0
    assert capsys.readouterr().out.startswith("Usage: tfcloud submit [OPTIONS]")


def test_a_failure_says_why_once_and_quiet_hides_progress(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "fail.py"
    script.write_text(  # the chief fails once the others have printed their line
        "import os, pathlib, sys, time\nme = os.environ['TFCLOUD_REPLICA']\nprint('hello from', me, flush=True)\n"
        f"done = pathlib.Path({str(tmp_path)!r})\n(done / me).touch()\n"
        "while me == 'chief-0' and not all((done / r).exists() for r in sys.argv[1:]):\n    time.sleep(0.05)\n"
        "sys.exit(3 if me == 'chief-0' else 0)\n")
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1", "--ps-count", "1",
                 "--", "worker-0", "ps-0"]) == 1
    out, err = capsys.readouterr()
    # The prefix has its final width from the first line; each replica's line is printed once.
    # (as wide as the label of a line that several replicas print alike: "3 replicas").
    assert sorted(out.splitlines()) == ["chief-0    | hello from chief-0", "ps-0       | hello from ps-0",
                                        "worker-0   | hello from worker-0"]
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    # The chief's last line was just streamed: the summary does not repeat it. Before it: how long each stage took.
    assert err.splitlines()[2:] == [f"Job {job_id} failed: chief-0 exited with code 3."]
    stages = r"Stages: submit \d+\.\ds · queued \d+\.\ds · run \d+\.\ds \(total \d+\.\ds\)"
    assert re.fullmatch(stages, err.splitlines()[1]), err

    assert main(["-q", "submit", str(script), "--strategy", "none"]) == 1
    out, err = capsys.readouterr()
    assert out == "chief-0 | hello from chief-0\n"
    assert err.startswith("Job local-fail-") and err.endswith(" failed: chief-0 exited with code 3.\n")
    assert "Submitted" not in err

    assert main(["logs", job_id, "--replica", "worker-0", "-f"]) == 1  # another replica followed: the tail says why
    out, err = capsys.readouterr()
    assert out == "worker-0 | hello from worker-0\n"
    assert err == (f"Job {job_id} failed: chief-0 exited with code 3.\nLast 1 line of chief-0:\n"
                   "  chief-0 | hello from chief-0\n")


def test_verbose_shows_retries(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI emulator needs tfcloud[cloud]")
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-retry", storage=False) as emulator:
        monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)
        monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-retry")
        emulator.faults.fail("ListCustomJobs", code="UNAVAILABLE", times=1)
        assert main(["-v", "list", "--vertex", "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) == []
        assert "UNAVAILABLE; retrying" in " ".join(err.split()), err

        emulator.faults.fail("ListCustomJobs", code="UNAVAILABLE", times=1)
        assert main(["list", "--vertex", "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) == [] and err == ""  # retried as well, without a word


def test_the_tfcloud_logger_is_configured_once_and_prints_each_warning_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from tfcloud.view.console import configure, reset

    logger = logging.getLogger("tfcloud")
    try:
        configure(verbosity=0)
        configure(verbosity=0)  # every command configures it again: still one handler
        logger.info("a retry")
        logger.warning("a warning")
        err = capsys.readouterr().err
        assert err.count("a warning") == 1 and "a retry" not in err
        configure(verbosity=-1)
        logger.warning("hidden")
        logger.error("an error")
        err = capsys.readouterr().err
        assert "hidden" not in err and err.count("an error") == 1
    finally:
        reset()
    assert logger.propagate and logger.level == logging.NOTSET
    assert [h for h in logger.handlers if h.get_name() == "tfcloud-console"] == []
