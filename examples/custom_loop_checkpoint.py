"""A custom training loop that survives restarts: tf.train.CheckpointManager in AIP_CHECKPOINT_DIR.

tfcloud makes Keras ``fit`` resume by itself (docs/recovery.md); a custom loop saves and restores its own state.
Every replica restores from the chief's checkpoints and every replica saves (under MultiWorkerMirrored saving
takes part in collectives), the chief into AIP_CHECKPOINT_DIR, the others into a directory of their own.

    tfcloud submit examples/custom_loop_checkpoint.py --local --worker-count 1 --max-restarts 2
"""

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf

GLOBAL_BATCH = 64
EPOCHS = 5

tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.get_strategy()
task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
is_chief = task.get("type", "chief") == "chief"

# scikit-learn's 8x8 digits (1,797 images), shipped beside the examples: no download, no scikit-learn.
digits = np.load(Path(__file__).parent / "data" / "digits.npz")
x = (digits["images"].reshape(-1, 64) / 16.0).astype("float32")
y = digits["labels"].astype("int64")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(2048, seed=0).batch(GLOBAL_BATCH)
dist_dataset = strategy.experimental_distribute_dataset(dataset)

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(64,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    optimizer = tf.keras.optimizers.Adam(0.01)
    epoch = tf.Variable(0, dtype=tf.int64, trainable=False)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

# AIP_CHECKPOINT_DIR: set by Vertex AI under the job's output directory, and by tfcloud for local runs.
shared_dir = os.path.join(os.environ.get("AIP_CHECKPOINT_DIR") or tempfile.mkdtemp(), "custom-loop")
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
manager = tf.train.CheckpointManager(checkpoint, shared_dir if is_chief else tempfile.mkdtemp(), max_to_keep=2)
latest = tf.train.latest_checkpoint(shared_dir)
if latest:
    checkpoint.restore(latest)
    print(f"resumed after epoch {int(epoch.numpy())} from {latest}")


@tf.function
def train_step(batch):
    def step(features, labels):
        with tf.GradientTape() as tape:
            per_example = loss_fn(labels, model(features, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    per_replica = strategy.run(step, args=batch)
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


while int(epoch.numpy()) < EPOCHS:
    total, batches = 0.0, 0
    for batch in dist_dataset:
        total += float(train_step(batch))
        batches += 1
    epoch.assign_add(1)
    manager.save()
    print(f"epoch {int(epoch.numpy())}: loss {total / batches:.4f}")
