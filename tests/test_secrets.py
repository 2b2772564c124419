"""`--secret NAME=REF`: a secret reaches the replica as the variable NAME, by reference only. The value is in no
request, plan, job record or shown log (each test greps for it), and what the replica prints of it is masked.
Local jobs run real processes; Vertex AI jobs run on the emulator (--no-build: its replicas are containers of
the job's base image that read the emulator's Secret Manager over gRPC with the real client). The scripts are
plain Python."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dockervertex import docker_emulator, google_base, vertex_env
from tfcloud.cli import main

__all__ = ["google_base"]  # a fixture, imported for its tests

VALUE = "s3cr3t-VALUE-7f9a2c"
DIGEST = hashlib.sha256(VALUE.encode()).hexdigest()
SCRIPT = """
import hashlib, os, sys
value = os.environ["API_TOKEN"]
print("token:", value)
print("digest", hashlib.sha256(value.encode()).hexdigest())
sys.stderr.write("again " + value + "\\n")
"""


def _nowhere(root: Path, text: str) -> list[str]:
    """Files under ``root`` whose bytes contain ``text``."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                if text.encode() in path.read_bytes():
                    found.append(str(path))
            except OSError:
                pass
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "train.py").write_text(SCRIPT)
    return root


# --- the gate -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("ref", "expected"), [
    ("projects/p/secrets/s/versions/1", "Invalid `secrets"),  # "p" is no project id
    ("projects/my-project/secrets/s/versions/alias", "Invalid `secrets"),
    ("hunter2-plain-value", "<19 characters>"),  # a value pasted by mistake is not echoed
    ("env:", "Invalid `secrets"),
])
def test_a_bad_reference_is_refused_before_anything_runs(project: Path, ref: str, expected: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(project / "train.py"), "--strategy", "none", "--secret", f"API_TOKEN={ref}"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert expected in err
    assert "hunter2" not in err
    assert "Traceback" not in err


def test_vertex_takes_secret_manager_versions_only(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(project / "train.py"), "--vertex", "--project", "my-project", "--dry-run",
                 "--secret", "API_TOKEN=env:HOME"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Secret Manager version" in err and "on vertex" in err
    assert "roles/secretmanager.secretAccessor" in err


def test_a_secret_name_that_env_sets_too_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(project / "train.py"), "--dry-run", "--env", "API_TOKEN=x",
                 "--secret", "API_TOKEN=env:HOME"])
    assert code == 2
    assert "a name that --env does not set too" in capsys.readouterr().err


