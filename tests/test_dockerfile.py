"""The Dockerfile: golden text per case, and the default base image chosen without the network."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

from tfcloud.errors import ConfigurationError
from tfcloud.image.dockerfile import (
    default_base_image,
    installed_tensorflow_version,
    render_dockerfile,
    tensorflow_tpu_requirement,
    tf_keras_requirement,
)

GOLDEN = Path(__file__).parent / "golden" / "dockerfile"
UPDATE = os.environ.get("TFCLOUD_UPDATE_GOLDEN") == "1"

CASES: dict[str, dict[str, object]] = {
    "plain": {"base_image": "tensorflow/tensorflow:2.21.0", "requirements": False, "tf_keras": None},
    "requirements": {"base_image": "tensorflow/tensorflow:2.21.0", "requirements": True, "tf_keras": None},
    "gpu_tf_keras": {"base_image": "tensorflow/tensorflow:2.21.0-gpu", "requirements": True,
                     "tf_keras": "tf-keras==2.21.0"},
    "tpu": {"base_image": "python:3.12-slim", "requirements": True, "tf_keras": None,
            "tensorflow_tpu": "tensorflow-tpu==2.20.0"},
    # TensorFlow on a multi-host TPU slice: Vertex AI's TPU Pod base image, the launcher as CMD.
    "tpu_pod": {"base_image": "us-docker.pkg.dev/vertex-ai/training/tf-tpu-pod-base-cp310:latest",
                "requirements": True, "tf_keras": None, "tensorflow_tpu": "tensorflow-tpu==2.20.0", "cmd": True},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dockerfile_matches_golden(name: str) -> None:
    text = render_dockerfile(**CASES[name])  # type: ignore[arg-type]
    golden = GOLDEN / f"{name}.Dockerfile"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"Dockerfile changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"


def test_requirements_come_before_the_code_and_the_entrypoint_is_exec_form() -> None:
    lines = render_dockerfile(base_image="b", requirements=True, tf_keras=None).splitlines()
    order = [i for i, line in enumerate(lines) if line.startswith(("COPY .tfcloud/req", "RUN ", "COPY . "))]
    assert [lines[i].split()[0] + " " + lines[i].split()[1] for i in order] == [
        "COPY .tfcloud/requirements/", "RUN python3", "COPY .",
    ]
    assert lines[-1] == 'ENTRYPOINT ["python3", "tfcloud_launcher.py"]'
    assert not any(line.startswith(("ARG", "ADD")) for line in lines)


def test_default_base_image_is_the_installed_tensorflow() -> None:
    version = importlib.metadata.version("tensorflow-cpu" if _has("tensorflow-cpu") else "tensorflow")
    assert installed_tensorflow_version() == version
    assert default_base_image(gpu=False) == f"tensorflow/tensorflow:{version}"
    assert default_base_image(gpu=True) == f"tensorflow/tensorflow:{version}-gpu"
    assert default_base_image(gpu=False, tensorflow_version="2.16.1") == "tensorflow/tensorflow:2.16.1"


def _has(dist: str) -> bool:
    try:
        importlib.metadata.version(dist)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def test_tf_keras_requirement() -> None:
    assert tf_keras_requirement() == f"tf-keras=={importlib.metadata.version('tf-keras')}"


def test_no_tensorflow_no_parent_image(monkeypatch: pytest.MonkeyPatch) -> None:
    import tfcloud.image.dockerfile as mod

    monkeypatch.setattr(mod, "_TF_DISTRIBUTIONS", ("no-such-distribution",))
    with pytest.raises(ConfigurationError, match="TensorFlow is not installed here") as info:
        default_base_image(gpu=False)
    assert "parent_image" in str(info.value)


def test_a_tpu_job_gets_python_with_tensorflow_for_tpu_and_libtpu() -> None:
    assert default_base_image(gpu=False, tpu=True, tensorflow_version="2.21.0") == "python:3.12-slim"
    assert tensorflow_tpu_requirement("2.21.3") == "tensorflow-tpu==2.20.0"  # 2.21 has no TPU build
    assert tensorflow_tpu_requirement("2.19.0") == "tensorflow-tpu==2.19.1"  # the newest patch of the same minor
    assert tensorflow_tpu_requirement("2.12.0") == "tensorflow-tpu==2.16.2"  # older than the table: its oldest
    lines = render_dockerfile(base_image="python:3.12-slim", requirements=True, tf_keras=None,
                              tensorflow_tpu="tensorflow-tpu==2.20.0").splitlines()
    install = next(i for i, line in enumerate(lines) if "tensorflow-tpu" in line)
    assert "-f https://storage.googleapis.com/libtpu-tf-releases/index.html" in lines[install + 1]
    assert install < next(i for i, line in enumerate(lines) if "requirements.txt" in line)  # its own first layer
