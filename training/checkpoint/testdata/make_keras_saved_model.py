"""Writes keras_lstm/: a Keras 3 model saved by tf.saved_model.save, with
TensorFlow's outputs for a batch of inputs (keras_lstm.expected.txt).

Run with TensorFlow's CPU wheel (2.21) from training/checkpoint/testdata:
    python3 make_keras_saved_model.py .
The model (Embedding, LSTM, BatchNormalization, Dense with softmax) is
trained five epochs first, so that batch norm's moving statistics are not
their initial values. Its serving function captures handles that the
MetaGraph's saver does not restore; only the object graph binds them.
"""
import os
import sys

import numpy as np
import tensorflow as tf
import keras

OUT = sys.argv[1]
keras.utils.set_random_seed(2)
ids = keras.Input((7,), dtype="int32", name="ids")
h = keras.layers.Embedding(50, 6)(ids)
h = keras.layers.LSTM(5)(h)
h = keras.layers.BatchNormalization()(h)
model = keras.Model(ids, keras.layers.Dense(3, activation="softmax")(h))
model.compile(keras.optimizers.SGD(0.5), "sparse_categorical_crossentropy")
x = np.random.RandomState(0).randint(0, 50, (32, 7)).astype(np.int32)
model.fit(x, np.arange(32) % 3, epochs=5, verbose=0)

tf.saved_model.save(model, os.path.join(OUT, "keras_lstm"))
batch = x[:4]
probs = model(batch, training=False).numpy()
with open(os.path.join(OUT, "keras_lstm.expected.txt"), "w") as f:
    f.write("input inputs %s\n" % " ".join(str(int(v)) for v in batch.ravel()))
    f.write("output output_0 %s\n" % " ".join(repr(float(v)) for v in probs.ravel()))
