"""Fixtures for the notebook tests: build a notebook, convert it, run the script as a job would."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from nbhelpers import notebook, run_script

from tfcloud.notebook import ConvertedNotebook, convert_notebook

DATA = Path(__file__).parent / "data"


@pytest.fixture
def make_notebook(tmp_path: Path) -> Callable[..., Path]:
    def make(*cells: Any, name: str = "nb.ipynb", **options: Any) -> Path:
        return notebook(tmp_path / name, *cells, **options)

    return make


@pytest.fixture
def convert(make_notebook: Callable[..., Path]) -> Callable[..., ConvertedNotebook]:
    def run(*cells: Any, **options: Any) -> ConvertedNotebook:
        return convert_notebook(make_notebook(*cells, **options))

    return run


@pytest.fixture
def job(tmp_path: Path, make_notebook: Callable[..., Path]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Convert the cells and run the script in a fresh directory, as the launcher would."""

    def run(*cells: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        converted = convert_notebook(make_notebook(*cells))
        workdir = tmp_path / "job"
        workdir.mkdir(exist_ok=True)
        script = workdir / "tfcloud_notebook_nb.py"
        script.write_text(converted.script, encoding="utf-8")
        return run_script(script, cwd=workdir, env=env)

    return run
