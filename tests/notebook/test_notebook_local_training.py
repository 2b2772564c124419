"""A converted notebook trains under the local backend: MultiWorkerMirroredStrategy on two processes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.notebook.nbhelpers import notebook
from tfcloud.job.states import JobState

pytestmark = pytest.mark.tensorflow

TRAIN = """\
import json, os
import numpy as np
import tensorflow as tf

strategy = tf.distribute.get_strategy()
print("strategy:", type(strategy).__name__, strategy.num_replicas_in_sync)
tf.keras.utils.set_random_seed(0)
x = np.random.RandomState(0).rand(64, 4).astype("float32")
y = (x.sum(axis=1, keepdims=True) > 2).astype("float32")
model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(1)])
model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
history = model.fit(x, y, epochs=3, batch_size=16, verbose=0)
task = json.loads(os.environ["TF_CONFIG"])["task"]
np.savez(os.path.join(OUT, "{type}-{index}.npz".format(**task)), loss=np.array(history.history["loss"]),
         kernel=model.get_weights()[0])
"""


@pytest.mark.timeout(300)
def test_a_converted_notebook_trains_on_two_processes(tmp_path):
    import tfcloud

    out = tmp_path / "out"
    out.mkdir()
    path = notebook(
        tmp_path / "train.ipynb",
        ("markdown", "# Train"),
        "%pip install -q numpy\n%matplotlib inline\n%load_ext tensorboard",
        "import tfcloud\ntfcloud.run(entry_point=None, worker_count=1)  # in the job: returns None at once",
        f"OUT = {str(out)!r}\n!echo shell line {{1 + 1}} in $OUT",
        "%%capture log\n" + TRAIN,
        "if tfcloud.remote():\n    print('captured', len(log.stdout) > 0)",
    )
    handle = tfcloud.run(entry_point=str(path), worker_count=1, target="local")
    state = handle.wait(240).state
    logs = list(handle.logs())
    text = "\n".join(f"{ln.replica} | {ln.text}" for ln in logs)
    assert state is JobState.SUCCEEDED, text[-6000:]
    for replica in ("chief-0", "worker-0"):
        said = [ln.text for ln in logs if ln.replica == replica]
        assert f"shell line 2 in {out}" in said, text[-3000:]
        assert "captured True" in said
        assert "tfcloud: running tfcloud_notebook_train.py under tf.distribute.MultiWorkerMirroredStrategy with 2 "\
            "replica(s) in sync." in said, text[-3000:]
    chief, worker = (np.load(out / f"{name}.npz") for name in ("chief-0", "worker-0"))
    np.testing.assert_allclose(chief["loss"], worker["loss"], rtol=1e-6)
    np.testing.assert_allclose(chief["kernel"], worker["kernel"], atol=1e-6)
    assert chief["loss"][-1] < chief["loss"][0]
    json.dumps(text)
