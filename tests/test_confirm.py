"""Confirmation before a paid launch (issue 33): on a terminal, a Vertex AI submit shows the plan's price and asks
``Proceed? [Y/n]`` before anything is built or created. Driven through a pseudo-terminal (python's pty): the
real CLI in a child process, answered as a person would. Nothing reaches Google: answering no stops before the
build, and the runs that go on stop at the build (a Docker engine that is not there, exit 2)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

PROMPT = b"Proceed? [Y/n]"


@pytest.fixture
def vertex_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Vertex AI set-up that validates (project, credentials as a file) and builds nowhere."""
    credentials = tmp_path / "adc" / "credentials.json"
    credentials.parent.mkdir()
    credentials.write_text('{"type": "authorized_user", "client_id": "x.apps.googleusercontent.com", '
                           '"client_secret": "y", "refresh_token": "z"}')
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    monkeypatch.setenv("TFCLOUD_PROJECT", "my-project")
    monkeypatch.setenv("TFCLOUD_DOCKER_HOST", "tcp://127.0.0.1:1")  # no engine: a run that goes on stops here
    monkeypatch.delenv("TFCLOUD_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("TFCLOUD_YES", raising=False)
    job = tmp_path / "job"
    job.mkdir()
    (job / "train.py").write_text("print('hi')\n")
    return job / "train.py"


def _in_pty(args: list[str], *, answer: bytes | None) -> tuple[int, str]:
    """Run ``tfcloud ARGS`` on a pseudo-terminal; type ``answer`` (and Enter) when it asks. Its exit code and
    what the terminal showed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command, its stdin, stdout and stderr the terminal
        os.execvp(sys.executable, [sys.executable, "-m", "tfcloud.cli", *args])
    shown, answered = b"", False
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
        if answer is not None and not answered and PROMPT in shown:
            os.write(fd, answer + b"\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode("utf-8", errors="replace")


def test_a_vertex_submit_on_a_terminal_asks_under_its_price(vertex_env: Path) -> None:
    code, shown = _in_pty(["submit", "--vertex", str(vertex_env)], answer=b"n")
    assert code == 130, shown
    lines = shown.replace("\r\n", "\n").splitlines()
    at = lines.index("Proceed? [Y/n] n")
    assert lines[at - 2].startswith("Price: job: $") and lines[at - 1].startswith("Price: from tfcloud's price")
    assert lines[at + 1] == "Not submitted: nothing was built or created."
    assert "Build context" not in shown  # nothing was built

    code, shown = _in_pty(["submit", "--vertex", str(vertex_env)], answer=b"")  # Enter: yes, it goes on
    assert code == 2 and "Proceed? [Y/n]" in shown and "Cannot reach a Docker engine" in shown, shown


@pytest.mark.parametrize("how", ["--yes", "-y", "TFCLOUD_YES=1"])
def test_yes_skips_the_question(vertex_env: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    flags = [how] if how.startswith("-") else []
    if not flags:
        monkeypatch.setenv("TFCLOUD_YES", "1")
    code, shown = _in_pty(["submit", "--vertex", str(vertex_env), *flags], answer=None)
    assert code == 2 and "Cannot reach a Docker engine" in shown, shown
    assert "Proceed?" not in shown and "Price: job: $" in shown


def test_never_asked_off_a_terminal_or_on_the_emulator(vertex_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", "--vertex", str(vertex_env)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "Proceed?" not in proc.stderr + proc.stdout
    assert "Cannot reach a Docker engine" in proc.stderr

    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", "127.0.0.1:1")  # the emulator bills nothing: no price, no question
    code, shown = _in_pty(["submit", "--vertex", str(vertex_env)], answer=None)
    assert code == 2 and "Proceed?" not in shown and "Price:" not in shown, shown
