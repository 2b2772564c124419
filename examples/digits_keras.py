"""Classify handwritten digits with a small tf.keras model: no distribution code anywhere.

The data is scikit-learn's bundled 8x8 digits (1,797 images, no download). Run it as it is, or on a local
cluster of two processes (a chief and one worker, MultiWorkerMirroredStrategy) with:

    tfcloud submit examples/digits_keras.py --local --worker-count 1

tfcloud's launcher sets up the strategy before this script runs; the model below is built under it.
"""

from pathlib import Path

import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(42)

# scikit-learn's 8x8 digits (1,797 images), shipped beside the examples: no download, no scikit-learn.
digits = np.load(Path(__file__).parent / "data" / "digits.npz")
x = (digits["images"].reshape(-1, 64) / 16.0).astype("float32")
y = digits["labels"].astype("int64")
order = np.random.RandomState(0).permutation(len(x))  # train_test_split(test_size=0.2, random_state=0)
x_train, x_test, y_train, y_test = x[order[360:]], x[order[:360]], y[order[360:]], y[order[:360]]

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
model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=2)
loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
print(f"test loss {loss:.3f}, test accuracy {accuracy:.3f}")
