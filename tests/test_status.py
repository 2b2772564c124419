"""``tfcloud status`` people can read, and the job commands without an id (issue 33)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfcloud.backends.base import JobInfo, ReplicaInfo
from tfcloud.cli import main
from tfcloud.job.states import JobState
from tfcloud.view.outcome import failed_beside
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
                      "print('hi', flush=True)\n"
                      "if os.environ['TFCLOUD_REPLICA'] != 'chief-0':\n    (b / 'printed').touch(); sys.exit(0)\n"
                      "while not (b / 'printed').exists():  # the worker printed before the chief fails the job\n"
                      "    time.sleep(0.01)\n"
                      "sys.exit(4)\n")
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
    assert re.search(r"^  said +chief-0 +hi$", out, re.M) and re.search(r"^ +worker-0 +hi$", out, re.M), out
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


def _ends_after_the_chief(tmp_path: Path, name: str, worker_end: str) -> Path:
    """A script whose chief prints and ends well, and whose other replicas wait until the supervisor has seen
    it end (the job's status.json, beside the replica's heartbeat file, says ``finishing``), then print and run
    ``worker_end``."""
    script = tmp_path / name
    script.write_text(
        "import json, os, signal, sys, time\nfrom pathlib import Path\n"
        "if os.environ['TFCLOUD_REPLICA'] == 'chief-0':\n    print('chief done'); sys.exit(0)\n"
        "status = Path(os.environ['TFCLOUD_HEARTBEAT_FILE']).parent.parent / 'status.json'\n"
        "while json.loads(status.read_text())['phase'] != 'finishing':\n    time.sleep(0.01)\n"
        f"print('worker ending')\n{worker_end}\n")
    return script


def test_a_worker_that_failed_after_the_chief_ended_well_is_named_in_the_last_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The chief's outcome is the job's (exit 0), and the last line still says which replica failed beside it,
    and how to read it: after `submit`, `logs -f` and in status's outcome."""
    script = _ends_after_the_chief(tmp_path, "late.py", "sys.exit(3)")
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1"]) == 0
    out, err = capsys.readouterr()
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    said = (f"Job {job_id} succeeded: the chief ended well, but worker-0 exited with code 3. Its lines: "
            f"tfcloud logs {job_id} --replica worker-0")
    assert err.strip().splitlines()[-1] == said
    assert re.search(r"^worker-0 +\| worker ending$", out, re.M), out

    assert main(["logs", job_id, "-f"]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == said

    assert main(["status", job_id]) == 0
    out = capsys.readouterr().out
    assert "  outcome   succeeded: the chief ended well, but worker-0 exited with code 3\n" in out
    assert re.search(r"^ +worker-0 +failed +exit 3$", out, re.M), out
    assert f"  next      tfcloud logs {job_id} --replica worker-0 --tail 50\n" in out  # its lines, not artifacts


def test_run_names_a_worker_killed_after_the_chief_ended_well(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``run(stream_logs=True)`` ends the same way, and says a death by signal as one: the job succeeded (no
    error raised)."""
    import tfcloud

    script = _ends_after_the_chief(tmp_path, "killed.py", "os.kill(os.getpid(), signal.SIGKILL)")
    job = tfcloud.run(str(script), distribution_strategy=None, worker_count=1, stream_logs=True)
    assert job is not None  # None only for a dry run
    assert job.info().state is JobState.SUCCEEDED and job.info().exit_code == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"Job {job.job_id} succeeded: the chief ended well, but worker-0 was killed by SIGKILL (exit code 137). "
        f"Its lines: tfcloud logs {job.job_id} --replica worker-0")


def test_a_parameter_server_stopped_when_the_chief_ended_well_did_not_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tfcloud stops parameter servers (they serve forever) once the chief is done: SIGTERM, exit code 143, a
    replica cancelled, not failed; the last line is the plain one."""
    script = tmp_path / "ps.py"
    script.write_text("import os, time\n"
                      "if os.environ['TFCLOUD_REPLICA'] == 'ps-0':\n    print('serving'); time.sleep(600)\n")
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1", "--ps-count", "1"]) == 0
    err = capsys.readouterr().err
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    assert err.strip().splitlines()[-1] == f"Job {job_id} succeeded."
    assert main(["status", job_id]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  outcome +succeeded$", out, re.M), out
    assert re.search(r"^ +ps-0 +cancelled +exit 143$", out, re.M), out


def test_what_failed_beside_a_chief_that_ended_well_reads_the_replicas_every_supervisor_records() -> None:
    """The same words for a Ray job (its driver runs the same supervisor): failed replicas are named, with a
    signal's name for 128 + N; cancelled ones (stopped by tfcloud) and a failed job are not this case."""
    replicas = (ReplicaInfo(name="chief-0", state=JobState.SUCCEEDED, exit_code=0),
                ReplicaInfo(name="worker-0", state=JobState.FAILED, exit_code=137),
                ReplicaInfo(name="worker-1", state=JobState.FAILED, exit_code=200),
                ReplicaInfo(name="evaluator-0", state=JobState.FAILED),
                ReplicaInfo(name="ps-0", state=JobState.CANCELLED, exit_code=143))
    info = JobInfo(job_id="raysubmit_1", target="ray", state=JobState.SUCCEEDED, exit_code=0, replicas=replicas)
    assert failed_beside(info) == (["worker-0", "worker-1", "evaluator-0"],
                                   "worker-0 was killed by SIGKILL (exit code 137); worker-1 exited with code 200; "
                                   "evaluator-0 failed")
    assert failed_beside(JobInfo(job_id="raysubmit_1", target="ray", state=JobState.FAILED, exit_code=1,
                                 replicas=replicas)) == ([], "")
