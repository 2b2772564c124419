"""The containerize stage without an engine: what goes into the context, the Dockerfile's inputs, the tag,
and the skip when the builder already has the tag (a recording Builder; real engines: tests/builders)."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.entry.launcher import LAUNCHER_NAME
from tfcloud.flow.validate import build_spec
from tfcloud.image.builders import Builder
from tfcloud.image.containerize import containerize, plan_image, runtime_package_files, tfcloud_package_files
from tfcloud.image.context import BuildContext
from tfcloud.job.artifacts import ImageRef, PreparedJob
from tfcloud.job.spec import DockerConfig


def _job(tmp_path: Path, *, script_outside: bool = False, requirements: tuple[str, ...] = (),
         **spec_args: object) -> PreparedJob:
    work = tmp_path / "proj"
    work.mkdir(parents=True)
    (work / "train.py").write_text("print(1)\n")
    (work / ".env").write_text("TOKEN=x\n")
    spec_args.setdefault("target", "vertex")  # a target that builds an image (the local default builds none)
    spec = build_spec(entry_point=str(work / "train.py"), **spec_args)  # type: ignore[arg-type]
    launcher = tmp_path / "launcher.py"
    launcher.write_text("# launcher\n")
    script = work / "train.py"
    if script_outside:
        script = tmp_path / "converted" / "notebook.py"
        script.parent.mkdir()
        script.write_text("print('from a notebook')\n")
    return PreparedJob(spec=spec, workdir=work, launcher=launcher, script=script, requirements=requirements)


def test_context_holds_the_job_files_and_tfclouds_own(tmp_path: Path) -> None:
    (tmp_path / "reqs.txt").write_text("numpy==2.0\n")
    job = _job(tmp_path, script_outside=True, requirements=("pandas",),
               requirements_txt=str(tmp_path / "reqs.txt"), docker_config=DockerConfig(parent_image="base:1"))
    plan = plan_image(job, repository="localhost:5000/tfcloud")
    paths = [f.path for f in plan.context.files]
    assert "train.py" in paths and "notebook.py" in paths and ".env" not in paths
    launcher = plan.context.get(LAUNCHER_NAME)
    assert launcher is not None and launcher.data == b"# launcher\n"
    reqs = plan.context.get(".tfcloud/requirements/requirements.txt")
    assert reqs is not None and reqs.data == (
        b"numpy==2.0\n# found in the entry point (e.g. a notebook's %pip install lines)\npandas\n")
    assert ".tfcloud/python/tfcloud/__init__.py" in paths
    assert not any("/emulator/" in p or "/testing/" in p or "__pycache__" in p or "/_templates/" in p
                   for p in paths)
    assert ".tfcloud/python/tfcloud/cli.py" not in paths and ".tfcloud/python/tfcloud/builders/docker.py" not in paths
    dockerfile = plan.context.get(".tfcloud/Dockerfile")
    assert dockerfile is not None and dockerfile.data == plan.dockerfile.encode()
    assert plan.dockerfile.startswith("# Dockerfile generated") and "FROM base:1\n" in plan.dockerfile
    assert plan.uri == f"localhost:5000/tfcloud/train:{plan.digest[:16]}"


def test_base_image_and_tf_keras_follow_the_spec(tmp_path: Path) -> None:
    job = _job(tmp_path, worker_count=2, worker_config="T4_1X", chief_config="T4_1X")
    plan = plan_image(job, repository="r", tensorflow_version="2.21.0")
    assert plan.base_image == "tensorflow/tensorflow:2.21.0-gpu"
    assert "import tf_keras" in plan.dockerfile  # MultiWorkerMirrored routes Keras to tf-keras


def test_a_tpu_job_gets_a_libtpu_image_not_the_gpu_one(tmp_path: Path) -> None:
    job = _job(tmp_path / "a", target="vertex", worker_count=1, worker_config="TPU_V5E_8X")
    plan = plan_image(job, repository="r", tensorflow_version="2.21.0")
    assert plan.base_image == "python:3.12-slim"
    assert '"tensorflow-tpu==2.20.0"' in plan.dockerfile and "libtpu-tf-releases/index.html" in plan.dockerfile
    own = plan_image(_job(tmp_path / "b", target="vertex", worker_count=1, worker_config="TPU_V5E_8X",
                          docker_config=DockerConfig(parent_image="my-tpu-base:1")), repository="r")
    assert own.base_image == "my-tpu-base:1" and "tensorflow-tpu" not in own.dockerfile  # it brings its own


def test_explicit_image_names(tmp_path: Path) -> None:
    tagged = plan_image(_job(tmp_path / "a", docker_config=DockerConfig(image="gcr.io/p/img:v1", parent_image="b")),
                        repository="r")
    assert tagged.uri == "gcr.io/p/img:v1"
    untagged = plan_image(_job(tmp_path / "b", docker_config=DockerConfig(image="gcr.io/p/img", parent_image="b")),
                          repository="r")
    assert untagged.uri == f"gcr.io/p/img:{untagged.digest[:16]}"


def test_package_files_are_sources_only() -> None:
    files = tfcloud_package_files()
    assert all(p.startswith(".tfcloud/python/tfcloud/") for p in files)
    assert all(p.endswith((".py", ".typed", ".j2")) for p in files)
    runtime = runtime_package_files()
    assert set(runtime) < set(files) and ".tfcloud/python/tfcloud/__init__.py" in runtime
    assert sum(map(len, runtime.values())) < sum(map(len, files.values())) / 3


def test_the_image_package_is_enough_for_a_job(tmp_path: Path) -> None:
    # Only the trimmed package on the path: `import tfcloud`, every public name, run() and the tuning helpers
    # work, and nothing is loaded from another tfcloud.
    for rel, data in runtime_package_files().items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    package = tmp_path / ".tfcloud" / "python"
    code = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); os.environ['TFCLOUD_REMOTE'] = '1'\n"
        "import tfcloud, tfcloud.job.study\n"
        "[getattr(tfcloud, name) for name in tfcloud.__all__]\n"
        "assert tfcloud.remote() and tfcloud.run(entry_point='x.py', worker_count=2) is None\n"
        "mods = {n: m.__file__ for n, m in sys.modules.items() if n.split('.')[0] == 'tfcloud'}\n"
        "assert all(f.startswith(sys.argv[1]) for f in mods.values()), mods\n"
        "print(len(mods))\n"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(package)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == sum(1 for p in runtime_package_files() if p.endswith(".py"))


class Recorder:
    """A Builder that records calls and 'has' the tags it built."""

    def __init__(self) -> None:
        self.have: set[str] = set()
        self.calls: list[str] = []

    def exists(self, tag: str, *, pushed: bool = True) -> bool:
        self.calls.append(f"exists {tag}")
        return tag in self.have

    def build(self, context: BuildContext, tag: str, *, push: bool = True, cache_from: str | None = None) -> ImageRef:
        self.calls.append(f"build {tag}")
        self.have.add(tag)
        return ImageRef(uri=tag, built=True)

    def close(self) -> None:
        self.calls.append("close")


def test_containerize_skips_an_existing_tag_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tfcloud")
    job = _job(tmp_path, docker_config=DockerConfig(parent_image="base:1"))
    builder = Recorder()
    assert isinstance(builder, Builder)
    out = io.StringIO()
    first = containerize(job, builder=builder, repository="r", console=Console(file=out, width=300))
    second = containerize(job, builder=builder, repository="r", console=Console(file=out, width=300))
    assert first.built and not second.built and first.uri == second.uri
    assert builder.calls == [f"exists {first.uri}", f"build {first.uri}", f"exists {first.uri}"]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"Build context {job.workdir}: ") and " files, " in lines[0]
    kept_out = ("Kept out of the image (secret deny-list): .env (environment file). To let a file in, add a line "
                "`!path` for it to .dockerignore (e.g. `!.env`).")
    assert lines[1] == kept_out
    assert lines.count(kept_out) == 2  # once per build
    # said on the console, not logged as well
    assert [r for r in caplog.records if "Kept out of the image" in r.getMessage()] == []
    assert lines[-1] == f"Image {first.uri} is up to date: nothing to build."
