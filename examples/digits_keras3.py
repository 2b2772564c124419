"""The digits classifier written with ``import keras`` (Keras 3 style), again with no distribution code.

Under MultiWorkerMirrored and ParameterServer strategies Keras 3 cannot train (keras-team/keras#20585), so
tfcloud's launcher serves ``import keras`` from tf-keras there; the script does not change.

    tfcloud submit examples/digits_keras3.py --local --worker-count 1
"""

import keras
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

keras.utils.set_random_seed(42)

digits = load_digits()
x = (digits.data / 16.0).astype("float32")
y = digits.target.astype("int64")
x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, random_state=0)

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
