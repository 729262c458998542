"""Writes module_methods/: a tf.Module saved by tf.saved_model.save whose
methods are tf.functions, most of them not signatures, for
saved_function_test (calling functions by object path).

Run with TensorFlow's CPU wheel (2.21) from training/checkpoint/testdata:
    python3 make_module_saved_model.py .

  enc.embed(x: float[?,3]) = x . w, and adds 1 to enc.steps (saved as 3);
      w = [[-1, -0.5], [0, 0.5], [1, 1.5]]
  f(x, b) = {"y": enc.embed(x) * scale + b, "n": enc.steps}  (scale = 2;
      also the signature serving_default)
  h(x: float[?,3]) = (enc.embed(x) + bias, offset * scale): bias = [0.25, -0.75]
      is a variable only h captures, offset = [1, -1] a captured constant
  g(x, training): traced twice for x: float[2], training True (2 x) and
      False (x)
  lookup(keys: string[?]): a static hash table's lookup (captures a resource)
"""
import os
import sys

import numpy as np
import tensorflow as tf

OUT = sys.argv[1]


class Encoder(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) * 0.5 - 1.0, name="w")
        self.steps = tf.Variable(0, dtype=tf.int64, name="steps")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def embed(self, x):
        self.steps.assign_add(1)
        return tf.matmul(x, self.w)


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.enc = Encoder()
        self.scale = tf.Variable(2.0, name="scale")
        self.bias = tf.Variable([0.25, -0.75], name="bias")
        self.offset = tf.constant([1.0, -1.0])
        self.table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64)), -1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                  tf.TensorSpec([], tf.float32)])
    def f(self, x, b):
        return {"y": self.enc.embed(x) * self.scale + b, "n": self.enc.steps.read_value()}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def h(self, x):
        return self.enc.embed(x) + self.bias, self.offset * self.scale

    @tf.function
    def g(self, x, training=False):
        return x * 2.0 if training else x

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def lookup(self, keys):
        return self.table.lookup(keys)


m = Model()
x = tf.constant([[1.0, 2.0, 3.0]])
for _ in range(3):
    m.enc.embed(x)
m.g(tf.constant([1.0, 2.0]), training=True)
m.g(tf.constant([1.0, 2.0]))
m.lookup(tf.constant(["a"]))
tf.saved_model.save(m, os.path.join(OUT, "module_methods"), signatures={"serving_default": m.f})
loaded = tf.saved_model.load(os.path.join(OUT, "module_methods"))
print("h:", [t.numpy().tolist() for t in loaded.h(x)])
print("f:", {k: v.numpy().tolist() for k, v in loaded.f(x, tf.constant(1.0)).items()})
