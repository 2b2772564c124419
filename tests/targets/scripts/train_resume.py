"""A training script written to Vertex AI's docs, with no checkpoint code of its own: tfcloud's launcher makes its
``model.fit`` resume after a restart. For the recovery tests (local and emulator).

Usage: train_resume.py EPOCHS [KILL_REPLICA KILL_EPOCH [self|wait]]

- Prints ``EPOCH_BEGIN <n>`` (1-based) as each epoch starts.
- On the first attempt only (a marker file in AIP_CHECKPOINT_DIR), replica KILL_REPLICA (``chief-0``,
  ``worker-0``) SIGKILLs itself after the first batch of epoch KILL_EPOCH: every replica has then finished
  the epoch before, and its backup. With ``wait`` it prints ``PREEMPT_ME`` there instead and waits to be
  killed from outside (the emulator's preemption fault).
- Writes TensorBoard events to AIP_TENSORBOARD_LOG_DIR/<replica>, the model to AIP_MODEL_DIR/model.keras (the chief; the
  others to a temporary directory) and, on the chief, a final checkpoint with tf.train.CheckpointManager to
  AIP_CHECKPOINT_DIR/final.
"""

import json
import os
import signal
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

epochs = int(sys.argv[1])
kill_replica, kill_epoch = (sys.argv[2], int(sys.argv[3])) if len(sys.argv) > 3 else ("none", 0)
how = sys.argv[4] if len(sys.argv) > 4 else "self"
task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {"type": "chief", "index": 0})
me = f"{task['type']}-{task['index']}"
is_chief = task["type"] == "chief"
checkpoints = os.environ["AIP_CHECKPOINT_DIR"]
marker = os.path.join(checkpoints, f"killed-{me}")

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

    def on_train_batch_end(self, batch, logs=None):
        if me == kill_replica and self.epoch == kill_epoch and batch == 0 and not os.path.exists(marker):
            with open(marker, "w") as f:
                f.write("killed\n")
            if how == "wait":
                print(f"PREEMPT_ME {me} at epoch {self.epoch}", flush=True)
                time.sleep(120)
                sys.exit("nobody preempted me")
            print(f"KILLING {me} at epoch {self.epoch}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)


class Events(tf.keras.callbacks.Callback):
    """TensorBoard events without the tensorboard package (tf.summary.write is TensorFlow's own)."""

    def __init__(self):
        super().__init__()
        self.writer = tf.summary.create_file_writer(os.path.join(os.environ["AIP_TENSORBOARD_LOG_DIR"], me))

    def on_epoch_end(self, epoch, logs=None):
        with self.writer.as_default():
            tf.summary.write("loss", tf.constant(float(logs["loss"])), step=epoch)
        self.writer.flush()


model.fit(x, y, epochs=epochs, batch_size=32, steps_per_epoch=4, verbose=2, callbacks=[Progress(), Events()])
# Every replica saves (under MultiWorkerMirrored saving takes part in collectives); only the chief's copy counts.
model_dir = os.environ["AIP_MODEL_DIR"] if is_chief else tempfile.mkdtemp()
model.save(os.path.join(model_dir, "model.keras"))
final = os.path.join(checkpoints, "final") if is_chief else tempfile.mkdtemp()
tf.train.CheckpointManager(tf.train.Checkpoint(model=model), final, max_to_keep=1).save()
print(f"DONE {me}", flush=True)
