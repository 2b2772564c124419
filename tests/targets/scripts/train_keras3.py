"""The same training script written with ``import keras`` (no strategy code either), for the TensorFlow tests.

Usage: train_keras3.py OUT_DIR [EPOCHS]. Writes OUT_DIR/<replica>.npz: every variable's value on every device
it lives on (``v<i>_<j>``), and the loss of each epoch. Prints ``EPOCH_END <n>`` after each epoch.
"""

import os
import sys

import keras
import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits

out_dir, epochs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
keras.utils.set_random_seed(7)
digits = load_digits()
x = (digits.data[:512] / 16.0).astype("float32")
y = digits.target[:512].astype("int64")

model = keras.Sequential([
    keras.Input(shape=(64,)),
    keras.layers.Dense(16, activation="relu"),
    keras.layers.Dense(10),
])
model.compile(optimizer=keras.optimizers.SGD(0.1),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


class Marker(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print(f"EPOCH_END {epoch + 1}", flush=True)


history = model.fit(x, y, epochs=epochs, batch_size=64, steps_per_epoch=8, verbose=2, callbacks=[Marker()])
arrays = {"loss": np.array(history.history["loss"])}
for i, v in enumerate(model.weights):
    inner = getattr(v, "_value", v)  # a Keras 3 variable wraps a tf.Variable
    components = getattr(inner, "values", None) or (inner,)
    for j, c in enumerate(components):
        arrays[f"v{i}_{j}"] = np.array(c)
np.savez(os.path.join(out_dir, os.environ["TFCLOUD_REPLICA"] + ".npz"), **arrays)
print(f"strategy: {type(tf.distribute.get_strategy()).__name__}")
