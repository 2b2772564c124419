"""Fixtures for the local backend's tests: submit a script as a local job the way the pipeline does (render
the launcher into a temporary directory that is gone when submit returns), and check that nothing of a job
survives it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tfcloud.entry.launcher import render_launcher
from tfcloud.flow.validate import build_job
from tfcloud.job.artifacts import PreparedJob
from tfcloud.targets.local.backend import LocalBackend, LocalJob

SCRIPTS = Path(__file__).resolve().parent / "scripts"

Submit = Callable[..., LocalJob]


@pytest.fixture
def submit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Submit]:
    """``submit(script, backend=None, requirements=(), **build_spec_kwargs) -> LocalJob``. Every job still
    running at the end of the test is cancelled and waited for."""
    handles: list[LocalJob] = []

    def _submit(script: Path, *, backend: LocalBackend | None = None, requirements: tuple[str, ...] = (),
                **kwargs: Any) -> LocalJob:
        kwargs.setdefault("target", "local")
        if kwargs.get("worker_count"):
            kwargs.setdefault("worker_config", "CPU")
        spec, target = build_job(entry_point=script, **kwargs)
        tmp = tmp_path_factory.mktemp("render")
        launcher = tmp / "tfcloud_launcher.py"
        launcher.write_text(render_launcher(spec, script=str(script.resolve())), encoding="utf-8")
        handle = (backend or LocalBackend(target=target)).submit(PreparedJob(
            spec=spec, workdir=spec.workdir, launcher=launcher, script=script, requirements=requirements))
        handles.append(handle)
        launcher.unlink()
        return handle

    yield _submit
    for handle in handles:
        if not handle.info().state.is_final:
            handle.cancel()
            handle.wait(60)


@pytest.fixture
def scripts() -> Path:
    return SCRIPTS


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[[str, str], Path]:
    """``write_script(name, text)``: a script in a fresh directory (the job's working directory)."""
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)

    def _write(name: str, text: str) -> Path:
        path = workdir / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write
