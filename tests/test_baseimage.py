"""The --no-build base image as a value (tfcloud.google.staging.baseimage): what goes in it, what names it, what each
pool runs. No builder, no network: the planned context, Dockerfile and bootstrap are read back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job
from tfcloud.google.staging.baseimage import container_command, plan_base_image
from tfcloud.job.spec import DockerConfig

REPO = "us-central1-docker.pkg.dev/p/tfcloud"


def _plan(script: Path, tmp_path: Path, tensorflow: str = "2.21.0", **options: Any) -> Any:
    spec, target = build_job(entry_point=str(script), target="vertex", build=False, **options)
    workspace = tmp_path / f"ws{len(list(tmp_path.glob('ws*')))}"
    workspace.mkdir()
    job, _ = prepare(spec, target, workspace)
    return plan_base_image(job, repository=REPO, tensorflow_version=tensorflow)


def _file(plan: Any, path: str) -> str:
    found = plan.context.get(path)
    assert found is not None, [f.path for f in plan.context.files]
    return bytes(found.data).decode()


def test_a_code_change_keeps_the_tag_and_a_requirement_changes_it(script: Path, tmp_path: Path) -> None:
    first = _plan(script, tmp_path, chief_config="CPU")
    assert first.uri.startswith(f"{REPO}/tfcloud-base:") and len(first.uri.rsplit(":", 1)[1]) == 24
    script.write_text("print('changed code')\n")
    (script.parent / "helpers.py").write_text("X = 1\n")
    assert _plan(script, tmp_path, chief_config="CPU").uri == first.uri  # the code is not in the image
    requirements = script.parent / "requirements.txt"
    requirements.write_text("pandas==2.2.3\n")
    with_reqs = _plan(script, tmp_path, chief_config="CPU", requirements_txt=str(requirements))
    assert with_reqs.uri != first.uri and with_reqs.requirements == (".tfcloud/requirements/requirements.txt",)
    assert "RUN python3 -m pip install --no-cache-dir --disable-pip-version-check -r " in \
        _file(with_reqs, ".tfcloud/Dockerfile")
    assert _plan(script, tmp_path, "2.20.0", chief_config="CPU").uri != first.uri  # another TensorFlow


def test_the_parent_carries_the_jobs_tensorflow_and_tf_keras_is_pinned_to_it(script: Path, tmp_path: Path) -> None:
    gpu = _plan(script, tmp_path, chief_config="T4_1X", worker_count=1, worker_config="T4_1X")
    assert (gpu.parent, gpu.tensorflow) == ("tensorflow/tensorflow:2.21.0-gpu", "2.21.0")
    assert gpu.tf_keras == "tf-keras==2.21.0"  # MultiWorkerMirrored routes Keras to tf-keras
    dockerfile = _file(gpu, ".tfcloud/Dockerfile")
    assert dockerfile.splitlines()[4] == "FROM tensorflow/tensorflow:2.21.0-gpu"
    assert 'LABEL org.tfcloud.tensorflow="2.21.0"' in dockerfile
    assert "RUN python3 /opt/tfcloud-base/bootstrap.py --check" in dockerfile
    assert 'ENTRYPOINT ["python3", "/opt/tfcloud-base/bootstrap.py"]' in dockerfile
    # A TPU job: Python plus tensorflow-tpu, whose newest release for TensorFlow 2.21 is 2.20.0; tf-keras follows
    # the image's TensorFlow, not the one installed here (no tf-keras 2.21 onto TensorFlow 2.20).
    tpu = _plan(script, tmp_path, worker_count=1, worker_config="TPU_V5E_4X")
    assert (tpu.parent, tpu.tensorflow) == ("python:3.12-slim", "2.20.0")
    assert '"tensorflow-tpu==2.20.0" -f https://storage.googleapis.com/libtpu-tf-releases/index.html' in \
        _file(tpu, ".tfcloud/Dockerfile")
    single = _plan(script, tmp_path, chief_config="CPU")
    assert single.tf_keras is None and "tf_keras" not in _file(single, ".tfcloud/Dockerfile")


def test_a_parent_image_is_taken_and_its_tensorflow_checked_when_built(script: Path, tmp_path: Path) -> None:
    plan = _plan(script, tmp_path, chief_config="CPU", docker_config=DockerConfig(parent_image="my.registry/tf:2.21"))
    assert plan.parent == "my.registry/tf:2.21"
    bootstrap = tmp_path / "bootstrap.py"
    bootstrap.write_text(_file(plan, ".tfcloud/base/bootstrap.py"))
    # Run here, where TensorFlow is what it is: the check names what the image was made for and what it has.
    done = subprocess.run([sys.executable, str(bootstrap), "--check"], capture_output=True, text=True, check=False)
    from tfcloud.image.dockerfile import installed_tensorflow_version

    if installed_tensorflow_version() == "2.21.0":
        assert done.returncode == 0 and done.stdout == "tfcloud: the base image has TensorFlow 2.21.0.\n"
    other = _plan(script, tmp_path, "2.19.0", chief_config="CPU", docker_config=DockerConfig(parent_image="x/tf:1"))
    bootstrap.write_text(_file(other, ".tfcloud/base/bootstrap.py"))
    done = subprocess.run([sys.executable, str(bootstrap), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("tfcloud: this image was made for TensorFlow 2.19.0, but it has ")


def test_each_pool_runs_the_bootstrap_on_the_package_under_gcs() -> None:
    assert container_command("gs://bkt/tfcloud/packages/tfcloud_job-0.0.0+ab.tar.gz") == [
        "python3", "/opt/tfcloud-base/bootstrap.py", "/gcs/bkt/tfcloud/packages/tfcloud_job-0.0.0+ab.tar.gz"]


def test_without_tensorflow_the_plan_refuses_naming_why(script: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tfcloud.errors import ConfigurationError
    from tfcloud.google.staging import baseimage

    monkeypatch.setattr(baseimage, "installed_tensorflow_version", lambda: None)
    spec, target = build_job(entry_point=str(script), target="vertex", build=False, chief_config="CPU")
    job, _ = prepare(spec, target, tmp_path)
    with pytest.raises(ConfigurationError, match="TensorFlow is not installed here"):
        plan_base_image(job, repository=REPO)


class _Builder:
    """tfcloud's Builder protocol over a dict (no engine): what was asked of it."""

    def __init__(self, present: set[str]) -> None:
        self.present, self.built, self.closed = present, [], False

    def exists(self, tag: str, *, pushed: bool = True) -> bool:
        return tag in self.present

    def build(self, context: Any, tag: str, *, push: bool = True, cache_from: str | None = None) -> Any:
        from tfcloud.job.artifacts import ImageRef

        self.built.append(tag)
        self.present.add(tag)
        return ImageRef(uri=tag, built=True)

    def close(self) -> None:
        self.closed = True


