"""Shared fixtures. Every test runs isolated: no TFCLOUD_* variables from the outside, its own tfcloud
state dir, a temporary working directory, and loopback excluded from any proxy."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith("TFCLOUD_"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("tfcloud-home")
    monkeypatch.setenv("TFCLOUD_HOME", str(home))
    work = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(work)
    for var in ("no_proxy", "NO_PROXY", "no_grpc_proxy"):
        monkeypatch.setenv(var, ",".join(filter(None, [os.environ.get(var), "127.0.0.1", "localhost"])))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    yield work


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A trivial entry point."""
    path = tmp_path / "train.py"
    path.write_text("print('training')\n")
    return path


@pytest.fixture
def python() -> str:
    return sys.executable
