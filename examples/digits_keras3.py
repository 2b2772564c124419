"""The digits classifier written with ``import keras`` (Keras 3 style), again with no distribution code.

Under MultiWorkerMirrored and ParameterServer strategies Keras 3 cannot train (keras-team/keras#20585), so
tfcloud's launcher serves ``import keras`` from tf-keras there; the script does not change.

    tfcloud submit examples/digits_keras3.py --local --worker-count 1
"""

from pathlib import Path

import keras
import numpy as np

keras.utils.set_random_seed(42)

# scikit-learn's 8x8 digits (1,797 images), shipped beside the examples: no download, no scikit-learn.
digits = np.load(Path(__file__).parent / "data" / "digits.npz")
x = (digits["images"].reshape(-1, 64) / 16.0).astype("float32")
y = digits["labels"].astype("int64")
order = np.random.RandomState(0).permutation(len(x))  # train_test_split(test_size=0.2, random_state=0)
x_train, x_test, y_train, y_test = x[order[360:]], x[order[:360]], y[order[360:]], y[order[:360]]

model = keras.Sequential([
    keras.Input(shape=(64,)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(10),
])
model.compile(
    optimizer=keras.optimizers.Adam(0.01),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
model.fit(x_train, y_train, epochs=5, batch_size=64, verbose=2)
loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
print(f"test loss {loss:.3f}, test accuracy {accuracy:.3f}")
