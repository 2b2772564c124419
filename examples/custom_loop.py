"""A custom training loop that reads the strategy tfcloud set up (``tf.distribute.get_strategy()``).

Works under OneDevice, Mirrored and MultiWorkerMirrored strategies (a ParameterServer custom loop needs a
``ClusterCoordinator``: see parameter_server.py for the Keras way).

    tfcloud submit examples/custom_loop.py --local --worker-count 1
"""

from pathlib import Path

import numpy as np
import tensorflow as tf

GLOBAL_BATCH = 64
EPOCHS = 5

tf.keras.utils.set_random_seed(42)
strategy = tf.distribute.get_strategy()
print(f"strategy: {type(strategy).__name__}, {strategy.num_replicas_in_sync} replica(s) in sync")

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
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, reduction=tf.keras.losses.Reduction.NONE)


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


for epoch in range(1, EPOCHS + 1):
    total, batches = 0.0, 0
    for batch in dist_dataset:
        total += float(train_step(batch))
        batches += 1
    print(f"epoch {epoch}: loss {total / batches:.4f}")
