"""The local job store under damage: private files, corrupt job files, a supervisor that never started."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from tests.targets.conftest import Submit
from tfcloud.cli import main
from tfcloud.job.states import JobState
from tfcloud.targets.local.backend import LocalBackend


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_job_directories_and_logs_are_private(submit: Submit, tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text("print('secret token 123')\n")
    handle = submit(script)
    assert handle.wait(60).state is JobState.SUCCEEDED
    assert _mode(handle.job_dir) == 0o700
    assert _mode(handle.job_dir.parent) == 0o700  # the jobs directory tfcloud made
    assert _mode(handle.log_dir) == 0o700
    files = [p for p in handle.job_dir.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"job.json", "status.json", "lines.jsonl", "chief-0.log", "supervisor.log",
                                       "tfcloud_launcher.py"}
    assert {p.name: oct(_mode(p)) for p in files} == {p.name: oct(0o600) for p in files}


def _fake_job(home: Path, job_id: str, *, status: object, submitted_at: float | None = None) -> Path:
    """A job directory as the backend writes it, without running anything."""
    job_dir = home / "jobs" / job_id
    job_dir.mkdir(parents=True)
    (job_dir / "job.json").write_text(json.dumps({
        "job_id": job_id, "replicas": [{"name": "chief-0", "role": "chief", "env": {}}],
        "submitted_at": time.time() if submitted_at is None else submitted_at}))
    if isinstance(status, str):
        (job_dir / "status.json").write_text(status)
    else:
        (job_dir / "status.json").write_text(json.dumps(status))
    return job_dir


def _status(job_id: str, state: str, pid: int | None = None) -> dict[str, object]:
    return {"job_id": job_id, "state": state, "exit_code": 0 if state == "succeeded" else None,
            "failed_replica": None, "message": "", "supervisor_pid": pid, "started_at": None, "ended_at": None,
            "replicas": {"chief-0": {"role": "chief", "pid": None, "state": "exited", "exit_code": 0}}}


def test_corrupt_status_and_job_files_do_not_break_list_or_status(capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["TFCLOUD_HOME"])
    _fake_job(home, "local-good-20250101-000000-aaaa", status=_status("local-good-20250101-000000-aaaa",
                                                                      "succeeded"))
    _fake_job(home, "local-status-20250101-000000-bbbb", status="{not json")
    _fake_job(home, "local-shape-20250101-000000-cccc", status=["a list"])
    broken = _fake_job(home, "local-plan-20250101-000000-dddd", status=_status("x", "succeeded"))
    (broken / "job.json").write_text("\x00garbage")

    assert main(["list", "--local", "--json"]) == 0
    rows = {row["job_id"]: row["state"] for row in json.loads(capsys.readouterr().out)}
    assert rows == {"local-good-20250101-000000-aaaa": "succeeded", "local-status-20250101-000000-bbbb": "failed",
                    "local-shape-20250101-000000-cccc": "failed"}
    assert main(["list", "--local"]) == 0  # the table too
    assert "Traceback" not in capsys.readouterr().err

    assert main(["status", "local-status-20250101-000000-bbbb"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0] == "local-status-20250101-000000-bbbb  failed"
    assert "status.json cannot be read" in out.err

    assert main(["status", "local-plan-20250101-000000-dddd"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: Local job local-plan-20250101-000000-dddd cannot be read: its job.json is missing "
                          "or corrupt.")
    assert "Traceback" not in err


def test_a_job_whose_supervisor_never_started_ends_instead_of_provisioning_forever(
        capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["TFCLOUD_HOME"])
    stuck, cancelled = "local-stuck-20250101-000000-eeee", "local-cancel-20250101-000000-abcd"
    for job_id in (stuck, cancelled):
        _fake_job(home, job_id, status=_status(job_id, "starting"), submitted_at=time.time() - 3600)
    fresh = "local-fresh-20250101-000000-ffff"
    _fake_job(home, fresh, status=_status(fresh, "starting"))

    backend = LocalBackend()
    assert backend.attach(fresh).info().state is JobState.PROVISIONING  # it may still be starting
    assert main(["status", stuck]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0] == f"{stuck}  failed"
    assert "The tfcloud supervisor never started" in out.err
    assert main(["cancel", cancelled]) == 0  # a job that never started has ended (failed): cancel says so
    out = capsys.readouterr()
    assert out.out == f"{cancelled}\tfailed\n"
    assert out.err == f"Job {cancelled} had already ended (failed): nothing to cancel.\n"


def test_a_supervisor_that_cannot_start_leaves_a_failed_job(tmp_path: Path) -> None:
    from tfcloud.entry.launcher import render_launcher
    from tfcloud.errors import SubmitError
    from tfcloud.flow.validate import build_spec
    from tfcloud.job.artifacts import PreparedJob

    script = tmp_path / "hello.py"
    script.write_text("print('hi')\n")
    spec = build_spec(entry_point=script)
    launcher = tmp_path / "tfcloud_launcher.py"
    launcher.write_text(render_launcher(spec, script=str(script)))
    backend = LocalBackend()
    # A value validation refuses, slipped in past it: the supervisor cannot be started with it.
    object.__setattr__(spec, "env", {"A": "b\0c"})
    with pytest.raises(SubmitError):
        backend.submit(PreparedJob(spec=spec, workdir=spec.workdir, launcher=launcher, script=script))
    (job_id,) = backend.job_ids()
    info = backend.attach(job_id).info()
    assert info.state is JobState.FAILED
    assert info.message is not None and "could not be started" in info.message


def test_the_supervisor_runs_by_path_on_the_standard_library_alone(tmp_path: Path) -> None:
    """The backend starts it as ``python -I supervisor.py JOB_DIR``: copied away from the package, with no
    site-packages (``-S``: no tfcloud to import), it and its sibling modules load, and it says how to call it."""
    import shutil
    import subprocess
    import sys

    from tfcloud.replicas import linepump, stacks, supervisor

    for module in (supervisor, linepump, stacks):
        shutil.copy(module.__file__, tmp_path)  # type: ignore[arg-type]
    done = subprocess.run([sys.executable, "-I", "-S", str(tmp_path / "supervisor.py")], capture_output=True,
                          text=True, check=False)
    assert (done.returncode, done.stderr) == (2, "usage: _supervisor.py JOB_DIR\n")
