#!/usr/bin/env python3
"""Compares the TensorBoard event files Sluice wrote with TensorFlow's, read
by TensorFlow and by TensorBoard itself (run under a Python that has both):

  python compare_events.py SLUICE_LOGDIR TF_LOGDIR

Each directory must hold one event file. Events are compared after dropping
wall times (and the writer name of the version event), sorted by step and
tags since a step's summary ops run in either order; PNG payloads are
compared as pixels (zlib builds may compress differently), everything else
byte for byte. TensorBoard's EventAccumulator must load both with the same
tags. Exits 1 printing the first differences.
"""
import glob
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator  # noqa: E402

PNG = b"\x89PNG"


def payload(b):
    if b.startswith(PNG):
        return {"png": tf.io.decode_png(b).numpy().tolist()}
    return {"bytes": b.hex()}


def tensor_value(t):
    if t.dtype == tf.string.as_datatype_enum:
        return {"dtype": "string", "shape": [d.size for d in t.tensor_shape.dim],
                "values": [payload(v) for v in t.string_val]}
    return {"dtype": t.dtype, "content": t.tensor_content.hex(),
            "shape": [d.size for d in t.tensor_shape.dim]}


def value(v):
    out = {"tag": v.tag, "node_name": v.node_name,
           "metadata": v.metadata.SerializeToString(deterministic=True).hex()}
    kind = v.WhichOneof("value")
    out["kind"] = kind
    if kind == "simple_value":
        out["simple_value"] = v.simple_value
    elif kind == "histo":
        h = v.histo
        out["histo"] = [h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit),
                        list(h.bucket)]
    elif kind == "image":
        i = v.image
        out["image"] = [i.height, i.width, i.colorspace, payload(i.encoded_image_string)]
    elif kind == "audio":
        a = v.audio
        out["audio"] = [a.sample_rate, a.num_channels, a.length_frames, a.content_type,
                        a.encoded_audio_string.hex()]
    elif kind == "tensor":
        out["tensor"] = tensor_value(v.tensor)
    return out


def events(logdir):
    files = glob.glob(os.path.join(logdir, "*tfevents*"))
    if len(files) != 1:
        sys.exit("%s: expected one event file, found %s" % (logdir, files))
    out = []
    for e in tf.compat.v1.train.summary_iterator(files[0]):
        what = e.WhichOneof("what")
        d = {"step": e.step, "what": what}
        if what == "file_version":
            d["file_version"] = e.file_version
        elif what == "graph_def":
            d["graph_def"] = e.graph_def.hex()
        elif what == "summary":
            d["values"] = [value(v) for v in e.summary.value]
        if e.step == 12 and what == "summary":  # the imported event keeps its own time
            d["wall_time"] = e.wall_time
        out.append(d)
    key = lambda d: (d["step"], d["what"], json.dumps(d.get("values", []), sort_keys=True))
    return files[0], sorted(out, key=key)


def tensorboard_tags(logdir):
    acc = event_accumulator.EventAccumulator(logdir, size_guidance={"tensors": 0, "images": 0})
    acc.Reload()
    return {k: sorted(v) if isinstance(v, list) else v for k, v in acc.Tags().items()}


def main():
    sluice_file, mine = events(sys.argv[1])
    tf_file, theirs = events(sys.argv[2])
    problems = []
    if len(mine) != len(theirs):
        problems.append("%d events from Sluice, %d from TensorFlow" % (len(mine), len(theirs)))
    for a, b in zip(mine, theirs):
        if a != b:
            problems.append("Sluice:     %s\nTensorFlow: %s" % (json.dumps(a)[:1500],
                                                              json.dumps(b)[:1500]))
    tags_mine, tags_theirs = tensorboard_tags(sys.argv[1]), tensorboard_tags(sys.argv[2])
    if tags_mine != tags_theirs:
        problems.append("TensorBoard tags differ:\n  Sluice %s\n  TensorFlow %s" %
                        (tags_mine, tags_theirs))
    if problems:
        print("\n".join(problems[:6]))
        sys.exit(1)
    print("%d events alike (%s vs %s); TensorBoard tags %s" %
          (len(mine), os.path.basename(sluice_file), os.path.basename(tf_file),
           {k: len(v) for k, v in tags_mine.items() if isinstance(v, list)}))


if __name__ == "__main__":
    main()
