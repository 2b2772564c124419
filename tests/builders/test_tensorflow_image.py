"""A real job image on a TensorFlow base (made locally from this interpreter's TensorFlow + tf-keras): its
entrypoint, the launcher, runs the user's script with tfcloud.remote() true and the strategy set up."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tfcloud.image.builders.docker import DockerBuilder
from tfcloud.image.containerize import containerize
from tfcloud.job.artifacts import PreparedJob
from tfcloud.testing.dockerd import Engine

MakeJob = Callable[..., PreparedJob]  # the make_job fixture (conftest.py)

pytestmark = [pytest.mark.docker, pytest.mark.tensorflow]

SCRIPT = """
import sys
import tensorflow as tf
import tfcloud

strategy = tf.distribute.get_strategy()
print("remote", tfcloud.remote(), type(strategy).__name__, "args", sys.argv[1:])
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(tf.ones((8, 2)), tf.zeros((8, 1)), epochs=1, verbose=0)
print("trained")
"""


def test_job_image_runs_the_launcher(engine: Engine, make_job: MakeJob, tensorflow_base: str,
                                     repository: str) -> None:
    job = make_job(parent_image=tensorflow_base)
    (job.workdir / "train.py").write_text(SCRIPT)
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none") as builder:
        ref = containerize(job, builder=builder, repository=repository, push=False)  # push: tested elsewhere
    client = engine.client()
    try:
        container = client.containers.run(ref.uri, ["--lr", "0.1"], network_mode="none", detach=True)
        try:
            code = container.wait(timeout=300)["StatusCode"]
            logs = container.logs().decode()
        finally:
            container.remove(force=True)
    finally:
        client.close()
    assert code == 0, logs
    assert "remote True OneDeviceStrategy args ['--lr', '0.1']" in logs
    assert "trained" in logs
