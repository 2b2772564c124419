"""`tfcloud submit --vertex --no-build` end to end: the first submission builds the job's base image (TensorFlow,
tf-keras pinned to it, the requirements) on a real Docker engine and pushes it to a loopback registry, uploads the
job's files as a package to the storage emulator, and creates a CustomJob whose pools run the base image with the
package read from /gcs/; the emulator runs the replicas as containers from that image, which train a real tf.keras
model on the image's TensorFlow. A code-only change then builds and pushes nothing: only the package goes up.
The real aiplatform_v1 / logging_v2 / storage / docker clients throughout; nothing patched."""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI path needs tfcloud[cloud]")
pytest.importorskip("gcp_storage_emulator", reason="the storage emulator needs tfcloud[emulator]")
pytest.importorskip("tensorflow", reason="the job trains with TensorFlow")

from tfcloud.cli import main

pytestmark = [pytest.mark.docker, pytest.mark.tensorflow, pytest.mark.emulator]

BUCKET = "nobuild-staging"
SCRIPT = """
import sys
import numpy as np
import tensorflow as tf
from helpers import features

tf.keras.utils.set_random_seed(7)
x, y = features()
model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(8, activation="relu"),
                             tf.keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
history = model.fit(x, y, epochs=2, batch_size=32, verbose=2)
print("trained loss %.4f" % history.history["loss"][-1])
print("runs TensorFlow", tf.__version__)
print("args", sys.argv[1:], open("labels.txt").read().strip())
"""
HELPERS = """
import numpy as np

def features():
    x = np.random.RandomState(0).rand(256, 8).astype("float32")
    return x, (x.sum(axis=1) > 4).astype("float32")
"""


@pytest.fixture(scope="module")
def docker_emulator(engine: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from tfcloud.emulator import Emulator

    # Replicas are containers from the base image. The AIP_* directories are local ones, mounted (TensorFlow's
    # gfile cannot reach the storage emulator).
    with Emulator(project="tfcloud-nobuild", docker_host=engine.docker_host,  # type: ignore[attr-defined]
                  local_output_root=tmp_path_factory.mktemp("outputs")) as emulator:
        client = emulator.storage_client()
        try:
            client.create_bucket(BUCKET)
        finally:
            client.close()
        yield emulator


@pytest.fixture
def cloud_env(engine: object, docker_emulator: object, monkeypatch: pytest.MonkeyPatch) -> object:
    for key, value in docker_emulator.settings.env.items():  # type: ignore[attr-defined]
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-nobuild")
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", BUCKET)
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")  # type: ignore[attr-defined]
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    return docker_emulator


def test_no_build_job_runs_on_its_base_image_and_a_code_change_builds_and_pushes_nothing(
        cloud_env: object, engine: object, tensorflow_base: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tfcloud.image.dockerfile import installed_tensorflow_version

    tensorflow = installed_tensorflow_version()
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SCRIPT)
    (project / "helpers.py").write_text(HELPERS)
    (project / "labels.txt").write_text("cats and dogs\n")
    (project / "service-account.json").write_text('{"type": "service_account", "private_key": "x"}')
    # Two replicas: MultiWorkerMirrored, which routes Keras to tf-keras (pinned to the image's TensorFlow).
    argv = ["submit", str(project / "train.py"), "--vertex", "--no-build", "--parent-image", tensorflow_base,
            "--chief-config", "CPU", "--worker-count", "1", "--worker-config", "CPU", "--all-replicas",
            "--", "--epochs", "2"]
    assert main([*argv[:-3], "--dry-run"]) == 0
    planned = capsys.readouterr()
    base = re.search(r"^Base image \(every pool\): (\S+)$", planned.out + planned.err, re.M)
    assert base, planned.out[-2000:]
    assert f"Base image: TensorFlow {tensorflow} and tf-keras" in planned.out + planned.err

    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert f"Base image {base.group(1)} built and pushed." in captured.err  # the tag the plan showed
    match = re.search(r"Package (gs://\S+) uploaded \(", captured.err)
    assert match, captured.err[-2000:]
    for replica in ("chief-0", "worker-0"):
        assert re.search(rf"^{replica} +\| trained loss \d+\.\d+$", captured.out, re.M), captured.out[-3000:]
        assert re.search(rf"^{replica} +\| args \['--epochs', '2'\] cats and dogs$", captured.out, re.M)
        # The replica runs the image's TensorFlow, which is the one the job was written against.
        assert re.search(rf"^{replica} +\| runs TensorFlow {re.escape(str(tensorflow))}$", captured.out, re.M)
        assert re.search(rf"^{replica} +\| tfcloud: running on the base image's TensorFlow "
                         rf"{re.escape(str(tensorflow))} and tf-keras ", captured.out, re.M), captured.out[-3000:]
    assert "pip install" not in captured.out  # nothing is installed at a replica's start

    storage = cloud_env.storage_client()  # type: ignore[attr-defined]
    try:
        name = match.group(1).removeprefix(f"gs://{BUCKET}/")
        with tarfile.open(fileobj=io.BytesIO(storage.bucket(BUCKET).blob(name).download_as_bytes()),
                          mode="r:gz") as tar:
            assert not any(n.endswith("service-account.json") for n in tar.getnames())  # the secret stayed home

        # A code-only change: one look-up of the base image (over HTTP: no Docker engine is needed, and none is
        # reachable now), the new package uploaded, nothing built or pushed.
        (project / "helpers.py").write_text(HELPERS + "# changed\n")
        monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        writes = _registry_writes(engine)
        client = engine.client()  # type: ignore[attr-defined]
        try:
            images = sorted(image.id for image in client.images.list(all=True))
            assert main([*argv[:-3], "--detach"]) == 0
            again = capsys.readouterr()
            assert sorted(image.id for image in client.images.list(all=True)) == images  # nothing built
        finally:
            client.close()
        assert f"Base image {base.group(1)} is up to date: nothing to build or push." in again.err
        assert re.search(r"Package gs://\S+ uploaded \(", again.err) and match.group(1) not in again.err
        assert _registry_writes(engine) == writes  # nothing pushed
        job_id = again.out.strip().splitlines()[-1]
        assert main(["cancel", job_id]) == 0
    finally:
        storage.close()


def _registry_writes(engine: object) -> int:
    return sum(1 for r in engine.registry.requests()  # type: ignore[attr-defined]
               if r.startswith(("PUT", "POST", "PATCH")))
