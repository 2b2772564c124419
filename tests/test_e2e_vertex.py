"""The whole cloud path, end to end: `tfcloud submit --vertex` builds an image on a real Docker engine (a
TensorFlow base image made locally), pushes it to a loopback registry, creates the CustomJob on the emulator,
which runs the replicas as containers from that image; the logs stream back and the exit code tells the
outcome. The real aiplatform_v1 / logging_v2 / docker clients throughout; nothing patched."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI path needs tfcloud[cloud]")

from tfcloud.cli import main

pytestmark = [pytest.mark.docker, pytest.mark.tensorflow, pytest.mark.emulator]

# Written as a user writes it: no strategy code, Keras 3 style imports.
KERAS_SCRIPT = """
import sys
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(7)
x = np.random.RandomState(0).rand(256, 8).astype("float32")
y = (x.sum(axis=1) > 4).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
history = model.fit(x, y, epochs=3, batch_size=32, verbose=2)
print("final weight sum %.6f" % float(sum(float(np.sum(w)) for w in model.get_weights())))
print("args", sys.argv[1:])
"""

FAILING_SCRIPT = """
def load():
    raise FileNotFoundError("data.csv is missing")

print("starting", flush=True)
load()
"""


@pytest.fixture(scope="module")
def docker_emulator(engine: object) -> Iterator[object]:
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-e2e", docker_host=engine.docker_host) as emulator:  # type: ignore[attr-defined]
        yield emulator


@pytest.fixture
def cloud_env(engine: object, docker_emulator: object, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", docker_emulator.endpoint)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-e2e")
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")  # type: ignore[attr-defined]
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    return str(engine.registry.address)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_submit_unchanged_keras_script_with_two_workers(cloud_env: str, tensorflow_base: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(KERAS_SCRIPT)
    code = main(["submit", str(project / "train.py"), "--vertex", "--chief-config", "CPU", "--worker-count", "2",
                 "--worker-config", "CPU", "--parent-image", tensorflow_base, "--all-replicas", "--", "--epochs", "3"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert f"{cloud_env}/tfcloud/train:" in captured.err  # built and pushed to the loopback registry
    sums = {}
    for replica in ("chief-0", "worker-0", "worker-1"):
        found = re.findall(rf"^{replica} +\| final weight sum (\S+)$", captured.out, re.M)
        assert found, f"no result from {replica}:\n{captured.out[-3000:]}"
        sums[replica] = found[-1]
        assert re.search(rf"^{replica} +\| args \['--epochs', '3'\]$", captured.out, re.M)
    assert len(set(sums.values())) == 1, sums  # MultiWorkerMirrored: every replica holds the same weights
    assert "use tf-keras under tf.distribute.MultiWorkerMirroredStrategy" in captured.out
    assert re.search(r"^Job \d+ succeeded\.$", captured.err, re.M)
    assert list(Path.cwd().iterdir()) == []  # nothing left in the working directory


def test_failing_script_exits_1_with_its_traceback(cloud_env: str, tensorflow_base: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "failing"
    project.mkdir()
    (project / "train.py").write_text(FAILING_SCRIPT)
    code = main(["submit", str(project / "train.py"), "--vertex", "--chief-config", "CPU",
                 "--parent-image", tensorflow_base])
    captured = capsys.readouterr()
    assert code == 1
    assert "chief-0 | FileNotFoundError: data.csv is missing" in captured.out
    assert re.search(r"^Job \d+ failed: The replica workerpool0-0 exited with a non-zero status of 1\.", captured.err,
                     re.M)
    # the last lines were just streamed (noise left out on both sides): stderr says why once, without repeating them
    assert "FileNotFoundError: data.csv is missing" not in captured.err


SLOW_SCRIPT = """
import time
print("started", flush=True)
time.sleep(120)
"""


def _interrupted_submit(tmp_path: Path, python_base: str, *extra: str) -> tuple[int, str, str]:
    """Run `tfcloud submit --vertex` in a child process, press Ctrl-C once the chief runs, return its result."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    project = tmp_path / "slow"
    project.mkdir()
    (project / "train.py").write_text(SLOW_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.cli", "submit", str(project / "train.py"), "--vertex", "--chief-config",
         "CPU", "--strategy", "none", "--parent-image", python_base, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    out_lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        out_lines.append(line)
        if "chief-0" in line and "started" in line:
            proc.send_signal(signal.SIGINT)
            break
    out_rest = proc.stdout.read()  # until the child exits and closes it
    proc.wait(timeout=120)
    reader.join(timeout=10)
    proc.stdout.close()
    assert proc.stderr is not None
    proc.stderr.close()
    return proc.returncode, "".join(out_lines) + out_rest, "".join(err_lines)


def _job_state(emulator: object, job_id: str) -> str:
    client = emulator.job_client()  # type: ignore[attr-defined]
    name = f"{emulator.parent}/customJobs/{job_id}"  # type: ignore[attr-defined]
    return str(client.get_custom_job(name=name).state.name)


def test_ctrl_c_detaches_and_leaves_the_job_running(cloud_env: str, python_base: str, docker_emulator: object,
                                                    tmp_path: Path) -> None:
    code, _out, err = _interrupted_submit(tmp_path, python_base)
    assert code == 130
    job_id = re.search(r"Detached: (\d+) keeps running\.", err)
    assert job_id, err
    assert f"Follow it again: tfcloud logs {job_id[1]} -f" in err
    assert f"Cancel it:       tfcloud cancel {job_id[1]}" in err
    assert _job_state(docker_emulator, job_id[1]) == "JOB_STATE_RUNNING"
    assert main(["cancel", job_id[1]]) == 0  # clean up (and `tfcloud cancel` works)


def test_cancel_on_interrupt_cancels_the_job(cloud_env: str, python_base: str, docker_emulator: object,
                                             tmp_path: Path) -> None:
    import time

    code, _out, err = _interrupted_submit(tmp_path, python_base, "--cancel-on-interrupt")
    assert code == 130
    job_id = re.search(r"Interrupted: cancelling (\d+)\.", err)
    assert job_id, err
    deadline = time.monotonic() + 60
    while _job_state(docker_emulator, job_id[1]) != "JOB_STATE_CANCELLED" and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _job_state(docker_emulator, job_id[1]) == "JOB_STATE_CANCELLED"


def test_cloud_build_variant(cloud_env: str, tensorflow_base: str, docker_emulator: object, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The same submit with --image-build-bucket: the context is staged in the storage emulator and the image is
    built by the emulator's Cloud Build on the real engine."""
    settings = docker_emulator.settings  # type: ignore[attr-defined]
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", settings.storage_endpoint)
    storage = docker_emulator.storage_client()  # type: ignore[attr-defined]
    try:
        if storage.lookup_bucket("e2e-builds") is None:
            storage.create_bucket("e2e-builds")
    finally:
        storage.close()
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(KERAS_SCRIPT)
    code = main(["submit", str(project / "train.py"), "--vertex", "--chief-config", "CPU", "--worker-count", "1",
                 "--worker-config", "CPU", "--parent-image", tensorflow_base, "--image-build-bucket", "e2e-builds",
                 "--all-replicas"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    builds = docker_emulator.build_client()  # type: ignore[attr-defined]
    try:
        done = [b for b in builds.list_builds(project_id="tfcloud-e2e") if b.status.name == "SUCCESS"]
    finally:
        builds.transport.close()
    assert done, "the image was not built by Cloud Build"
    sums = {m for m in re.findall(r"^(?:chief|worker)-0 +\| final weight sum (\S+)$", captured.out, re.M)}
    assert len(sums) == 1, captured.out[-3000:]


def test_sdk_run_without_stream_logs_returns_the_handle(cloud_env: str, python_base: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import tfcloud
    from tfcloud.google.vertex.backend import VertexJob
    from tfcloud.job.states import JobState

    project = tmp_path / "quick"
    project.mkdir()
    (project / "train.py").write_text("import sys, tfcloud\nprint('remote', tfcloud.remote(), sys.argv[1:])\n")
    handle = tfcloud.run(entry_point=str(project / "train.py"), target="vertex", chief_config="CPU",
                         distribution_strategy=None, docker_config=tfcloud.DockerConfig(parent_image=python_base),
                         entry_point_args=["--x", "1"], job_labels={"via": "sdk"})
    assert isinstance(handle, tfcloud.Job) and isinstance(handle.handle, VertexJob)
    # tensorflow-cloud's result keys: the job's id and the image its replicas run
    assert handle["job_id"] == handle.job_id
    pool = handle.handle.job.job_spec.worker_pool_specs[0]
    assert handle["docker_image"] == pool.container_spec.image_uri and "/tfcloud/" in handle["docker_image"]
    err = capsys.readouterr().err
    assert f"Submitted job {handle.job_id}." in err
    assert f"Emulator: grpc://{os.environ['TFCLOUD_EMULATOR_HOST']}/{handle.handle.name}" in err
    assert "console.cloud.google.com" not in err
    assert handle.wait(timeout=120).state is JobState.SUCCEEDED
    assert [line.text for line in handle.logs(replica="chief-0")][-1] == "remote True ['--x', '1']"
    assert handle.info().labels["via"] == "sdk"
    # Every stage, in order: measured here (context, build, push, submit), then from the CustomJob's own times.
    timeline = handle.timeline()
    assert [s.name for s in timeline.stages] == ["context", "build", "push", "submit", "queued", "run"]
    starts = [s.start for s in timeline.stages]
    assert starts == sorted(starts) and all(s.end is not None and s.duration() >= 0 for s in timeline.stages)
