"""``tfcloud status`` people can read, and the job commands without an id (issue 33)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfcloud.backends.base import JobInfo, ReplicaInfo
from tfcloud.cli import main
from tfcloud.job.states import JobState
from tfcloud.view.statusview import next_command, status_lines


def test_status_cancel_and_logs_without_an_id_act_on_the_latest_job(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status"]) == 2  # nothing submitted yet: said, with the fix
    assert capsys.readouterr().err.splitlines() == [
        "Error: Invalid `JOB`: expected a job id (none given, and this machine has submitted no job to default "
        "to), received <none>.", "`tfcloud list` lists a target's jobs; give one's id."]

    script = tmp_path / "fail.py"
    barrier = tmp_path / "barrier"  # both replicas print together: their alike lines fold (within 1 s)
    barrier.mkdir()
    script.write_text(f"import os, sys, time\nfrom pathlib import Path\nb = Path({str(barrier)!r})\n"
                      "(b / os.environ['TFCLOUD_REPLICA']).touch()\n"
                      "while len(list(b.iterdir())) < 2:\n    time.sleep(0.01)\n"
                      "print('hi')\nsys.exit(4 if os.environ['TFCLOUD_REPLICA'] == 'chief-0' else 0)\n")
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1"]) == 1
    job_id = capsys.readouterr().err.split("Submitted job ", 1)[1].split(".")[0]

    assert main(["status"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith(f"Latest job: {job_id}\n")
    lines = out.splitlines()
    assert lines[0] == f"{job_id}  failed"
    rows = {m[1]: m[2] for line in lines[1:] if (m := re.match(r"  (\S(?:.*?\S)?) {2,}(\S.*)$", line))}
    assert rows["target"] == "local"
    assert rows["outcome"] == "failed: chief-0 exited with code 4."
    assert "chief-0   failed       exit 4  <- failed first" in out
    assert "  worker-0  " in out
    assert re.search(r"^  last said +chief-0 +hi$", out, re.M) and re.search(r"^ +worker-0 +hi$", out, re.M), out
    for when in ("created", "started", "ended"):
        assert rows[when].endswith(" UTC")
    assert rows["duration"].endswith("s")
    assert rows["outputs"].endswith("/output")
    assert rows["next"] == f"tfcloud logs {job_id} --replica chief-0 --tail 50"

    assert main(["status", "--json"]) == 0  # the machine form stays
    assert json.loads(capsys.readouterr().out)["failed_replica"] == "chief-0"

    assert main(["logs"]) == 0
    out, err = capsys.readouterr()
    assert "Latest job: " + job_id in err and out == "2 replicas | hi\n"

    assert main(["cancel"]) == 0  # it had ended: said so, nothing changed
    out, err = capsys.readouterr()
    assert out == f"{job_id}\tfailed\n"
    assert err.splitlines()[-1] == f"Job {job_id} had already ended (failed): nothing to cancel."


def test_a_running_vertex_job_points_at_its_logs_and_console() -> None:
    info = JobInfo(job_id="123", target="vertex", state=JobState.RUNNING, created=1_790_000_000.0,
                   started=1_790_000_060.0, console_url="https://console.cloud.google.com/x",
                   replicas=(ReplicaInfo(name="chief-0", state=JobState.RUNNING),))
    lines = status_lines(info, now=1_790_000_150.0)
    assert lines[0] == "123  running"
    assert "  outcome   not yet: the job has not ended" in lines
    assert "  duration  1m30s so far" in lines
    assert "  console   https://console.cloud.google.com/x" in lines
    assert lines[-1] == "  next      tfcloud logs 123 -f"
    done = JobInfo(job_id="123", target="vertex", state=JobState.SUCCEEDED, output_dir="gs://b/o")
    assert next_command(done) == "tfcloud artifacts 123"
    assert "  replicas  none yet (they show up once the job starts)" in status_lines(done)


def test_a_worker_that_failed_after_the_chief_ended_well_is_named_in_the_last_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The chief's outcome is the job's (exit 0), and the last line still says which replica failed beside it,
    and how to read it; so does status's outcome."""
    script = tmp_path / "late.py"
    chief_done = tmp_path / "chief-done"
    script.write_text("import os, sys, time\nfrom pathlib import Path\n"
                      f"done = Path({str(chief_done)!r})\n"
                      "if os.environ['TFCLOUD_REPLICA'] == 'chief-0':\n    print('chief done'); done.touch()\n"
                      "else:\n    while not done.exists():\n        time.sleep(0.01)\n"
                      "    time.sleep(0.5); print('worker failing'); sys.exit(3)\n")
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1"]) == 0
    out, err = capsys.readouterr()
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    last = (out + err).strip().splitlines()[-1]
    assert last == (f"Job {job_id} succeeded: the chief ended well, but worker-0 exited with code 3. Its lines: "
                    f"tfcloud logs {job_id} --replica worker-0")

    assert main(["status", job_id]) == 0
    assert "  outcome    succeeded: the chief ended well, but worker-0 exited with code 3\n" in capsys.readouterr().out


def test_tensorboard_without_an_id_takes_the_latest_job(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """As status, logs, cancel and artifacts do: the job this machine submitted last (here its TensorBoard is
    then missing from PATH: said, exit 2, after naming the job it took)."""
    script = tmp_path / "ok.py"
    script.write_text("print('ok')\n")
    assert main(["submit", str(script)]) == 0
    job_id = capsys.readouterr().err.split("Submitted job ", 1)[1].split(".")[0]
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert main(["tensorboard"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Latest job: {job_id}\n") and "TensorBoard is not installed." in err
