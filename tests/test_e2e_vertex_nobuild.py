"""`tfcloud submit --vertex --no-build` end to end with no Docker engine at all: the job's files go as a Python
package to the storage emulator, the CustomJob names it in python_package_spec, and the emulator fetches it,
pip-installs it and runs `python -m tfcloud_job.start` as local processes, which train a real tf.keras model.
A resubmission of the same files uploads nothing. The real aiplatform_v1 / logging_v2 / storage clients
throughout; nothing patched."""

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

pytestmark = [pytest.mark.tensorflow, pytest.mark.emulator]

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
print("args", sys.argv[1:], open("labels.txt").read().strip())
"""
HELPERS = """
import numpy as np

def features():
    x = np.random.RandomState(0).rand(256, 8).astype("float32")
    return x, (x.sum(axis=1) > 4).astype("float32")
"""


@pytest.fixture(scope="module")
def process_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from tfcloud.emulator import Emulator

    # No docker_host: replicas are local processes. The AIP_* directories are local ones (TensorFlow's gfile
    # cannot reach the storage emulator).
    with Emulator(project="tfcloud-nobuild", local_output_root=tmp_path_factory.mktemp("outputs")) as emulator:
        client = emulator.storage_client()
        try:
            client.create_bucket(BUCKET)
        finally:
            client.close()
        yield emulator


@pytest.fixture
def cloud_env(process_emulator: object, monkeypatch: pytest.MonkeyPatch) -> object:
    for key, value in process_emulator.settings.env.items():  # type: ignore[attr-defined]
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-nobuild")
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", BUCKET)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # no engine: nothing may need one
    return process_emulator


def test_no_build_job_trains_and_an_unchanged_resubmission_uploads_nothing(
        cloud_env: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SCRIPT)
    (project / "helpers.py").write_text(HELPERS)
    (project / "labels.txt").write_text("cats and dogs\n")
    (project / "service-account.json").write_text('{"type": "service_account", "private_key": "x"}')
    argv = ["submit", str(project / "train.py"), "--vertex", "--no-build", "--chief-config", "CPU",
            "--", "--epochs", "2"]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    match = re.search(r"Package (gs://\S+) uploaded \(", captured.err)
    assert match, captured.err[-2000:]
    uri = match.group(1)
    assert re.search(r"^chief-0 +\| trained loss \d+\.\d+$", captured.out, re.M), captured.out[-3000:]
    assert re.search(r"^chief-0 +\| args \['--epochs', '2'\] cats and dogs$", captured.out, re.M)

    storage = cloud_env.storage_client()  # type: ignore[attr-defined]
    try:
        name = uri.removeprefix(f"gs://{BUCKET}/")
        blob = storage.bucket(BUCKET).get_blob(name)
        generation = blob.generation
        with tarfile.open(fileobj=io.BytesIO(blob.download_as_bytes()), mode="r:gz") as tar:
            names = tar.getnames()
        assert not any(n.endswith("service-account.json") for n in names)  # the secret stayed home
        assert main([*argv[:-3], "--detach"]) == 0  # the same files again
        again = capsys.readouterr()
        assert f"Package {uri} is up to date: nothing to upload." in again.err
        assert storage.bucket(BUCKET).get_blob(name).generation == generation
        job_id = again.out.strip().splitlines()[-1]
        assert main(["cancel", job_id]) == 0
    finally:
        storage.close()
