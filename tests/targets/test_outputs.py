"""`tfcloud artifacts JOB` and `tfcloud tensorboard JOB`: a job's output directory, local or on Cloud Storage."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tfcloud.cli import main
from tfcloud.job.states import JobState

# Writes into the three AIP_* directories, as a script written to Vertex AI's docs does.
WRITER = r'''
import os
for key, name, text in (("AIP_MODEL_DIR", "model.txt", "weights"), ("AIP_CHECKPOINT_DIR", "ckpt-1", "state"),
                        ("AIP_TENSORBOARD_LOG_DIR", "events.out.tfevents.1", "ev")):
    with open(os.path.join(os.environ[key], name), "w") as f:
        f.write(text)
'''


@pytest.fixture
def local_job(submit, write_script) -> Any:  # type: ignore[no-untyped-def]
    handle = submit(write_script("writer.py", WRITER), distribution_strategy=None)
    assert handle.wait(60).state is JobState.SUCCEEDED
    return handle


def test_artifacts_lists_what_a_local_job_wrote(local_job: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["artifacts", local_job.job_id]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"# {local_job.job_dir / 'output'}"
    assert [line.split()[-1] for line in out[1:]] == ["checkpoints/ckpt-1", "logs/events.out.tfevents.1",
                                                      "model/model.txt"]
    assert main(["artifacts", local_job.job_id, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"path": "model/model.txt", "size": 7} in listed["artifacts"]


def test_artifacts_download_copies_them(local_job: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["artifacts", local_job.job_id, "--download", str(tmp_path / "copy")]) == 0
    assert "3 file(s)" in capsys.readouterr().out
    assert (tmp_path / "copy" / "model" / "model.txt").read_text() == "weights"


def test_artifacts_download_to_a_file_or_an_unwritable_place_copies_nothing(
        local_job: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "notes.txt"
    existing.write_text("mine")
    for destination, hint in ((existing, f"{existing} is a file: name a directory."),
                              (existing / "copy", f"{existing} is not a directory.")):
        assert main(["artifacts", local_job.job_id, "--download", str(destination)]) == 2
        captured = capsys.readouterr()
        assert captured.err.splitlines() == [
            "Error: Invalid `--download`: expected a directory to copy the artifacts into (new, or an existing one "
            f"you can write to), received '{destination}'.", hint]
        assert "Traceback" not in captured.err
    assert existing.read_text() == "mine"
    # A file of the destination where the artifacts have a directory: refused before the first copy.
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "model").write_text("in the way")
    assert main(["artifacts", local_job.job_id, "--download", str(tmp_path / "copy")]) == 2
    assert f"{tmp_path / 'copy' / 'model'} is a file where the artifacts have a directory." in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["model"]


def test_artifacts_of_a_job_that_wrote_nothing_says_so(submit, write_script,  # type: ignore[no-untyped-def]
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    handle = submit(write_script("quiet.py", "print('nothing kept')\n"), distribution_strategy=None)
    assert handle.wait(60).state is JobState.SUCCEEDED
    assert main(["artifacts", handle.job_id]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [f"# {handle.job_dir / 'output'}"]
    assert f"Job {handle.job_id} wrote no files under its output directory." in captured.err


def test_tensorboard_runs_on_the_jobs_log_dir(local_job: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tensorboard"  # a stand-in that shows the command line it was given
    fake.write_text(f"#!{sys.executable}\nimport sys\nprint('ARGS', sys.argv[1:])\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["tensorboard", local_job.job_id, "--port", "6007"]) == 0
    logs = f"{local_job.job_dir / 'output'}/logs/"
    assert f"ARGS ['--logdir', '{logs}', '--port', '6007']" in capfd.readouterr().out


def test_tensorboard_missing_says_how_to_install_it(local_job: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["tensorboard", local_job.job_id]) == 2
    err = capsys.readouterr().err
    assert "Error: TensorBoard is not installed." in err
    assert "python -m pip install tensorboard" in err


@pytest.mark.emulator
def test_artifacts_of_a_vertex_job_come_from_cloud_storage(tfcloud_emulator_env: Any, tfcloud_emulator: Any,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from google.cloud import aiplatform_v1 as vertex

    pool = vertex.WorkerPoolSpec(replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                                 container_spec=vertex.ContainerSpec(image_uri="local/x:1",
                                                                     command=[sys.executable, "-c", "pass"]))
    jobs = tfcloud_emulator.job_client()
    try:
        created = jobs.create_custom_job(parent=tfcloud_emulator.parent, custom_job=vertex.CustomJob(
            display_name="outputs", job_spec=vertex.CustomJobSpec(
                worker_pool_specs=[pool],
                base_output_directory=vertex.GcsDestination(output_uri_prefix="gs://tfcloud-out/run1"))))
    finally:
        jobs.transport.close()
    storage = tfcloud_emulator.storage_client()
    try:
        bucket = storage.create_bucket("tfcloud-out")
        bucket.blob("run1/model/saved_model.pb").upload_from_string(b"12345")
        bucket.blob("run1/logs/events.out.tfevents.2").upload_from_string(b"ev")
        bucket.blob("run2/model/other.pb").upload_from_string(b"x")
    finally:
        storage.close()
    job_id = created.name.rsplit("/", 1)[1]
    assert main(["artifacts", job_id]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["# gs://tfcloud-out/run1", f"{2:>12}  logs/events.out.tfevents.2", f"{5:>12}  model/saved_model.pb"]


def test_artifacts_download_without_a_job_takes_the_last_one(local_job: Any, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """As status, logs and cancel do: no JOB is the job this machine submitted last (said on stderr)."""
    assert main(["artifacts", "--download", str(tmp_path / "copy")]) == 0
    captured = capsys.readouterr()
    assert f"Latest job: {local_job.job_id}" in captured.err
    assert captured.out == f"3 file(s) from {local_job.job_dir / 'output'} in {tmp_path / 'copy'}\n"
    assert (tmp_path / "copy" / "model" / "model.txt").read_text() == "weights"
    assert main(["artifacts", "--json"]) == 0
    assert {"path": "model/model.txt", "size": 7} in json.loads(capsys.readouterr().out)["artifacts"]
