"""Writes Examples and SequenceExamples serialized by TensorFlow, and what
TensorFlow's parsing ops return for them, beside this file:
  python3 ops/parsing/testdata/make_fixtures.py   (a Python with tensorflow)
Each fixture is a TFRecord file of serialized protos plus .npy outputs; the
C++ test (ops/parsing/parsing_ops_test.cc) parses the same records."""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array):
    np.save(os.path.join(HERE, name + ".npy"), np.ascontiguousarray(array))


def feature(v):
    if isinstance(v, bytes) or (isinstance(v, list) and v and isinstance(v[0], bytes)):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=v if isinstance(v, list) else [v]))
    if isinstance(v, list) and v and isinstance(v[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=v))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=v if isinstance(v, list) else [v]))


examples = []
for i in range(4):
    f = {
        "image": feature([float(i + k / 4) for k in range(6)]),
        "label": feature(i * 3),
        "tags": feature([b"t%d" % k for k in range(i)]) if i else tf.train.Feature(
            bytes_list=tf.train.BytesList()),
    }
    if i != 2:
        f["weight"] = feature([0.5 * i])
    examples.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
with tf.io.TFRecordWriter(os.path.join(HERE, "examples.tfrecord")) as w:
    for e in examples:
        w.write(e)

out = tf.io.parse_example(examples, {
    "image": tf.io.FixedLenFeature([2, 3], tf.float32),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "weight": tf.io.FixedLenFeature([], tf.float32, default_value=-1.0),
    "tags": tf.io.VarLenFeature(tf.string),
})
save("ex_image", out["image"].numpy())
save("ex_label", out["label"].numpy())
save("ex_weight", out["weight"].numpy())
save("ex_tags_indices", out["tags"].indices.numpy())
# tags values are t0.. t{i-1} per example, checked in the C++ test
save("ex_tags_shape", out["tags"].dense_shape.numpy())

rag = tf.io.parse_example(examples, {"tags": tf.io.RaggedFeature(tf.string)})["tags"]
save("ex_tags_splits", rag.row_splits.numpy())

seqs = []
for i in range(2):
    fl = {"frames": tf.train.FeatureList(feature=[feature([float(t), float(t * i)])
                                                  for t in range(i + 2)])}
    ctx = tf.train.Features(feature={"id": feature(100 + i)})
    seqs.append(tf.train.SequenceExample(
        context=ctx, feature_lists=tf.train.FeatureLists(feature_list=fl)).SerializeToString())
with tf.io.TFRecordWriter(os.path.join(HERE, "sequence_examples.tfrecord")) as w:
    for s in seqs:
        w.write(s)
c, fl, lengths = tf.io.parse_sequence_example(
    seqs, context_features={"id": tf.io.FixedLenFeature([], tf.int64)},
    sequence_features={"frames": tf.io.FixedLenSequenceFeature([2], tf.float32)})
save("seq_id", c["id"].numpy())
save("seq_frames", fl["frames"].numpy())
save("seq_lengths", lengths["frames"].numpy())
