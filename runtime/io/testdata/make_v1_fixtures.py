"""Writes TensorFlow V1 checkpoint fixtures (table-format files of
SavedTensorSlices) beside this file with TensorFlow 2.x's CPU wheel, through
tf.compat.v1.train.Saver(write_version=V1) as TensorFlow 1 programs wrote
them. Run with a Python that has tensorflow:
  python3 runtime/io/testdata/make_v1_fixtures.py
runtime/io/tensor_slice_file_test.cc and ops/io tests read them."""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
v1 = tf.compat.v1
v1.disable_eager_execution()
V1 = tf.compat.v1.train.SaverDef.V1


def arange_rows(shape, dtype=None, partition_info=None):
    """The rows of np.arange(rows * cols).reshape(rows, cols) a partition holds."""
    first = partition_info.var_offset[0] if partition_info is not None else 0
    n = shape[0] * shape[1]
    return tf.constant(np.arange(first * shape[1], first * shape[1] + n,
                                 dtype=np.float32).reshape(shape))


def variables():
    var = lambda name, value, dtype=None: v1.get_variable(
        name, initializer=tf.constant(value, dtype=dtype))
    var("a", [[1.5, 2.5, 3.5], [4., 5., 6.]])
    var("scope/b", [7, -8, 9], tf.int64)
    var("s", [b"hello", b"", b"world!"])
    var("d", 3.25, tf.float64)
    var("h", [0.5, -2.0], tf.float16)
    var("flags", [True, False, True], tf.bool)
    var("i8", [-128, 0, 127], tf.int8)
    var("u8", [0, 200, 255], tf.uint8)
    var("i16", [-30000, 5], tf.int16)
    var("u16", [65535, 1], tf.uint16)
    var("i32", [[1, -2], [3, 4]], tf.int32)
    var("c", [1 + 2j, -3.5j], tf.complex64)
    # A partitioned variable: 2 row slices of one [5, 3] tensor.
    v1.get_variable("emb", shape=[5, 3], dtype=tf.float32,
                    initializer=arange_rows,
                    partitioner=v1.fixed_size_partitioner(2))


with tf.Graph().as_default():
    variables()
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        v1.train.Saver(write_version=V1).save(
            sess, os.path.join(HERE, "tf_v1_model.ckpt"), write_meta_graph=False,
            write_state=False)

# Sharded: variables on two CPU devices, one file per device.
with tf.Graph().as_default():
    with tf.device("/cpu:0"):
        v1.get_variable("w", initializer=tf.constant([[1., 2.], [3., 4.]]))
    with tf.device("/cpu:1"):
        v1.get_variable("bias", initializer=tf.constant([0.25, -0.5]))
        v1.get_variable("part", shape=[4, 2], dtype=tf.float32,
                        initializer=arange_rows,
                        partitioner=v1.fixed_size_partitioner(2))
    config = v1.ConfigProto(device_count={"CPU": 2})
    with v1.Session(config=config) as sess:
        sess.run(v1.global_variables_initializer())
        v1.train.Saver(write_version=V1, sharded=True).save(
            sess, os.path.join(HERE, "tf_v1_sharded.ckpt"), write_meta_graph=False,
            write_state=False)
print(sorted(f for f in os.listdir(HERE) if f.startswith("tf_v1")))
