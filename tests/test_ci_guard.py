"""The suite's end (tests/ci_guard.py, issue 38): a skip CI's machine could run fails a CI run; the reasons it
cannot meet do not; tests over 20 s without the ``slow`` marker are named. Each case runs pytest on a small
suite in a child process, as CI runs the real one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

SUITE = '''
import time

import pytest

def test_runs():
    assert True

def test_takes_a_while():
    time.sleep(0.3)

@pytest.mark.slow
def test_marked_slow():
    time.sleep(0.3)

@pytest.mark.skipif(True, reason={reason!r})
def test_skipped():
    pass
'''


def _run(tmp_path: Path, reason: str, *, ci: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text("from tests.ci_guard import pytest_sessionfinish, pytest_terminal_summary\n"
                                          "def pytest_configure(config):\n"
                                          "    config.addinivalue_line('markers', 'slow: slow')\n")
    (tmp_path / "test_inner.py").write_text(SUITE.format(reason=reason))
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"PYTHONPATH": str(REPO_ROOT),
                                                                "TFCLOUD_TESTS_SLOW_S": "0.2"}
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_skip_that_ci_could_run_fails_a_ci_run_and_is_named(tmp_path: Path) -> None:
    done = _run(tmp_path, "no Docker engine for tests: dockerd is missing", ci=True)
    assert done.returncode == 1, done.stdout
    assert "skips CI's machine can run" in done.stdout
    assert "test_inner.py::test_skipped: no Docker engine for tests: dockerd is missing" in done.stdout
    assert "3 passed, 1 skipped" in done.stdout


def test_a_long_test_without_the_slow_marker_is_named(tmp_path: Path) -> None:
    done = _run(tmp_path, "root writes anywhere", ci=False)
    assert "tests over 0.2 s not marked slow: 1" in done.stdout
    assert "test_inner.py::test_takes_a_while" in done.stdout and "test_marked_slow" not in done.stdout


def test_the_same_skip_outside_ci_is_counted_only(tmp_path: Path) -> None:
    done = _run(tmp_path, "no Docker engine for tests: dockerd is missing", ci=False)
    assert done.returncode == 0, done.stdout
    assert "skipped: 1" in done.stdout and "1  no Docker engine for tests: dockerd is missing" in done.stdout


def test_a_reason_ci_cannot_meet_passes_a_ci_run(tmp_path: Path) -> None:
    for reason in ("root writes anywhere: no unwritable directory to test with",
                   "needs cloud, docker installed; here: {'cloud': 'missing'}"):  # the extras session's
        done = _run(tmp_path, reason, ci=True)
        assert done.returncode == 0, done.stdout
        assert "skips CI's machine can run" not in done.stdout
