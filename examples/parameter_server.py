"""The digits classifier under ParameterServerStrategy: a chief, workers and parameter servers.

Only the chief runs this script; tfcloud's launcher makes the workers and parameter servers serve it and
stops them when the chief ends. tf-keras needs ``steps_per_epoch`` under this strategy, even for numpy input.

    tfcloud submit examples/parameter_server.py --local --worker-count 2 --ps-count 1
"""

from pathlib import Path

import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(42)

# scikit-learn's 8x8 digits (1,797 images), shipped beside the examples: no download, no scikit-learn.
digits = np.load(Path(__file__).parent / "data" / "digits.npz")
x = (digits["images"].reshape(-1, 64) / 16.0).astype("float32")
y = digits["labels"].astype("int64")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(64,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.compile(
    optimizer=tf.keras.optimizers.Adam(0.01),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(x, y, epochs=5, steps_per_epoch=20, batch_size=64, verbose=2)
print("training finished")
