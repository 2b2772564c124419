"""A tunable digits classifier: the hyperparameters are command-line arguments, as a tuning trial passes them.

    tfcloud tune examples/tune_digits.py --param learning_rate=double:1e-3:1e-1:log --param units=int:16:128 \
        --param optimizer=categorical:adam,sgd --metric val_accuracy --trials 8 --parallel 2 -- --epochs 5

Nothing here reports the metric: in a tuning trial, tfcloud's launcher reports `val_accuracy` from Keras
`fit`'s epoch logs (call `tfcloud.report(val_accuracy=...)` to report something else). See docs/tuning.md.
"""

import argparse
from pathlib import Path

import numpy as np
import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--learning_rate", type=float, default=0.01)
parser.add_argument("--units", type=int, default=64)
parser.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
parser.add_argument("--epochs", type=int, default=5)
args = parser.parse_args()

tf.keras.utils.set_random_seed(42)
# scikit-learn's 8x8 digits (1,797 images), shipped beside the examples: no download, no scikit-learn.
digits = np.load(Path(__file__).parent / "data" / "digits.npz")
x = (digits["images"].reshape(-1, 64) / 16.0).astype("float32")
y = digits["labels"].astype("int64")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(64,)),
    tf.keras.layers.Dense(args.units, activation="relu"),
    tf.keras.layers.Dense(10),
])
optimizer = {"adam": tf.keras.optimizers.Adam, "sgd": tf.keras.optimizers.SGD}[args.optimizer](args.learning_rate)
model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
model.fit(x, y, epochs=args.epochs, batch_size=64, validation_split=0.2, verbose=2)
