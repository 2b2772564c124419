"""The launcher: golden text per strategy, and real TensorFlow runs of it on a script that never mentions a
strategy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfcloud.entry.launcher import render_launcher
from tfcloud.flow.validate import build_spec

GOLDEN = Path(__file__).parent / "golden" / "launcher"
UPDATE = os.environ.get("TFCLOUD_UPDATE_GOLDEN") == "1"

CASES = {
    "one_device_cpu": {},
    "one_device_gpu": {"chief_config": "T4_1X"},
    "mirrored": {"chief_config": "T4_4X"},
    "multi_worker_mirrored": {"worker_count": 2, "worker_config": "CPU"},
    "parameter_server": {"worker_count": 2, "worker_config": "CPU", "ps_count": 1},
    "tpu": {"worker_count": 1, "worker_config": "TPU"},
    "none": {"distribution_strategy": None},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_launcher_matches_golden(name: str, script: Path) -> None:
    spec = build_spec(entry_point=str(script), target="vertex", **CASES[name])  # type: ignore[arg-type]
    text = render_launcher(spec, script="train.py")
    golden = GOLDEN / f"{name}.py"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"launcher changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"
    compile(text, str(golden), "exec")


TRAIN = '''
import json, sys
import numpy as np
import tensorflow as tf
{keras_import}
tf.keras.utils.set_random_seed(1)
x = np.random.rand(64, 4).astype("float32")
y = x.sum(axis=1, keepdims=True)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
strategy = tf.distribute.get_strategy()
variable = model.trainable_variables[0]
inner = getattr(variable, "value", variable)  # Keras 3 wraps the tf.Variable; tf-keras does not
if callable(inner):
    inner = variable
parts = list(getattr(inner, "values", [inner]))
with open(sys.argv[1], "w") as out:
    json.dump({{
        "strategy": type(strategy).__name__,
        "replicas": strategy.num_replicas_in_sync,
        "variable": type(inner).__name__,
        "devices": [p.device for p in parts],
        "values": [p.numpy().tolist() for p in parts],
        "loss": history.history["loss"],
        "keras": keras.__name__,
        "argv": sys.argv[1:],
        "main": __name__,
    }}, out)
'''


def _run(tmp_path: Path, spec_kwargs: dict[str, object], *, keras_import: str, env: dict[str, str] | None = None,
         extra_args: tuple[str, ...] = ()) -> dict[str, object]:
    (tmp_path / "train.py").write_text(TRAIN.format(keras_import=keras_import))
    spec = build_spec(entry_point=str(tmp_path / "train.py"), **spec_kwargs)  # type: ignore[arg-type]
    job = tmp_path / "job"
    job.mkdir()
    launcher = job / "tfcloud_launcher.py"
    launcher.write_text(render_launcher(spec, script=str(tmp_path / "train.py")))
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(launcher), str(report), *extra_args], cwd=tmp_path,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, object] = json.loads(report.read_text())
    result["stderr"] = proc.stderr
    return result


@pytest.mark.tensorflow
def test_one_device_on_cpu_trains_unchanged_script(tmp_path: Path) -> None:
    result = _run(tmp_path, {}, keras_import="from tensorflow import keras",
                  extra_args=("--epochs", "3", "a b"))
    assert result["strategy"] == "OneDeviceStrategy"
    assert result["replicas"] == 1
    assert result["devices"] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    loss = result["loss"]
    assert isinstance(loss, list) and loss[-1] < loss[0]
    assert result["main"] == "__main__"
    assert result["argv"] == [str(tmp_path / "report.json"), "--epochs", "3", "a b"]
    expected = "tfcloud: running train.py under tf.distribute.OneDeviceStrategy with 1 replica(s) in sync."
    assert expected in str(result["stderr"])


@pytest.mark.tensorflow
@pytest.mark.parametrize("keras_import", ["from tensorflow import keras", "import keras"])
def test_mirrored_over_two_logical_cpus_mirrors_the_variables(tmp_path: Path, keras_import: str) -> None:
    result = _run(tmp_path, {"distribution_strategy": "mirrored"}, keras_import=keras_import,
                  env={"TFCLOUD_LOGICAL_CPUS": "2"})
    assert result["strategy"] == "MirroredStrategy"
    assert result["replicas"] == 2
    assert result["variable"] == "MirroredVariable"
    assert result["devices"] == ["/job:localhost/replica:0/task:0/device:CPU:0",
                                 "/job:localhost/replica:0/task:0/device:CPU:1"]
    values = result["values"]
    assert isinstance(values, list) and len(values) == 2 and values[0] == values[1]


@pytest.mark.tensorflow
def test_multi_worker_routes_import_keras_to_tf_keras(tmp_path: Path) -> None:
    # One process without TF_CONFIG: MultiWorkerMirrored runs as a single worker.
    result = _run(tmp_path, {"distribution_strategy": "multi_worker_mirrored"}, keras_import="import keras")
    assert result["strategy"] == "CollectiveAllReduceStrategy"  # MultiWorkerMirroredStrategy's class name
    assert result["keras"] == "tf_keras"
    stderr = str(result["stderr"])
    assert stderr.count("use tf-keras under tf.distribute.MultiWorkerMirroredStrategy") == 1


@pytest.mark.parametrize("worker_config", ["TPU_V5E_4X", "TPU_V5E_8X", "TPU_V5E_16X"])
def test_a_tpu_vm_job_resolves_its_local_tpu_as_on_a_tpu_vm(worker_config: str, script: Path) -> None:
    # On a TPU VM the chips are attached to the VM itself: TPUClusterResolver(tpu="local"), then
    # initialize_tpu_system, as Cloud TPU's TensorFlow guide does it; TFCLOUD_TPU names another TPU.
    spec = build_spec(entry_point=str(script), target="vertex", worker_count=1, worker_config=worker_config)
    text = render_launcher(spec, script="train.py")
    assert text == (GOLDEN / "tpu.py").read_text()  # the same launcher as for tensorflow-cloud's TPU config
    assert 'TPUClusterResolver(tpu=os.environ.get("TFCLOUD_TPU", "local"))' in text
    assert text.index("tf.config.experimental_connect_to_cluster(resolver)") \
        < text.index("tf.tpu.experimental.initialize_tpu_system(resolver)") \
        < text.index("tf.distribute.TPUStrategy(resolver)")
