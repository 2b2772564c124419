"""Tuning on Vertex AI, end to end: `tfcloud tune --vertex` builds the image on a real Docker engine, pushes it to
the loopback registry and creates a HyperparameterTuningJob on the emulator, which runs each trial as a CustomJob
of containers from that image; a real tf.keras script, whose `fit` reports val_accuracy through the launcher,
gets the trial's parameters as arguments; the metrics come back through the real aiplatform_v1 client and the
best trial is reported. `tfcloud status STUDY --study --json` reads the same study again. Nothing patched."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI path needs tfcloud[cloud]")

from tfcloud.cli import main

pytestmark = [pytest.mark.docker, pytest.mark.tensorflow, pytest.mark.emulator]

# A user's script: its own arguments, the trial's parameters as arguments, no reporting code (Keras fit reports).
KERAS_SCRIPT = """
import argparse
import numpy as np
import keras

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--units", type=int, required=True)
parser.add_argument("--learning_rate", type=float, required=True)
args = parser.parse_args()
print("trial units", args.units, "learning_rate", args.learning_rate, "epochs", args.epochs, flush=True)

keras.utils.set_random_seed(7)
x = np.random.RandomState(0).rand(256, 8).astype("float32")
y = (x.sum(axis=1) > 4).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(args.units, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=keras.optimizers.Adam(args.learning_rate), loss="binary_crossentropy",
              metrics=["accuracy"])
model.fit(x, y, epochs=args.epochs, batch_size=32, validation_split=0.25, verbose=2)
"""


@pytest.fixture(scope="module")
def docker_emulator(engine: object) -> Iterator[object]:
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-e2e-tune", docker_host=engine.docker_host) as emulator:  # type: ignore[attr-defined]
        yield emulator


@pytest.fixture
def cloud_env(engine: object, docker_emulator: object, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", docker_emulator.endpoint)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-e2e-tune")
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")  # type: ignore[attr-defined]
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    return str(engine.registry.address)  # type: ignore[attr-defined]


@pytest.mark.slow
def test_tune_vertex_runs_keras_trials_and_reports_the_best(
        cloud_env: str, docker_emulator: object, tensorflow_base: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(KERAS_SCRIPT)
    code = main(["tune", str(project / "train.py"), "--vertex", "--param", "units=int:2:16",
                 "--param", "learning_rate=double:1e-3:3e-1:log", "--metric", "val_accuracy", "--trials", "4",
                 "--parallel", "2", "--algorithm", "random", "--chief-config", "CPU",
                 "--parent-image", tensorflow_base, "--", "--epochs", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert f"{cloud_env}/tfcloud/train:" in captured.err  # built and pushed to the loopback registry
    study_id = re.search(r"^Study (\d+): 4 trial\(s\), 2 at a time\.$", captured.err, re.M)
    assert study_id, captured.err[-3000:]

    # What the service recorded, read with the real client: 4 trials, each with its val_accuracy.
    client = docker_emulator.job_client()  # type: ignore[attr-defined]
    try:
        job = client.get_hyperparameter_tuning_job(
            name=f"projects/tfcloud-e2e-tune/locations/us-central1/hyperparameterTuningJobs/{study_id[1]}")
        trials = {t.id: t for t in job.trials}
        logs = {t.id: client.get_custom_job(name=t.custom_job) for t in job.trials}
    finally:
        client.transport.close()
    assert job.state.name == "JOB_STATE_SUCCEEDED"
    assert len(trials) == 4 and all(t.state.name == "SUCCEEDED" for t in trials.values())
    metrics = {tid: t.final_measurement.metrics[0].value for tid, t in trials.items()}
    assert all(0.0 <= value <= 1.0 for value in metrics.values())
    for tid, trial in trials.items():  # each trial's job: the user's args, then its own parameters
        values = {p.parameter_id: p.value for p in trial.parameters}
        args = list(logs[tid].job_spec.worker_pool_specs[0].container_spec.args)
        assert args == ["--epochs", "2", f"--units={int(values['units'])}",
                        f"--learning_rate={values['learning_rate']!r}"]

    best = re.search(r"^Best trial (\d+): val_accuracy = (\S+)\. Rerun it with:$", captured.err, re.M)
    assert best, captured.err[-3000:]
    assert metrics[best[1]] == max(metrics.values()) and float(best[2]) == pytest.approx(max(metrics.values()))
    rerun = next(line for line in captured.out.splitlines() if line.startswith("tfcloud submit "))
    units = int({p.parameter_id: p.value for p in trials[best[1]].parameters}["units"])
    assert "--vertex" in rerun and rerun.endswith(f"-- --epochs 2 --units={units} "
                                                   f"--learning_rate={trials[best[1]].parameters[1].value!r}")
    assert list(Path.cwd().iterdir()) == []  # nothing left in the working directory

    code = main(["status", study_id[1], "--study", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0
    assert shown["state"] == "succeeded" and shown["best_trial"] == best[1]
    assert {t["trial_id"]: t["metric"] for t in shown["trials"]} == pytest.approx(metrics)
    assert shown["params"] == ["units=int:2:16", "learning_rate=double:0.001:0.3:log"]

    code = main(["status", study_id[1], "--study"])  # the table, and the best trial's command
    table = capsys.readouterr().out
    assert code == 0 and re.search(rf"^ +\* {best[1]} ", table, re.M)
    # The script's path, kept in the state dir when the study was submitted: the command tune printed, again.
    assert rerun.startswith(f"tfcloud submit {project / 'train.py'} --vertex --chief-config CPU -- --epochs 2 ")
    assert f"Rerun the best trial: {rerun}\n" in table