def test_the_base_image_is_built_once_and_a_registry_that_has_it_needs_no_builder(script: Path,
                                                                                  tmp_path: Path) -> None:
    from tfcloud.google.staging.baseimage import ensure_base_image

    plan = _plan(script, tmp_path, chief_config="CPU")
    made: list[_Builder] = []
    registry: set[str] = set()

    def builder() -> _Builder:
        made.append(_Builder(registry))
        return made[-1]

    first = ensure_base_image(plan, builder=builder, lookup=lambda uri: None)  # asked through the builder
    assert first.built and made[0].built == [plan.uri] and made[0].closed
    again = ensure_base_image(plan, builder=builder, lookup=lambda uri: None)
    assert not again.built and made[1].built == [] and made[1].closed
    found = ensure_base_image(plan, builder=builder, lookup=lambda uri: uri in registry)  # over HTTP: no builder
    assert not found.built and len(made) == 2


def test_a_registry_is_asked_over_http_only_where_tfcloud_can_authenticate() -> None:
    from tfcloud.google.staging.baseimage import registry_has

    assert registry_has("ghcr.io/me/tfcloud-base:abc") is None  # Docker's credentials: the builder asks
    assert registry_has("127.0.0.1:9/tfcloud/tfcloud-base:abc") is None  # nothing listens: the builder asks



def test_a_tensorflow_tpu_pod_base_image_runs_the_bootstrap_as_cmd(script: Path, tmp_path: Path) -> None:
    # "Training with TPU accelerators", TPU Pod: Vertex AI's pod base image, CMD not ENTRYPOINT; the request passes
    # the bootstrap's whole command as args (args replace CMD; a command would replace the pod's ENTRYPOINT).
    from tfcloud.google.vertex.request import custom_job_request
    from tfcloud.job.artifacts import PackageRef

    pod = _plan(script, tmp_path, worker_count=1, worker_config="TPU_V5E_16X")
    assert pod.parent == "us-docker.pkg.dev/vertex-ai/training/tf-tpu-pod-base-cp310:latest"
    dockerfile = _file(pod, ".tfcloud/Dockerfile")
    assert dockerfile.rstrip().splitlines()[-1] == 'CMD ["python3", "/opt/tfcloud-base/bootstrap.py"]'
    assert not [line for line in dockerfile.splitlines() if line.startswith("ENTRYPOINT")]
    spec, target = build_job(entry_point=str(script), target="vertex", build=False, worker_count=1,
                             worker_config="TPU_V5E_16X", entry_point_args=["--epochs", "2"])
    package = PackageRef(uri="gs://b/tfcloud/packages/p.tar.gz", module="tfcloud_job", digest="d", size=1)
    request = custom_job_request(spec, target, image_uri=pod.uri, submission_id="s", package=package)
    (pool,) = request["job_spec"]["worker_pool_specs"]
    assert "command" not in pool["container_spec"]
    assert pool["container_spec"]["args"] == [*container_command(package.uri), "--epochs", "2"]
