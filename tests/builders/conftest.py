"""Fixtures for builder tests: a real dockerd + docker-registry on loopback (Debian's packages; started once
per session, stopped at its end) and base images made locally (Docker Hub is not reachable)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tfcloud.entry.launcher import LAUNCHER_NAME, render_launcher
from tfcloud.flow.validate import build_spec
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.spec import DockerConfig
from tfcloud.testing.dockerd import Engine

# `engine` and `python_base` are the session's (tests/conftest.py): one engine for every Docker test.


@pytest.fixture
def repository(engine: Engine) -> str:
    return f"{engine.registry.address}/tfcloud"


MakeJob = Callable[..., PreparedJob]


@pytest.fixture
def make_job(tmp_path: Path, python_base: str) -> MakeJob:
    """A prepared job in a fresh directory: ``train.py`` (+ ``files``), its launcher, the python base image."""

    def make(files: dict[str, str] | None = None, *, parent_image: str | None = None, name: str = "proj",
             **spec_args: object) -> PreparedJob:
        workdir = tmp_path / name
        workdir.mkdir(exist_ok=True)
        (workdir / "train.py").write_text("import tfcloud\nprint('remote:', tfcloud.remote())\n")
        for rel, text in (files or {}).items():
            path = workdir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if "requirements_txt" in spec_args:
            spec_args["requirements_txt"] = str(workdir / str(spec_args["requirements_txt"]))
        spec_args.setdefault("target", "vertex")  # a target that builds an image
        spec = build_spec(entry_point=str(workdir / "train.py"),
                          docker_config=DockerConfig(parent_image=parent_image or python_base),
                          **spec_args)  # type: ignore[arg-type]
        launcher = tmp_path / f"{name}-{LAUNCHER_NAME}"
        launcher.write_text(render_launcher(spec, script="train.py"))
        return PreparedJob(spec=spec, workdir=workdir, launcher=launcher, script=workdir / "train.py")

    return make