def test_an_env_value_that_looks_like_a_credential_gets_a_warning(project: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    code = main(["submit", str(project / "train.py"), "--dry-run", "--json", "--strategy", "none",
                 "--env", f"GH={token}", "--env", "EPOCHS=5"])
    out = capsys.readouterr().out
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert len(warnings) == 1
    assert warnings[0].startswith("--env GH looks like a token") and "--secret GH=env:GH" in warnings[0]
    assert token not in warnings[0]


# --- local ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", ["env", "file"])
def test_a_secret_reaches_a_local_replica_and_its_value_stays_out_of_everything(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        source: str) -> None:
    if source == "env":
        monkeypatch.setenv("MY_TOKEN_SOURCE", VALUE)
        ref = "env:MY_TOKEN_SOURCE"
    else:
        secret_file = tmp_path / "token.txt"
        secret_file.write_text(VALUE + "\n")
        ref = f"file:{secret_file}"
    argv = ["submit", str(project / "train.py"), "--strategy", "none", "--secret", f"API_TOKEN={ref}"]

    assert main([*argv, "--dry-run", "--json"]) == 0
    plan = capsys.readouterr().out
    assert json.loads(plan)["secrets"] == {"API_TOKEN": ref}
    assert VALUE not in plan

    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    assert f"digest {DIGEST}" in captured.out  # the replica had the value
    assert "token: ****" in captured.out and "again ****" in captured.out
    assert VALUE not in captured.out + captured.err
    home = Path(os.environ["TFCLOUD_HOME"])
    assert _nowhere(home, VALUE) == []  # job.json, status, logs, timelines
    assert _nowhere(project, VALUE) == []
    if source == "file":
        job_id = re.search(r"Submitted job (\S+)\.", captured.err).group(1)  # type: ignore[union-attr]
        pages = _dashboard_pages(job_id)
        assert "token: ****" in pages
        assert VALUE not in pages


#: The value printed every way a script can print it (issue 39): two writes on one line, byte by byte,
#: sys.stdout.buffer, a child process, os.write, a 100 kB line with the value across the masker's 64 kB reads, a
#: line to stderr, and a line without its newline (last). The replica masks what its fds 1 and 2 carry.
EVERY_WAY = """
import os, subprocess, sys
v = os.environ["API_TOKEN"]
sys.stdout.reconfigure(line_buffering=True)
sys.stdout.write("two " + v[:5]); sys.stdout.write(v[5:] + "\\n")
sys.stdout.write("chars ")
for c in v:
    sys.stdout.write(c)
print()
sys.stdout.buffer.write(b"buffer " + v.encode() + b"\\n")
sys.stdout.flush()
subprocess.run(["sh", "-c", "echo child $API_TOKEN"], check=True)
os.write(1, b"os.write " + v.encode() + b"\\n")
print("x" * (64 * 1024 - 9) + v + "y" * (100 * 1024 - 64 * 1024))
print("stderr " + v, file=sys.stderr)
sys.stdout.write("no newline " + v)
"""
#: What EVERY_WAY shows, each a line of its own.
MASKED = ["two ****", "chars ****", "buffer ****", "child ****", "os.write ****",
          "x" * (64 * 1024 - 9) + "****" + "y" * (100 * 1024 - 64 * 1024), "stderr ****", "no newline ****"]


@pytest.mark.parametrize("where", ["process", pytest.param("container", marks=pytest.mark.docker)])
def test_a_secret_printed_every_way_is_masked_everywhere_on_the_local_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        request: pytest.FixtureRequest, where: str) -> None:
    script = tmp_path / "job" / "every_way.py"
    script.parent.mkdir()
    # SystemExit's message goes to stderr. A container's last line without a newline gets one: Docker's followed
    # log stream sometimes ends before such a line, with or without secrets (the process replica asserts it).
    ending = "print()\n" if where == "container" else ""
    script.write_text(EVERY_WAY + ending + 'raise SystemExit("exit " + v)\n')
    monkeypatch.setenv("MY_TOKEN_SOURCE", VALUE)
    argv = ["submit", str(script), "--strategy", "none", "--secret", "API_TOKEN=env:MY_TOKEN_SOURCE"]
    if where == "container":  # the replica is a container of the job's image: its launcher masks in there
        engine = request.getfixturevalue("engine")
        monkeypatch.setenv("DOCKER_HOST", engine.docker_host)
        argv += ["--local", "--container", "--parent-image", request.getfixturevalue("python_base")]
    code = main(argv)
    terminal = capsys.readouterr()
    assert code == 1, terminal.err[-2000:]  # SystemExit with a message: exit code 1, as Python has it
    expected = [*MASKED, "exit ****"]
    if where == "container":  # Docker's log splits a line every 16 kB: the long line's masked part, in one piece
        expected = ["x" * 1000 + "****" if line.startswith("x") else line for line in expected]

    def missing(text: str) -> list[str]:
        return [line[:40] for line in expected if line not in text]

    assert missing(terminal.out) == [], terminal.out[-3000:]
    assert VALUE not in terminal.out + terminal.err
    job_id = re.search(r"Submitted job (\S+)\.", terminal.err).group(1)  # type: ignore[union-attr]

    home = Path(os.environ["TFCLOUD_HOME"])
    job = next(path for path in (home / "jobs").rglob("lines.jsonl")).parent
    lines = [json.loads(line)["x"] for line in (job / "lines.jsonl").read_text().splitlines()]
    assert missing("\n".join(lines)) == []
    log = b"".join(path.read_bytes() for path in (job / "logs").glob("*.log")).decode()
    assert missing(log) == []
    assert _nowhere(home, VALUE) == []  # lines.jsonl, the replica's log, job.json, status, timelines

    assert main(["logs", job_id]) == 0
    shown = capsys.readouterr()
    assert missing(shown.out) == [], shown.out[-3000:]
    assert VALUE not in shown.out + shown.err
    pages = _dashboard_pages(job_id)
    assert "two ****" in pages and "os.write ****" in pages
    assert VALUE not in pages


