"""A tf.keras training script for the Ray tests across two hosts, with no checkpoint code of its own.

Usage: train_hosts.py OUT_DIR EPOCHS [PAUSE_EPOCH]

- Prints ``TF_CONFIG <json>`` (what this replica saw) and ``EPOCH_BEGIN <n>`` (1-based) as each epoch starts.
- With PAUSE_EPOCH, on the first attempt (TFCLOUD_ATTEMPT=1) the chief prints ``PAUSED <n>`` after the first
  batch of that epoch and waits (the other replicas wait for it in the collectives): every replica has then
  finished the epochs before it and their backups, and a test can take a host away.
- Writes OUT_DIR/<replica>.npz (every variable's value and each epoch's loss) and, on the chief, the model to
  AIP_MODEL_DIR/model.keras (the others save to a temporary directory: saving takes part in collectives).
"""

import os
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

out_dir, epochs = sys.argv[1], int(sys.argv[2])
pause_epoch = int(sys.argv[3]) if len(sys.argv) > 3 else 0
me = os.environ["TFCLOUD_REPLICA"]
print("TF_CONFIG", os.environ.get("TF_CONFIG", "{}"), flush=True)

tf.keras.utils.set_random_seed(7)
rng = np.random.default_rng(0)
x = rng.random((256, 8), dtype="float32")
y = (x.sum(axis=1) > 4).astype("float32")
model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(8, activation="relu"),
                             tf.keras.layers.Dense(1)])
model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")


class Progress(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch + 1
        print(f"EPOCH_BEGIN {self.epoch}", flush=True)


class Pause(Progress):  # batch hooks: not under ParameterServerStrategy
    def on_train_batch_end(self, batch, logs=None):
        if (me == "chief-0" and self.epoch == pause_epoch and batch == 0
                and os.environ.get("TFCLOUD_ATTEMPT") == "1"):
            print(f"PAUSED {self.epoch}", flush=True)
            time.sleep(300)
            sys.exit("nobody took the host away")


callbacks = [Pause() if pause_epoch else Progress()]
history = model.fit(x, y, epochs=epochs, batch_size=32, steps_per_epoch=4, verbose=2, callbacks=callbacks)
arrays = {"loss": np.array(history.history["loss"])}
for i, v in enumerate(model.weights):
    for j, c in enumerate(getattr(v, "values", None) or (v,)):
        arrays[f"v{i}_{j}"] = np.array(c)
np.savez(os.path.join(out_dir, f"{me}.npz"), **arrays)
model_dir = os.environ["AIP_MODEL_DIR"] if me == "chief-0" else tempfile.mkdtemp()
model.save(os.path.join(model_dir, "model.keras"))
print(f"strategy: {type(tf.distribute.get_strategy()).__name__}", flush=True)
print(f"DONE {me}", flush=True)