def _dashboard_pages(job_id: str) -> str:
    """The dashboard's job page and its log lines (``tfcloud ui``'s server, in a thread), as served."""
    pytest.importorskip("uvicorn", reason="the dashboard needs tfcloud[ui]")
    import urllib.request

    from tfcloud.ui.server import Dashboard

    board = Dashboard(port=0)
    board.start()
    try:
        texts = []
        for path in (f"/jobs/{job_id}", f"/api/jobs/{job_id}/logs"):
            request = urllib.request.Request(board.address + path, headers={"X-Tfcloud-Token": board.token})
            with urllib.request.urlopen(request, timeout=30) as response:
                texts.append(response.read().decode())
        return "\n".join(texts)
    finally:
        board.stop()


# --- Vertex AI, on the emulator -----------------------------------------------------------------------------------
BUCKET = "secrets-staging"
PROJECT = "tfcloud-secrets"


@pytest.fixture(scope="module")
def emulator(engine: object) -> Iterator[object]:
    pytest.importorskip("google.cloud.secretmanager_v1", reason="Secret Manager needs tfcloud[cloud]")
    for running in docker_emulator(engine, PROJECT, [BUCKET]):
        secrets = running.secret_client()
        try:
            secrets.create_secret(parent=f"projects/{PROJECT}", secret_id="api-token", secret={})
            secrets.add_secret_version(parent=f"projects/{PROJECT}/secrets/api-token",
                                       payload={"data": VALUE.encode()})
        finally:
            secrets.transport.close()
        yield running


@pytest.mark.emulator
def test_a_secret_reaches_a_vertex_replica_through_secret_manager_and_nothing_holds_its_value(
        emulator: object, engine: object, google_base: str, project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    vertex_env(monkeypatch, emulator, engine, project=PROJECT, bucket=BUCKET)
    # The value printed every way, masked in the container. The line without a newline gets one here: the Docker
    # engine's followed log stream sometimes ends before such a last line, with or without secrets (the local
    # process test and test_masking.py assert the masker writes it at exit).
    (project / "train.py").write_text(SCRIPT + EVERY_WAY + "print()\n")
    ref = f"projects/{PROJECT}/secrets/api-token/versions/latest"
    argv = ["submit", str(project / "train.py"), "--vertex", "--project", PROJECT, "--no-build",
            "--parent-image", google_base, "--chief-config", "CPU", "--strategy", "none",
            "--secret", f"API_TOKEN={ref}"]

    assert main([*argv, "--dry-run", "--json"]) == 0
    plan = capsys.readouterr().out
    assert json.loads(plan)["secrets"] == {"API_TOKEN": ref}
    assert VALUE not in plan

    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert f"digest {DIGEST}" in captured.out
    assert "token: ****" in captured.out
    assert [line[:40] for line in MASKED if line not in captured.out] == [], captured.out[-3000:]
    assert VALUE not in captured.out + captured.err

    jobs = emulator.job_client()  # type: ignore[attr-defined]
    try:
        listed = list(jobs.list_custom_jobs(parent=f"projects/{PROJECT}/locations/us-central1"))
    finally:
        jobs.transport.close()
    assert listed
    request = type(listed[0]).to_json(listed[0])
    assert ref in request  # the reference travels in the request...
    assert VALUE not in request  # ...never the value
    job_id = listed[0].name.rsplit("/", 1)[-1]
    assert main(["logs", job_id]) == 0
    shown = capsys.readouterr()
    assert "token: ****" in shown.out and VALUE not in shown.out + shown.err
    assert [line[:40] for line in MASKED if line not in shown.out] == [], shown.out[-3000:]
    pages = _dashboard_pages(job_id)  # the job's page and the log lines it reads, from Cloud Logging
    assert "token: ****" in pages and "two ****" in pages and "os.write ****" in pages
    assert VALUE not in pages
    assert _nowhere(Path(os.environ["TFCLOUD_HOME"]), VALUE) == []
