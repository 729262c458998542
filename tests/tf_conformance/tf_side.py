#!/usr/bin/env python3
"""TensorFlow's side of the conformance suite: run under a Python that has
TensorFlow (tf.compat.v1), it writes into OUT_DIR the inputs TF users have
(TFRecord files of tf.train.Example, JPEG and PNG images, GraphDefs of input
pipelines and of graphs that call functions) and what TensorFlow computes
from them, as .npy files, with a manifest (cases.json) that
conformance_test.py checks Sluice against.

  python tf_side.py OUT_DIR [SLUICE_RECORDS_DIR]

With SLUICE_RECORDS_DIR (TFRecord files Sluice wrote), it also reads those
with TensorFlow and writes what it parsed, so the suite checks the other
direction.
"""
import json
import os
import subprocess
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1
v1.disable_eager_execution()

OUT = sys.argv[1]
CASES = []


def save_npy(path, value):
    """A tensor as .npy; strings as fixed-width bytes ("S"): an object array
    needs pickle, and a NumPy 2 pickle does not load in Debian's NumPy."""
    a = np.asarray(value)
    np.save(path, a.astype("S") if a.dtype == object else a)


def save_case(name, graph, fetches, values, targets=None, steps=0, feeds=None, rtol=1e-5, atol=1e-6,
              init=None, meta_graph=None, restore=None, runner_args=None, events=None):
    """One runner invocation: after `steps` runs of `targets`, fetching
    `fetches` gives `values` (TF's)."""
    path = os.path.join(OUT, name + ".pb")
    with open(path, "wb") as f:
        f.write(graph.as_graph_def().SerializeToString())
    outs = []
    for i, v in enumerate(values):
        p = os.path.join(OUT, "%s.expected.%d.npy" % (name, i))
        save_npy(p, v)
        outs.append(p)
    feed_files = {}
    for k, v in (feeds or {}).items():
        p = os.path.join(OUT, "%s.feed.%s.npy" % (name, k.replace(":", "_").replace("/", "_")))
        save_npy(p, v)
        feed_files[k] = p
    CASES.append(dict(name=name, graph=path, fetches=fetches, expected=outs,
                      targets=targets or [], steps=steps, feeds=feed_files, rtol=rtol, atol=atol,
                      init=init or "", meta_graph=meta_graph or "", restore=restore or "",
                      runner_args=runner_args or [], events=events or {}))


def tname(t):
    return t.name[:-2] if t.name.endswith(":0") else t.name


def example(i):
    img = ((np.arange(12, dtype=np.int64) * 7 + i * 13) % 256).astype(np.uint8)
    feats = {
        "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[img.tobytes()])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
        "weight": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5 * i, 1.0 - i])),
    }
    if i % 2 == 0:
        feats["tags"] = tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 4 + 1))))
    return tf.train.Example(features=tf.train.Features(feature=feats))


def write_records():
    paths = {}
    for comp in ["", "GZIP", "ZLIB"]:
        path = os.path.join(OUT, "examples%s.tfrecord" % ("." + comp.lower() if comp else ""))
        with tf.io.TFRecordWriter(path, options=comp or None) as w:
            for i in range(10):
                w.write(example(i).SerializeToString())
        paths[comp] = path
    return paths


def parse_fn(serialized):
    f = v1.parse_single_example(serialized, {
        "image_raw": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
        "weight": tf.io.FixedLenFeature([2], tf.float32),
    })
    image = tf.cast(tf.io.decode_raw(f["image_raw"], tf.uint8), tf.float32) / 255.0
    return tf.reshape(image, [3, 4]), f["label"], f["weight"]


def pipeline_cases(paths):
    for comp, path in paths.items():
        g = tf.Graph()
        with g.as_default():
            ds = tf.data.TFRecordDataset([path], compression_type=comp)
            ds = ds.map(parse_fn).batch(4)
            it = v1.data.make_one_shot_iterator(ds)
            nxt = it.get_next()
            with v1.Session() as s:
                s.run(nxt)
                second = s.run(nxt)
        name = "pipeline_%s" % (comp.lower() or "plain")
        save_case(name, g, [t.name for t in nxt], second, targets=[nxt[0].op.name], steps=1)

    # Filter, skip, take, repeat, padded batch, zip and a range.
    g = tf.Graph()
    with g.as_default():
        r = tf.data.Dataset.range(20).filter(lambda x: x % 3 != 0).skip(2).take(9).repeat(2)
        z = tf.data.Dataset.zip((r, r.map(lambda x: x * x)))
        z = z.batch(5, drop_remainder=True)
        it = v1.data.make_one_shot_iterator(z)
        nxt = it.get_next()
        with v1.Session() as s:
            vals = [s.run(nxt) for _ in range(3)]
    save_case("pipeline_range_ops", g, [t.name for t in nxt], vals[2], targets=[nxt[0].op.name], steps=2)

    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.range(1, 6).map(lambda x: tf.fill([x], x))
        ds = ds.padded_batch(2, padded_shapes=[None], padding_values=np.int64(-1))
        nxt = v1.data.make_one_shot_iterator(ds).get_next()
        with v1.Session() as s:
            s.run(nxt)
            second = s.run(nxt)
    save_case("pipeline_padded_batch", g, [nxt.name], [second], targets=[nxt.op.name], steps=1)

    # Interleave over two files' records, and flat_map.
    g = tf.Graph()
    with g.as_default():
        files = tf.data.Dataset.from_tensor_slices([paths[""], paths[""]])
        ds = files.interleave(lambda f: tf.data.TFRecordDataset(f), cycle_length=2, block_length=3)
        ds = ds.map(parse_fn).map(lambda img, label, w: label).batch(6)
        nxt = v1.data.make_one_shot_iterator(ds).get_next()
        with v1.Session() as s:
            first = s.run(nxt)
    save_case("pipeline_interleave", g, [nxt.name], [first])


def parse_cases():
    serialized = [example(i).SerializeToString() for i in range(5)]
    g = tf.Graph()
    with g.as_default():
        parsed = v1.parse_example(tf.constant(serialized), {
            "label": tf.io.FixedLenFeature([], tf.int64),
            "weight": tf.io.FixedLenFeature([2], tf.float32),
            "missing": tf.io.FixedLenFeature([3], tf.float32, default_value=[1.0, 2.0, 3.0]),
            "tags": tf.io.VarLenFeature(tf.int64),
        })
        fetch = [parsed["label"], parsed["weight"], parsed["missing"],
                 parsed["tags"].indices, parsed["tags"].values, parsed["tags"].dense_shape]
        with v1.Session() as s:
            vals = s.run(fetch)
    save_case("parse_example", g, [t.name for t in fetch], vals)

    g = tf.Graph()
    with g.as_default():
        recs = tf.constant(["1,2.5,a", "4,,b", '7,8.25,"c,d"'])
        cols = tf.io.decode_csv(recs, record_defaults=[[0], [-1.0], ["z"]])
        with v1.Session() as s:
            vals = s.run(cols)
    save_case("decode_csv", g, [t.name for t in cols], [np.array(v) for v in vals])

    g = tf.Graph()
    with g.as_default():
        raw = tf.constant([np.arange(8, dtype=np.int16).tobytes(), (np.arange(8, dtype=np.int16) * -3).tobytes()])
        d = tf.io.decode_raw(raw, tf.int16)
        with v1.Session() as s:
            vals = s.run([d])
    save_case("decode_raw", g, [d.name], vals)


def image_cases():
    rng = np.random.RandomState(3)
    img = (rng.rand(9, 13, 3) * 255).astype(np.uint8)
    g = tf.Graph()
    with g.as_default():
        png = tf.io.encode_png(tf.constant(img))
        jpg = tf.io.encode_jpeg(tf.constant(img), quality=90)
        with v1.Session() as s:
            png_bytes, jpg_bytes = s.run([png, jpg])
    g = tf.Graph()
    with g.as_default():
        dp = tf.io.decode_png(tf.constant(png_bytes), channels=3)
        dj = tf.io.decode_jpeg(tf.constant(jpg_bytes), channels=3)
        dg = tf.io.decode_jpeg(tf.constant(jpg_bytes), channels=1)
        di = tf.io.decode_image(tf.constant(png_bytes), channels=3, expand_animations=False)
        x = tf.cast(dp, tf.float32)[None]
        rs = v1.image.resize_bilinear(x, [5, 7])
        rsa = v1.image.resize_bilinear(x, [17, 4], align_corners=True)
        rsh = v1.image.resize_bilinear(x, [6, 20], half_pixel_centers=True)
        boxes = tf.constant([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0]])
        cr = tf.image.crop_and_resize(x, boxes, tf.constant([0, 0]), [4, 5])
        ac = tf.image.adjust_contrast(x, 1.7)
        fetch = [dp, dj, dg, di, rs, rsa, rsh, cr, ac]
        with v1.Session() as s:
            vals = s.run(fetch)
    save_case("images", g, [t.name for t in fetch], vals, rtol=1e-4, atol=1e-3)


def image_file_cases():
    """An ImageNet-style input step over JPEG files TensorFlow wrote:
    MatchingFiles, ReadFile, ExtractJpegShape, a stateless distorted box,
    DecodeAndCropJpeg and a resize per file; seeded stateful V1 and V2 box
    draws; EncodeJpeg's bytes (base64) at several settings;
    serialize/parse_tensor; tf.strings.format."""
    d = os.path.join(OUT, "jpegs")
    os.makedirs(d, exist_ok=True)
    rng = np.random.RandomState(11)
    sizes = [(37, 53), (64, 48), (50, 50)]
    with tf.Graph().as_default(), v1.Session() as s:
        for i, (h, w) in enumerate(sizes):
            yy, xx = np.mgrid[0:h, 0:w]
            img = np.stack([xx * 4, yy * 3, (xx + yy) * 2], -1) % 256
            img = np.clip(img + rng.randint(-6, 7, img.shape), 0, 255).astype(np.uint8)
            data = s.run(tf.io.encode_jpeg(img, quality=95 - 10 * i, chroma_downsampling=i != 2))
            with open(os.path.join(d, "img%d.jpg" % i), "wb") as f:
                f.write(data)
    g = tf.Graph()
    with g.as_default():
        files = tf.io.matching_files(os.path.join(d, "*.jpg"))
        boxes = tf.constant([[[0.1, 0.1, 0.9, 0.8]]])
        fetch = [files]
        crops = []
        for i in range(3):
            data = tf.io.read_file(files[i])
            shape = tf.image.extract_jpeg_shape(data)
            begin, size, bbox = tf.image.stateless_sample_distorted_bounding_box(
                shape, boxes, seed=[i, 7], min_object_covered=0.25, area_range=(0.1, 1.0))
            oy, ox, _ = tf.unstack(begin)
            th, tw, _ = tf.unstack(size)
            crop = tf.image.decode_and_crop_jpeg(data, tf.stack([oy, ox, th, tw]), channels=3)
            crops.append(crop)
            fetch += [shape, begin, size, bbox, crop,
                      tf.image.resize(crop, [24, 24]),
                      tf.image.decode_and_crop_jpeg(data, [3, 5, 20, 17], fancy_upscaling=False),
                      tf.image.decode_and_crop_jpeg(data, [2, 9, 10, 12], ratio=2)]
        size0 = tf.image.extract_jpeg_shape(tf.io.read_file(files[0]), output_type=tf.int64)
        v2 = tf.raw_ops.SampleDistortedBoundingBoxV2(
            image_size=size0, bounding_boxes=boxes, min_object_covered=tf.constant(0.3), seed=5,
            seed2=9, area_range=[0.2, 0.9], max_attempts=20)
        v1op = tf.raw_ops.SampleDistortedBoundingBox(
            image_size=tf.cast(size0, tf.int32), bounding_boxes=boxes, seed=3, seed2=4,
            min_object_covered=0.5)
        fetch += list(v2) + list(v1op)
        b64 = lambda t: tf.io.encode_base64(t)
        fetch += [b64(tf.io.encode_jpeg(crops[0])),
                  b64(tf.io.encode_jpeg(crops[1], quality=50, progressive=True)),
                  b64(tf.io.encode_jpeg(crops[2], optimize_size=True, chroma_downsampling=False,
                                        density_unit="cm", x_density=72, y_density=96,
                                        xmp_metadata="<x:xmpmeta/>")),
                  b64(tf.io.encode_jpeg(tf.image.rgb_to_grayscale(crops[0]), format="grayscale")),
                  b64(tf.raw_ops.EncodeJpegVariableQuality(images=crops[1], quality=30))]
        # / 4: TensorFlow's grappler turns a division by a constant into a
        # multiplication by its reciprocal (1 ulp off for 3); Sluice divides.
        cropf = tf.cast(crops[0], tf.float32) / 4.0
        fetch += [b64(tf.io.serialize_tensor(cropf)),
                  b64(tf.io.serialize_tensor(files)),
                  tf.io.parse_tensor(tf.io.serialize_tensor(cropf), tf.float32),
                  tf.strings.format("files {} first crop {}", [files, cropf], summarize=2),
                  tf.strings.format("{} {} {}", [tf.constant(True), tf.constant(1.0 / 3, tf.float64),
                                                 tf.reshape(tf.range(30), [2, 3, 5])])]
        with v1.Session() as s:
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"MatchingFiles", "ReadFile", "ExtractJpegShape", "DecodeAndCropJpeg",
            "StatelessSampleDistortedBoundingBox", "SampleDistortedBoundingBoxV2",
            "SampleDistortedBoundingBox", "EncodeJpeg", "EncodeJpegVariableQuality",
            "SerializeTensor", "ParseTensor", "StringFormat"} <= ops, sorted(ops)
    save_case("image_files", g, [t.name for t in fetch], vals)


def summary_cases():
    """TensorBoard summaries as TF2 code writes them in a graph: a file
    writer resource, tf.summary.scalar/histogram/image/text/audio (their If
    and While functions, EncodePng on a batch, EncodeWav), the raw Write*
    ops (a NaN pixel in bad_color, a GraphDef, an imported Event), and TF1's
    summary ops merged into WriteRawProtoSummary. The graph writes into
    summaries.sluice; TensorFlow ran it with the logdir fed to summaries.tf.
    conformance_test.py compares the two event files (compare_events.py)."""
    try:
        import tensorboard  # noqa: F401  (tf.summary.scalar and kin live in it)
    except ImportError:
        print("tf_side: TensorBoard is absent: the summaries case is left out", file=sys.stderr)
        return
    sluice_dir = os.path.join(OUT, "summaries.sluice")
    tf_dir = os.path.join(OUT, "summaries.tf")
    g = tf.Graph()
    with g.as_default():
        step = v1.train.get_or_create_global_step()
        writer = tf.summary.create_file_writer(sluice_dir, max_queue=3, filename_suffix=".v2")
        x = tf.constant(((np.arange(40) - 12) * 0.25).astype(np.float32).reshape(4, 10))
        loss = tf.reduce_mean(tf.square(x)) + tf.cast(step, tf.float32)
        imgs = tf.reshape(tf.linspace(-1.0, 1.0, 2 * 3 * 4 * 3), [2, 3, 4, 3])
        clips = tf.reshape(tf.sin(tf.linspace(0.0, 20.0, 2 * 50)), [2, 50, 1]) * 0.8
        nan_img = tf.constant(np.array([[[[0.2], [np.nan]], [[0.9], [0.0]]]], np.float32))
        old = v1.summary.merge([
            v1.summary.scalar("old_scalar", loss),
            v1.summary.histogram("old_hist", x),
            v1.summary.image("old_img", imgs, max_outputs=1),
            v1.summary.image("old_u8", tf.cast((imgs + 1.0) * 100.0, tf.uint8), max_outputs=2),
            v1.summary.audio("old_audio", clips, 8000.0, max_outputs=2),
            v1.summary.tensor_summary("old_tensor", x[0]),
            tf.raw_ops.TensorSummary(tensor=tf.constant(["a", "bc"]), name="old_tensor_v1"),
        ])
        graph_bytes = tf.constant(tf.Graph().as_graph_def().SerializeToString())
        event = tf.compat.v1.Event(step=12, wall_time=3.5)
        event.summary.value.add(tag="imported", simple_value=1.25)
        with writer.as_default(step=step):
            tf.summary.scalar("loss", loss)
            tf.summary.histogram("x", x, buckets=7)
            tf.summary.image("imgs", imgs, max_outputs=2)
            tf.summary.text("note", tf.strings.format("step {}", step))
            tf.summary.audio("clips", clips, 8000, max_outputs=1)
            res = writer._resource
            s64 = tf.cast(step, tf.int64)
            raw = [tf.raw_ops.WriteScalarSummary(writer=res, step=s64, tag="raw_scalar", value=loss),
                   tf.raw_ops.WriteHistogramSummary(writer=res, step=s64, tag="raw_hist", values=x),
                   tf.raw_ops.WriteImageSummary(writer=res, step=s64, tag="raw_img", tensor=nan_img,
                                                bad_color=tf.constant([7], tf.uint8), max_images=1),
                   tf.raw_ops.WriteAudioSummary(writer=res, step=s64, tag="raw_audio", tensor=clips,
                                                sample_rate=16000.0, max_outputs=2),
                   tf.raw_ops.WriteRawProtoSummary(writer=res, step=s64, tensor=old),
                   tf.raw_ops.WriteGraphSummary(writer=res, step=s64, tensor=graph_bytes),
                   tf.raw_ops.ImportEvent(writer=res, event=tf.constant(event.SerializeToString()))]
        writes = v1.summary.all_v2_summary_ops() + raw
        with tf.control_dependencies(writes):
            train = tf.group(v1.assign_add(step, 1), name="train")
        init = tf.group(v1.global_variables_initializer(), writer.init(), name="init_all")
        flush = writer.flush()
        with tf.control_dependencies([flush]):
            done = tf.identity(step.read_value() if hasattr(step, "read_value") else step, name="done")
        wav = tf.audio.encode_wav(clips[0], 8000)
        # Named apart: fetch files are named by node and output index.
        decoded = [tf.audio.decode_wav(wav, name="wav_as_stored"),
                   tf.audio.decode_wav(wav, 2, 60, name="wav_wide"),
                   tf.audio.decode_wav(wav, 1, 20, name="wav_cut")]
        fetch = [done, wav] + [t for d in decoded for t in d]
    logdir = [op for op in g.get_operations() if op.type == "CreateSummaryFileWriter"][0].inputs[1]
    with v1.Session(graph=g) as s:
        feed = {logdir: tf_dir.encode()}
        s.run(init, feed)
        for _ in range(2):
            s.run(train, feed)
        vals = s.run(fetch, feed)
    save_case("summaries", g, [tname(t) for t in fetch], vals, targets=["train"], steps=2,
              init="init_all",
              events=dict(sluice=sluice_dir, tensorflow=tf_dir))


def generator_cases():
    """tf.random.Generator in a graph (RngReadAndSkip, Bitcast and the
    stateless V2 draws) and the older stateful draw ops on a state variable,
    chained so that each draw takes the counter after the previous one: two
    steps of draws, then the third step's values and both states."""
    g = tf.Graph()
    with g.as_default():
        gen = tf.random.Generator.from_seed(7)
        state = tf.Variable(np.array([5, -1, 11], np.int64), name="old_state")
        h = state.handle
        makers = [
            lambda: gen.uniform([3]),
            lambda: gen.normal([2, 2], dtype=tf.float64),
            lambda: gen.uniform([5], -3, 10, tf.int64),
            lambda: gen.truncated_normal([3], mean=1.0, stddev=2.0),
            lambda: gen.uniform_full_int([2], tf.int64),
            lambda: gen.uniform([3], minval=-2.0, maxval=4.0, dtype=tf.float64),
            lambda: tf.raw_ops.StatefulUniform(resource=h, algorithm=1, shape=[3]),
            lambda: tf.raw_ops.StatefulStandardNormalV2(resource=h, algorithm=1, shape=[2],
                                                        dtype=tf.float64),
            lambda: tf.raw_ops.StatefulTruncatedNormal(resource=h, algorithm=3, shape=[3]),
            lambda: tf.raw_ops.StatefulUniformInt(resource=h, algorithm=1, shape=[4], minval=-5,
                                                  maxval=5),
            lambda: tf.raw_ops.StatefulUniformFullInt(resource=h, algorithm=1, shape=[3],
                                                      dtype=tf.int32),
        ]
        draws = []
        for make in makers:
            with tf.control_dependencies(draws[-1:]):
                draws.append(make())
        with tf.control_dependencies(draws[-1:]):
            skip = tf.raw_ops.RngSkip(resource=h, algorithm=1, delta=3)
        with tf.control_dependencies([skip]):
            train = tf.group(name="train")
            states = [tf.identity(gen.state.read_value(), name="gen_state"),
                      tf.identity(state.read_value(), name="old_state_value")]
        init = tf.group(v1.global_variables_initializer(), name="init_all")
        with v1.Session() as s:
            s.run(init)
            for _ in range(2):
                s.run(train)
            fetch = draws + states
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"RngReadAndSkip", "Bitcast", "StatelessRandomUniformV2", "StatefulUniform",
            "RngSkip"} <= ops, sorted(ops)
    save_case("generator", g, [tname(t) for t in fetch], vals, targets=["train"], steps=2,
              init="init_all", rtol=0, atol=0)


def slice_assign_cases():
    """`v[...].assign(...)` on ref and resource variables (StridedSliceAssign,
    ResourceStridedSliceAssign: strides, a negative stride, a shrunk axis, a
    broadcast value), CountUpTo and ResourceCountUpTo, three steps; and
    TensorStridedSliceUpdate with its gradient."""
    g = tf.Graph()
    with g.as_default():
        v = v1.Variable(np.arange(12.0, dtype=np.float32).reshape(3, 4), use_resource=False,
                        name="ref_v")
        rv = v1.Variable(np.full((3, 4), 0.5, np.float32), use_resource=True, name="res_v")
        epochs = v1.Variable(0, dtype=tf.int64, use_resource=False, name="epochs")
        repochs = v1.Variable(3, dtype=tf.int32, use_resource=True, name="res_epochs")
        a = v[1:3, ::2].assign(v[1:3, ::2] * 2.0 + 1.0)
        with tf.control_dependencies([a]):
            b = v[0, ::-1].assign(tf.constant([4.0, 3.0, 2.0, 1.0]))
        c = rv[:, 1].assign(rv[:, 1] + tf.range(3, dtype=tf.float32))
        with tf.control_dependencies([c]):
            d = rv[::2, 2:].assign(tf.constant([[7.0]]) * tf.cast(epochs.read_value(), tf.float32))
        with tf.control_dependencies([b, d]):
            e = v1.count_up_to(epochs, 10)
            f = tf.raw_ops.ResourceCountUpTo(resource=repochs.handle, limit=10, T=tf.int32)
        train = tf.group(e, f, name="train")
        x = tf.constant(np.linspace(-1, 1, 20).reshape(4, 5), tf.float64)
        val = tf.constant([[0.5], [-2.0]], tf.float64)
        upd = tf.raw_ops.TensorStridedSliceUpdate(input=x, begin=[1, 0], end=[0, 5], strides=[2, 2],
                                                  value=val, end_mask=1)
        w = tf.constant(np.arange(20.0).reshape(4, 5) / 7.0)
        gx, gv = tf.gradients(tf.reduce_sum(upd * w), [x, val])
        init = tf.group(v1.global_variables_initializer(), name="init_all")
        fetch = [v, rv.read_value(), epochs, repochs.read_value(), upd, gx, gv]
        with v1.Session() as s:
            s.run(init)
            for _ in range(3):
                s.run(train)
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"StridedSliceAssign", "ResourceStridedSliceAssign", "CountUpTo", "ResourceCountUpTo",
            "TensorStridedSliceUpdate"} <= ops, sorted(ops)
    save_case("slice_assign", g, [tname(t) for t in fetch], vals, targets=["train"], steps=3,
              init="init_all")


def fake_quant_cases():
    """Quantization-aware training as tf.quantization's fake-quant ops run
    it: a dense layer whose weights are fake-quantized per channel (trained
    min/max) and whose activations by Args and Vars, three SGD steps; and
    the forward ops at several bit widths, narrow or not."""
    rng = np.random.RandomState(5)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(rng.uniform(-3, 3, (8, 5)).astype(np.float32))
        labels = tf.constant(rng.uniform(-1, 1, (8, 3)).astype(np.float32))
        w = v1.get_variable("w", initializer=rng.uniform(-1, 1, (5, 3)).astype(np.float32))
        wmin = v1.get_variable("wmin", initializer=np.array([-0.8, -0.5, -1.0], np.float32))
        wmax = v1.get_variable("wmax", initializer=np.array([0.9, 0.6, 1.1], np.float32))
        amin = v1.get_variable("amin", initializer=np.float32(-2.0))
        amax = v1.get_variable("amax", initializer=np.float32(2.5))
        qw = tf.quantization.fake_quant_with_min_max_vars_per_channel(w, wmin, wmax, num_bits=6)
        qx = tf.quantization.fake_quant_with_min_max_args(x, -2.5, 2.5, num_bits=8)
        h = tf.matmul(qx, qw)
        qh = tf.quantization.fake_quant_with_min_max_vars(h, amin, amax, narrow_range=True)
        loss = tf.reduce_mean(tf.square(qh - labels))
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        probe = tf.constant(rng.uniform(-4, 4, (6, 4)).astype(np.float32))
        forwards = [tf.quantization.fake_quant_with_min_max_args(probe, -3.0, 2.0, num_bits=b,
                                                                 narrow_range=n)
                    for b in (2, 5, 8) for n in (False, True)]
        forwards.append(tf.quantization.fake_quant_with_min_max_vars(probe, -0.3, 3.7, num_bits=4))
        forwards.append(tf.quantization.fake_quant_with_min_max_vars_per_channel(
            probe, [-1.0, -2.0, 0.0, -3.0], [1.0, 0.5, 2.0, 3.3], narrow_range=True))
        init = tf.group(v1.global_variables_initializer(), name="init_all")
        fetch = [loss] + [tf.identity(v) for v in (w, wmin, wmax, amin, amax)] + forwards
        with v1.Session() as s:
            s.run(init)
            for _ in range(3):
                s.run(train)
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"FakeQuantWithMinMaxVarsPerChannelGradient", "FakeQuantWithMinMaxArgs",
            "FakeQuantWithMinMaxVarsGradient"} <= ops, sorted(ops)
    save_case("fake_quant", g, [tname(t) for t in fetch], vals, targets=["train"], steps=3,
              init="init_all", rtol=1e-5, atol=1e-6)


def compat_op_cases():
    """Ops TF graphs carry beside the core ones: TF1 Reverse, Diag/DiagPart,
    Empty, UnravelIndex, the Inplace ops, NthElement, ApproximateEqual,
    Cross, accumulate_n, PopulationCount, CheckNumericsV2, the data format
    ops, BroadcastArgs and Bitcast, with the gradients TF defines."""
    rng = np.random.RandomState(9)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(rng.uniform(-2, 2, (3, 4)))
        a = tf.constant(rng.uniform(-1, 1, (2, 3)))
        b = tf.constant(rng.uniform(-1, 1, (2, 3)))
        d = tf.constant(rng.uniform(-1, 1, (2, 3)))
        rev = tf.raw_ops.Reverse(tensor=x, dims=[True, False])
        diag = tf.linalg.tensor_diag(d)
        part = tf.linalg.tensor_diag_part(diag)
        nth = tf.raw_ops.NthElement(input=x, n=2)
        nth_r = tf.raw_ops.NthElement(input=x, n=0, reverse=True)
        cross = tf.linalg.cross(a, b)
        acc = tf.raw_ops.AccumulateNV2(inputs=[a, b, d * 2.0], shape=[2, 3])
        loss = (tf.reduce_sum(rev * x) + tf.reduce_sum(tf.square(diag)) + tf.reduce_sum(nth * 3.0)
                + tf.reduce_sum(cross * a) + tf.reduce_sum(acc * b))
        grads = tf.gradients(loss, [x, a, b, d])
        ints = tf.constant([[7, -1, 256], [3, 0, 1023]], tf.int32)
        fetch = [rev, diag, part, nth, nth_r, cross, acc] + grads + [
            tf.raw_ops.Empty(shape=[2, 3], dtype=tf.float32, init=True),
            tf.unravel_index([1, 5, 11], [3, 4]),
            # TensorFlow's raw Inplace kernels write into x's own buffer: each
            # gets an x of its own (Sluice always writes a copy).
            tf.raw_ops.InplaceUpdate(x=x * 2.0, i=[2, 0], v=tf.ones((2, 4), tf.float64)),
            tf.raw_ops.InplaceAdd(x=x * 3.0, i=[1], v=tf.ones((1, 4), tf.float64)),
            tf.raw_ops.InplaceSub(x=x * 4.0, i=[0, 0], v=tf.ones((2, 4), tf.float64)),
            tf.raw_ops.ApproximateEqual(x=a, y=a + 1e-6, tolerance=1e-5),
            tf.raw_ops.ApproximateEqual(x=a, y=b),
            tf.raw_ops.PopulationCount(x=ints),
            tf.raw_ops.CheckNumericsV2(tensor=x, message="x"),
            tf.raw_ops.DataFormatDimMap(x=[0, 1, 2, 3, -1]),
            tf.raw_ops.DataFormatDimMap(x=[1, 4], src_format="NDHWC", dst_format="NCDHW"),
            tf.raw_ops.DataFormatVecPermute(x=[8, 32, 24, 3]),
            tf.raw_ops.DataFormatVecPermute(x=[[0, 0], [1, 2], [3, 4], [0, 0]]),
            tf.raw_ops.BroadcastArgs(s0=[2, 1, 4], s1=[3, 1]),
            tf.bitcast(tf.constant([1.0, -2.5], tf.float32), tf.uint8),
            tf.bitcast(tf.constant([-1, 5], tf.int64), tf.uint64),
        ]
        with v1.Session() as s:
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"Reverse", "Diag", "DiagPart", "NthElement", "Cross", "AccumulateNV2",
            "PopulationCount", "Bitcast"} <= ops, sorted(ops)
    save_case("compat_ops", g, [tname(t) for t in fetch], vals, rtol=1e-12, atol=1e-12)


def bmp_bytes(pixels, bpp, top_down=False):
    """An uncompressed BMP of `pixels` ([h, w] gray, [h, w, 3] BGR or
    [h, w, 4] BGRA as stored), rows padded to 4 bytes."""
    h, w = pixels.shape[:2]
    rows = [np.ascontiguousarray(pixels[i]).tobytes() for i in range(h)]
    pad = (-len(rows[0])) % 4
    body = b"".join(r + b"\0" * pad for r in (rows if top_down else rows[::-1]))
    height = -h if top_down else h
    header = (b"BM" + (54 + len(body)).to_bytes(4, "little") + b"\0" * 4 + (54).to_bytes(4, "little")
              + (40).to_bytes(4, "little") + w.to_bytes(4, "little", signed=True)
              + height.to_bytes(4, "little", signed=True) + (1).to_bytes(2, "little")
              + bpp.to_bytes(2, "little") + b"\0" * 24)
    return header + body


def bmp_cases():
    """BMP files (gray, BGR with row padding, top-down BGRA) through
    tf.io.decode_bmp and tf.io.decode_image, channels as stored or asked."""
    rng = np.random.RandomState(4)
    files = [bmp_bytes(rng.randint(0, 256, (3, 5)).astype(np.uint8), 8),
             bmp_bytes(rng.randint(0, 256, (4, 3, 3)).astype(np.uint8), 24),
             bmp_bytes(rng.randint(0, 256, (2, 3, 4)).astype(np.uint8), 32, top_down=True)]
    g = tf.Graph()
    with g.as_default():
        fetch = []
        for i, data in enumerate(files):
            c = tf.constant(data)
            fetch += [tf.io.decode_bmp(c), tf.io.decode_bmp(c, channels=4)]
            # TensorFlow's float path sizes its buffer by the signed height:
            # a top-down file (negative height) crashes it, so not for those.
            if i < 2:
                fetch.append(tf.io.decode_image(c, channels=3, dtype=tf.float32,
                                                expand_animations=False))
        with v1.Session() as s:
            vals = s.run(fetch)
    save_case("bmp", g, [tname(t) for t in fetch], vals)


def max_pool_second_order_cases():
    """Second derivatives through max pooling (a gradient penalty's):
    MaxPoolGrad's gradient is MaxPoolGradGrad, and MaxPoolGradGrad's is
    MaxPoolGrad; both raw ops on known values too."""
    rng = np.random.RandomState(12)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(rng.permutation(2 * 5 * 6 * 3).reshape(2, 5, 6, 3).astype(np.float64) / 7)
        w = tf.constant(rng.uniform(-1, 1, (2, 3, 3, 3)))
        fetch = []
        for padding in ("SAME", "VALID"):
            y = tf.nn.max_pool2d(x, 2, 2, padding) if padding == "VALID" else \
                tf.nn.max_pool2d(x, [2, 3], [2, 2], padding)
            wy = tf.constant(rng.uniform(-1, 1, y.shape.as_list()))
            gx = tf.gradients(tf.reduce_sum(y * wy), x)[0]
            penalty = tf.reduce_sum(tf.square(gx)) * 0.5
            fetch += [tf.gradients(penalty, wy)[0]]
            ksize = [1, 2, 2, 1] if padding == "VALID" else [1, 2, 3, 1]
            gg = tf.raw_ops.MaxPoolGradGrad(orig_input=x, orig_output=y, grad=x * 3.0, ksize=ksize,
                                            strides=[1, 2, 2, 1], padding=padding)
            fetch += [gg, tf.gradients(tf.reduce_sum(gg * wy), x)[0]]
        # The V2 forms (ksize and strides as inputs).
        y2 = tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        wy2 = tf.constant(rng.uniform(-1, 1, y2.shape.as_list()))
        gx2 = tf.gradients(tf.reduce_sum(y2 * wy2), x)[0]
        fetch += [tf.gradients(tf.reduce_sum(tf.square(gx2)), wy2)[0],
                  tf.raw_ops.MaxPoolGradGradV2(orig_input=x, orig_output=y2, grad=x * 2.0,
                                               ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                                               padding="SAME")]
        with v1.Session() as s:
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"MaxPoolGradGrad", "MaxPoolGrad", "MaxPoolGradGradV2"} <= ops, sorted(ops)
    save_case("max_pool_second_order", g, [tname(t) for t in fetch], vals, rtol=1e-12, atol=1e-12)


def patch_cases():
    """tf.image.extract_patches (VALID and SAME, strides and rates) and its
    gradient."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(12)
        x = tf.constant(rng.randn(2, 7, 8, 3).astype(np.float32))
        fetch = []
        loss = 0.0
        for sizes, strides, rates, padding in [([1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 2, 1], "SAME"),
                                               ([1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
                                               ([1, 2, 3, 1], [1, 1, 2, 1], [1, 2, 1, 1], "VALID")]:
            p = tf.image.extract_patches(x, sizes, strides, rates, padding)
            w = tf.constant(rng.randn(*p.shape.as_list()).astype(np.float32))
            loss += tf.reduce_sum(p * p * w)
            fetch.append(p)
        fetch += tf.gradients(loss, [x])
        with v1.Session() as s:
            vals = s.run(fetch)
    save_case("extract_patches", g, [t.name for t in fetch], vals, rtol=1e-5, atol=1e-5)


def max_pool_cases():
    """tf.nn.max_pool_with_argmax (with and without the batch in the index,
    int64 and, forward only, int32) and MaxPoolV2 (window sizes as tensors), with their
    gradients."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(13)
        x = tf.constant(rng.randn(2, 7, 6, 3).astype(np.float32))
        p1, a1 = tf.nn.max_pool_with_argmax(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")
        p2, a2 = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 2, 1], "VALID",
                                            include_batch_in_index=True)
        # int32 indices: forward only (TensorFlow's CPU gradient takes int64).
        _, a4 = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME",
                                           output_dtype=tf.int32)
        p3 = tf.raw_ops.MaxPoolV2(input=x, ksize=tf.constant([1, 2, 3, 1]),
                                  strides=tf.constant([1, 2, 1, 1]), padding="SAME")
        w = [tf.constant(rng.randn(*t.shape.as_list()).astype(np.float32)) for t in (p1, p2, p3)]
        loss = tf.reduce_sum(p1 * w[0]) + tf.reduce_sum(p2 * p2 * w[1]) + tf.reduce_sum(p3 * w[2])
        fetch = [p1, a1, p2, a2, p3, a4] + tf.gradients(loss, [x])
        with v1.Session() as s:
            vals = s.run(fetch)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"MaxPoolWithArgmax", "MaxPoolGradWithArgmax", "MaxPoolV2",
            "MaxPoolGradV2"} <= ops, sorted(ops)
    save_case("max_pool_argmax", g, [t.name for t in fetch], vals)


def function_cases():
    @tf.function
    def affine(x, w):
        return tf.matmul(x, w) + 1.0, tf.reduce_sum(x)

    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [2, 3], name="x")
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
        y, s = affine(x, w)
        loss = tf.reduce_sum(y * y) + s
        gx = tf.gradients(loss, x)[0]
        feed = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32)
        with v1.Session() as sess:
            vals = sess.run([y, s, gx], {x: feed})
    save_case("function_call", g, [y.name, s.name, gx.name], vals, feeds={"x": feed})


def symbolic_gradient_cases():
    """A TF1 Defun without a gradient function: tf.gradients differentiates
    the call with a SymbolicGradient node that names the function."""
    from tensorflow.python.framework import function as tf1_function

    @tf1_function.Defun(tf.float32, tf.float32)
    def layer(x, w):
        return tf.tanh(tf.matmul(x, w)), tf.reduce_sum(x * x)

    g = tf.Graph()
    rng = np.random.RandomState(4)
    x_val = rng.randn(3, 4).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [3, 4], name="x")
        w = tf.constant(rng.randn(4, 2).astype(np.float32))
        y, s = layer(x, w)
        loss = tf.reduce_sum(y * tf.constant([[1.0, -2.0]])) + 0.5 * s
        gx, gw = tf.gradients(loss, [x, w])
        with v1.Session() as sess:
            vals = sess.run([y, s, gx, gw], {x: x_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert "SymbolicGradient" in ops, sorted(ops)
    save_case("symbolic_gradient", g, [y.name, s.name, gx.name, gw.name], vals,
              feeds={"x": x_val}, rtol=1e-5, atol=1e-5)


def text_cases():
    """tf.strings on lines of text, as a text input pipeline cleans them:
    lower, strip, regex_replace, length, substr, to_number, reduce_join,
    base64."""
    g = tf.Graph()
    lines_val = np.array([b"  Hello, World!  ", b"Don't PANIC: 42", b"\xc3\x89t\xc3\xa9 -3.5e2",
                          b"a.b.c"], dtype=object)
    with g.as_default():
        lines = v1.placeholder(tf.string, [4], name="lines")
        clean = tf.strings.regex_replace(tf.strings.lower(tf.strings.strip(lines)),
                                         r"[[:punct:]]", "")
        # A pattern tensor (not a Python string) makes a RegexReplace.
        first = tf.strings.regex_replace(lines, tf.constant(r"(\w+)"), r"<\1>",
                                         replace_global=False)
        grid = tf.reshape(lines, [2, 2])
        fetches = [
            clean,
            first,
            tf.strings.upper(lines),
            tf.strings.length(lines),
            tf.strings.length(lines, unit="UTF8_CHAR"),
            tf.strings.substr(lines, [2, -4, 1, 0], [5, -1, 3, 100]),
            tf.strings.substr(lines, 1, 4, unit="UTF8_CHAR"),
            tf.strings.substr(grid, [0, 3], [2, 2]),
            tf.strings.to_number(tf.constant(["1.5", " -3.5e2 ", "inf", "0x1p3"])),
            tf.strings.to_number(tf.constant(["42", "-7", " 9 "]), tf.int64),
            tf.strings.reduce_join(grid, separator="|"),
            tf.strings.reduce_join(grid, axis=0, keepdims=True, separator="+"),
            tf.strings.reduce_join(grid, axis=-1),
            tf.io.encode_base64(lines),
            tf.io.encode_base64(lines, pad=True),
            tf.io.decode_base64(tf.io.encode_base64(lines, pad=True)),
        ]
        with v1.Session() as sess:
            vals = sess.run(fetches, {lines: lines_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"StaticRegexReplace", "RegexReplace", "StringLower", "StringUpper", "StringStrip",
            "StringLength", "Substr", "StringToNumber", "ReduceJoin", "EncodeBase64",
            "DecodeBase64"} <= ops, sorted(ops)
    save_case("text", g, [t.name for t in fetches], vals, feeds={"lines": lines_val})


def segment_reduction_cases():
    """tf.math.segment_max/min/mean/prod and unsorted_segment_max/min/prod
    (ids of rank 2, negative ids, an empty segment), and tf.gradients
    through them (ties and zeros included)."""
    g = tf.Graph()
    rng = np.random.RandomState(12)
    data_val = np.round(rng.randn(6, 3) * 4).astype(np.float32) / 4
    data_val[1, 0] = data_val[0, 0]  # a tie in segment 0
    data_val[4, 2] = 0.0  # a zero in segment 2
    with g.as_default():
        data = v1.placeholder(tf.float32, [6, 3], name="data")
        ids = tf.constant([0, 0, 0, 2, 2, 3])
        uids = tf.constant([[2, 0], [-1, 2], [0, 2]], tf.int64)
        data3 = tf.reshape(data, [3, 2, 3])
        fetches = [
            tf.math.segment_max(data, ids),
            tf.math.segment_min(data, ids),
            tf.math.segment_mean(data, ids),
            tf.math.segment_prod(data, ids),
            tf.math.unsorted_segment_max(data3, uids, 4),
            tf.math.unsorted_segment_min(data, [1, 1, -1, 0, 3, 1], 4),
            tf.math.unsorted_segment_prod(data3, uids, 3),
        ]
        w = tf.constant(rng.randn(4, 3).astype(np.float32))
        loss = (tf.reduce_sum(fetches[0] * w) + tf.reduce_sum(fetches[1] * w)
                + tf.reduce_sum(fetches[2] * w) + tf.reduce_sum(fetches[3] * w)
                + tf.reduce_sum(tf.math.unsorted_segment_max(data3, uids, 3) * w[:3])
                + tf.reduce_sum(tf.math.unsorted_segment_prod(data3, uids, 3) * w[:3]))
        fetches += tf.gradients(loss, [data])
        with v1.Session() as sess:
            vals = sess.run(fetches, {data: data_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"SegmentMax", "SegmentMin", "SegmentMean", "SegmentProd", "UnsortedSegmentMax",
            "UnsortedSegmentMin", "UnsortedSegmentProd"} <= ops, sorted(ops)
    save_case("segment_reductions", g, [t.name for t in fetches], vals, feeds={"data": data_val},
              rtol=1e-5, atol=1e-5)


def elementwise_extra_cases():
    """tf.bitwise, Mod/TruncateMod, multiply_no_nan and the special functions
    (lgamma, digamma, polygamma, erfinv, ndtri) with their gradients."""
    g = tf.Graph()
    rng = np.random.RandomState(21)
    x_val = (rng.rand(2, 5) * 3 + 0.2).astype(np.float32)
    p_val = (rng.rand(2, 5) * 0.9 + 0.05).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [2, 5], name="x")
        p = v1.placeholder(tf.float32, [2, 5], name="p")
        ints = tf.constant([[12, -7, 0, 5, 1 << 20], [3, -1, 255, -128, 9]], tf.int32)
        counts = tf.constant([[1, 2, 33, -1, 4], [0, 31, 7, 3, 2]], tf.int32)
        small = tf.constant([1, 2, 3], tf.int64)
        fetches = [
            tf.bitwise.bitwise_and(ints, counts),
            tf.bitwise.bitwise_or(ints, counts),
            tf.bitwise.bitwise_xor(ints, 0x5a),
            tf.bitwise.invert(ints),
            tf.bitwise.left_shift(ints, counts),
            tf.bitwise.right_shift(ints, counts),
            tf.bitwise.left_shift(small, tf.constant([63, 64, -3], tf.int64)),
            tf.raw_ops.Mod(x=ints, y=tf.constant([[5, 3, 7, -2, 3], [2, 4, -6, 5, 7]])),
            tf.raw_ops.TruncateMod(x=x * 3 - 4, y=p),
            tf.math.multiply_no_nan(x, tf.constant([[0., 1, 2, 0, -1], [3, 0, 1, 1, 0]])),
            tf.math.lgamma(x),
            tf.math.digamma(x),
            tf.math.polygamma(tf.constant([[0.], [2.]]), x),
            tf.math.erfinv(p * 2 - 1),
            tf.math.ndtri(p),
        ]
        loss = tf.add_n([tf.reduce_sum(f * w) for f, w in zip(fetches[9:], [1.0, 0.5, -1.0, 0.25, 2.0, 1.5])])
        fetches += tf.gradients(loss, [x, p])
        with v1.Session() as sess:
            vals = sess.run(fetches, {x: x_val, p: p_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"BitwiseAnd", "Invert", "LeftShift", "RightShift", "Mod", "TruncateMod", "MulNoNan",
            "Lgamma", "Digamma", "Polygamma", "Erfinv", "Ndtri"} <= ops, sorted(ops)
    save_case("elementwise_extra", g, [t.name for t in fetches], vals,
              feeds={"x": x_val, "p": p_val}, rtol=2e-5, atol=2e-5)


def search_and_histogram_cases():
    """TF1's TopK (k an attr; graphs before GraphDef version 7, which TF no
    longer builds: written here as TopKV2 and rewritten) with its gradient,
    InTopK, tf.searchsorted (LowerBound, UpperBound) and
    tf.histogram_fixed_width."""
    g = tf.Graph()
    rng = np.random.RandomState(8)
    x_val = rng.randn(3, 6).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [3, 6], name="x")
        top = tf.math.top_k(x, k=3, name="top")
        edges = tf.constant([[-1.0, 0.0, 0.5, 2.0]] * 3)
        fetches = [
            top.values,
            top.indices,
            tf.raw_ops.InTopK(predictions=x, targets=tf.constant([0, 5, 2]), k=2),
            tf.searchsorted(edges, x, side="left"),
            tf.searchsorted(edges, x, side="right", out_type=tf.int64),
            tf.histogram_fixed_width(x, [-1.5, 1.5], nbins=7),
            tf.histogram_fixed_width(tf.cast(x * 10, tf.int32), [-10, 10], nbins=4, dtype=tf.int64),
        ]
        fetches += tf.gradients(tf.reduce_sum(top.values * tf.constant([3.0, -1.0, 0.5])), [x])
        with v1.Session() as sess:
            vals = sess.run(fetches, {x: x_val})

    class WithTopKV1:
        """The graph with its TopKV2 node turned into TF1's TopK."""
        def as_graph_def(self):
            gd = g.as_graph_def()
            for n in gd.node:
                if n.op == "TopKV2":
                    n.op = "TopK"
                    del n.input[1]
                    n.attr["k"].i = 3
                    for a in ("Tk", "index_type"):
                        if a in n.attr:
                            del n.attr[a]
            return gd

    ops = set(n.op for n in WithTopKV1().as_graph_def().node)
    assert {"TopK", "InTopK", "LowerBound", "UpperBound", "HistogramFixedWidth"} <= ops, sorted(ops)
    save_case("search_and_histogram", WithTopKV1(), [t.name for t in fetches], vals,
              feeds={"x": x_val})


def color_cases():
    """tf.image.rgb_to_hsv (and its gradient), hsv_to_rgb, adjust_hue,
    adjust_saturation on random images, greys and black included."""
    g = tf.Graph()
    rng = np.random.RandomState(17)
    img_val = rng.rand(2, 4, 5, 3).astype(np.float32)
    img_val[0, 0, 0] = [0.5, 0.5, 0.5]
    img_val[0, 0, 1] = [0.0, 0.0, 0.0]
    with g.as_default():
        img = v1.placeholder(tf.float32, [2, 4, 5, 3], name="img")
        hsv = tf.image.rgb_to_hsv(img)
        fetches = [
            hsv,
            tf.image.hsv_to_rgb(hsv),
            tf.image.adjust_hue(img, 0.3),
            tf.image.adjust_hue(img, -0.45),
            tf.image.adjust_saturation(img, 0.4),
            tf.image.adjust_saturation(img, 2.5),
        ]
        w = tf.constant(rng.randn(3).astype(np.float32))
        fetches += tf.gradients(tf.reduce_sum(hsv * w), [img])
        with v1.Session() as sess:
            vals = sess.run(fetches, {img: img_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"RGBToHSV", "HSVToRGB", "AdjustHue", "AdjustSaturation"} <= ops, sorted(ops)
    save_case("color", g, [t.name for t in fetches], vals, feeds={"img": img_val},
              rtol=1e-5, atol=1e-5)


def categorical_cases():
    """tf.random.stateless_categorical and a seeded tf.random.categorical
    (Multinomial with the graph's seeds), fetched once: TensorFlow's ids bit
    for bit."""
    g = tf.Graph()
    rng = np.random.RandomState(5)
    logits_val = rng.randn(3, 7).astype(np.float32)
    logits_val[1, 2] = -np.inf
    with g.as_default():
        v1.set_random_seed(1234)
        logits = v1.placeholder(tf.float32, [3, 7], name="logits")
        fetches = [
            tf.random.stateless_categorical(logits, 9, seed=[5, 6]),
            tf.random.stateless_categorical(tf.cast(logits, tf.float64), 4,
                                            seed=tf.constant([-9, 3], tf.int32), dtype=tf.int32),
            tf.random.categorical(logits, 8, seed=77),
        ]
        with v1.Session() as sess:
            vals = sess.run(fetches, {logits: logits_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"StatelessMultinomial", "Multinomial"} <= ops, sorted(ops)
    save_case("categorical", g, [t.name for t in fetches], vals, feeds={"logits": logits_val})


def distribution_cases():
    """Seeded tf.random.gamma and tf.random.poisson, stateless gamma, Poisson
    and binomial, and tf.random.Generator.binomial, fetched once with
    gamma's reparameterization gradient w.r.t. alpha: TensorFlow's draws
    (to float rounding of the gradients)."""
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(4321)
        alpha = v1.placeholder(tf.float32, [3], name="alpha")
        rate = v1.placeholder(tf.float64, [2, 2], name="rate")
        gamma = tf.random.gamma([4], alpha, seed=11)
        sgamma = tf.random.stateless_gamma([5, 3], seed=[3, 8], alpha=tf.cast(alpha, tf.float64),
                                          dtype=tf.float64)
        gen = tf.random.Generator.from_seed(99)
        fetches = [
            gamma,
            sgamma,
            tf.random.poisson([3], rate, seed=12, dtype=tf.int32),
            tf.random.stateless_poisson([4, 2, 2], seed=[-2, 5], lam=rate),
            tf.random.stateless_binomial([6, 3], seed=[1, 9], counts=[8.0, 60.0, 400.0],
                                         probs=[0.45, 0.8, 0.1], output_dtype=tf.float32),
            gen.binomial([5, 2], counts=tf.constant([15.0, 250.0]), probs=tf.constant([0.5, 0.3])),
        ]
        fetches += tf.gradients(tf.reduce_sum(gamma * gamma), [alpha])
        fetches += tf.gradients(tf.reduce_sum(tf.sqrt(sgamma)), [alpha])
        init = v1.global_variables_initializer()
        with v1.Session() as sess:
            sess.run(init)
            vals = sess.run(fetches, {alpha: [0.4, 1.0, 3.5], rate: [[0.3, 6.0], [45.0, 2e3]]})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"RandomGamma", "RandomPoissonV2", "StatelessRandomGammaV3", "StatelessRandomPoisson",
            "StatelessRandomBinomial", "StatefulRandomBinomial", "RandomGammaGrad"} <= ops, sorted(ops)
    save_case("distributions", g, [t.name for t in fetches], vals,
              feeds={"alpha": np.array([0.4, 1.0, 3.5], np.float32),
                     "rate": np.array([[0.3, 6.0], [45.0, 2e3]])},
              init=init.name, rtol=2e-5, atol=1e-6)


def special_function_cases():
    """tf.math.igamma, igammac, betainc and zeta, the Bessel functions,
    Dawson's, Fresnel's and Spence's integrals and expint of
    tf.math.special, with their gradients."""
    g = tf.Graph()
    rng = np.random.RandomState(8)
    a_val = rng.uniform(0.2, 6, [2, 3])
    x_val = rng.uniform(0.05, 9, [3])
    u_val = rng.uniform(0.02, 0.98, [2, 3])
    with g.as_default():
        a = v1.placeholder(tf.float64, [2, 3], name="a")
        x = v1.placeholder(tf.float64, [3], name="x")
        u = v1.placeholder(tf.float64, [2, 3], name="u")
        sp = tf.math.special
        ys = [tf.math.igamma(a, x), tf.math.igammac(a, x), tf.math.betainc(a, a[::-1], u)]
        ys += [sp.bessel_i0(x), sp.bessel_i0e(-x), sp.bessel_i1(x), sp.bessel_i1e(-x),
               sp.bessel_k0(x), sp.bessel_k0e(x), sp.bessel_k1(x), sp.bessel_k1e(x),
               sp.bessel_j0(x), sp.bessel_j1(x), sp.bessel_y0(x), sp.bessel_y1(x),
               sp.dawsn(x - 4.0), sp.fresnel_cos(x - 3.0), sp.fresnel_sin(x - 3.0), sp.spence(x),
               sp.expint(x), tf.math.zeta(a + 1.2, x)]
        total = tf.add_n([tf.reduce_sum(y) for y in ys])
        fetches = ys + tf.gradients(total, [a, x, u])
        with v1.Session() as sess:
            vals = sess.run(fetches, {a: a_val, x: x_val, u: u_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"Igamma", "Igammac", "IgammaGradA", "Betainc", "BesselI0", "BesselK1e",
            "BesselY1", "Dawsn", "FresnelCos", "FresnelSin", "Spence", "Expint", "Zeta"} <= ops, sorted(ops)
    save_case("special_functions", g, [t.name for t in fetches], vals,
              feeds={"a": a_val, "x": x_val, "u": u_val}, rtol=1e-9, atol=1e-12)


def ctc_cases():
    """tf.compat.v1.nn.ctc_loss over sparse labels (CTCLoss) with its
    gradient through a softmax-free linear layer, tf.nn.ctc_greedy_decoder's
    and ctc_beam_search_decoder's (v2 and v1) sparse outputs and log
    probabilities, and tf.edit_distance of the decoding against the labels."""
    g = tf.Graph()
    rng = np.random.RandomState(21)
    x_val = rng.randn(7, 4, 6).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [7, 4, 6], name="x")
        w = tf.constant(rng.randn(6, 6).astype(np.float32))
        logits = tf.tensordot(x, w, 1)
        labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2], [3, 0]],
                                 tf.constant([1, 1, 4, 0, 2, 3, 2], tf.int32), [4, 3])
        lengths = tf.constant([7, 5, 6, 3], tf.int32)
        loss = v1.nn.ctc_loss(labels, logits, lengths)
        loss_collapsed = v1.nn.ctc_loss(labels, logits, lengths, preprocess_collapse_repeated=True)
        (decoded,), log_prob = tf.nn.ctc_greedy_decoder(logits, lengths)
        errors = tf.edit_distance(tf.cast(decoded, tf.int32), labels)
        raw_errors = tf.edit_distance(tf.cast(decoded, tf.int32), labels, normalize=False)
        beams, beam_log_probs = tf.nn.ctc_beam_search_decoder(logits, lengths, beam_width=5,
                                                              top_paths=2)
        merged, merged_log_probs = v1.nn.ctc_beam_search_decoder(logits, lengths, beam_width=3)
        fetches = [loss, loss_collapsed, decoded.indices, decoded.values, decoded.dense_shape,
                   log_prob, errors, raw_errors, beam_log_probs, merged_log_probs]
        for path in beams + merged:
            fetches += [path.indices, path.values, path.dense_shape]
        fetches += tf.gradients(tf.reduce_sum(loss) + tf.reduce_sum(loss_collapsed), [x])
        with v1.Session() as sess:
            vals = sess.run(fetches, {x: x_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"CTCLoss", "CTCGreedyDecoder", "CTCBeamSearchDecoder", "EditDistance"} <= ops, sorted(ops)
    save_case("ctc", g, [t.name for t in fetches], vals, feeds={"x": x_val}, rtol=2e-5, atol=2e-6)


def projective_transform_cases():
    """ImageProjectiveTransformV3 (what Keras's RandomRotation / RandomZoom
    run) in every interpolation and fill mode, and V2, with the gradient
    w.r.t. the images; tf.image.resize's "area" (ResizeArea) and
    tf.image.draw_bounding_boxes."""
    g = tf.Graph()
    rng = np.random.RandomState(13)
    img_val = rng.rand(2, 9, 7, 3).astype(np.float32)
    angle = 0.35
    with g.as_default():
        img = v1.placeholder(tf.float32, [2, 9, 7, 3], name="img")
        c, s_ = np.cos(angle), np.sin(angle)
        tr = tf.constant([[c, -s_, 1.2, s_, c, -0.8, 0.0, 0.0],
                          [0.8, 0.1, 0.6, -0.05, 1.15, 0.2, 0.01, -0.02]], tf.float32)
        fetches = []
        for interp in ["NEAREST", "BILINEAR"]:
            for mode in ["CONSTANT", "REFLECT", "WRAP", "NEAREST"]:
                fetches.append(tf.raw_ops.ImageProjectiveTransformV3(
                    images=img, transforms=tr, output_shape=[8, 10], fill_value=0.25,
                    interpolation=interp, fill_mode=mode))
        fetches.append(tf.image.resize(img, [5, 4], method="area"))
        boxes = tf.constant([[[0.1, 0.2, 0.8, 0.9], [0.5, -0.3, 1.4, 0.6]],
                             [[0.0, 0.0, 1.0, 1.0], [0.9, 0.1, 0.2, 0.5]]])
        fetches.append(tf.image.draw_bounding_boxes(img, boxes, [[1.0, 0.0, 0.0], [0.0, 0.5, 1.0]]))
        fetches.append(v1.image.resize_area(tf.cast(img * 255, tf.uint8), [6, 11],
                                            align_corners=True))
        fetches.append(tf.raw_ops.ImageProjectiveTransformV2(
            images=img, transforms=tr[:1], output_shape=[9, 7], interpolation="BILINEAR",
            fill_mode="REFLECT"))
        w = tf.constant(rng.randn(8, 10, 3).astype(np.float32))
        fetches += tf.gradients(tf.reduce_sum(fetches[5] * w) + tf.reduce_sum(fetches[-1]), [img])
        with v1.Session() as sess:
            vals = sess.run(fetches, {img: img_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"ImageProjectiveTransformV3", "ImageProjectiveTransformV2", "MatrixInverse",
            "ResizeArea", "DrawBoundingBoxesV2"} <= ops, sorted(ops)
    save_case("projective_transform", g, [t.name for t in fetches], vals, feeds={"img": img_val},
              rtol=1e-4, atol=1e-5)


def small_compat_cases():
    """tf.math.nextafter, BiasAddV1 (TF1's first bias_add) and InvGrad with
    their gradients, tf.guarantee_const, Snapshot and ToBool, and
    tf.gather_nd on a resource variable (ResourceGatherNd) with its gradient."""
    g = tf.Graph()
    rng = np.random.RandomState(17)
    x_val = rng.randn(2, 3, 4).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [2, 3, 4], name="x")
        b = tf.constant(rng.randn(4).astype(np.float32))
        y = tf.raw_ops.BiasAddV1(value=x, bias=b)
        nxt = tf.math.nextafter(x, tf.constant(0.0))
        inv = tf.raw_ops.InvGrad(y=x, dy=y)
        fetches = [y, nxt, inv, tf.guarantee_const(x), tf.raw_ops.Snapshot(input=x),
                   tf.raw_ops.ToBool(input=x), tf.raw_ops.ToBool(input=tf.constant(0.0))]
        var = v1.Variable(rng.randn(4, 3).astype(np.float32), use_resource=True, name="var")
        picked = tf.gather_nd(var, [[1, 2], [3, 0], [1, 2]])
        fetches += [picked]
        fetches += tf.gradients(tf.reduce_sum(y * y) + tf.reduce_sum(nxt) + tf.reduce_sum(inv),
                                [x, b])
        fetches += tf.gradients(tf.reduce_sum(picked * [1.0, 2.0, 3.0]), [var])
        init = v1.global_variables_initializer()
        with v1.Session() as sess:
            sess.run(init)
            vals = sess.run(fetches, {x: x_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"BiasAddV1", "NextAfter", "InvGrad", "GuaranteeConst", "Snapshot", "ToBool",
            "ResourceGatherNd"} <= ops, sorted(ops)
    save_case("small_compat", g, [t.name for t in fetches], vals, feeds={"x": x_val},
              init=init.name)


def scatter_cases():
    """TF1's scatter_mul/div/min/max on a ref variable and on a resource
    variable, duplicates included, after two steps (each row touched by one
    op of a step: the ops of a group run in any order)."""
    g = tf.Graph()
    with g.as_default():
        init = np.arange(1, 19, dtype=np.float32).reshape(6, 3)
        ref = v1.Variable(init, name="ref", use_resource=False)
        res = v1.Variable(init, name="res", use_resource=True)
        rows = tf.constant([[2.0, 0.5, 1.0], [1.5, 2.0, 0.25], [0.5, 3.0, 2.0]])
        idx = tf.constant([3, 0, 3])
        steps = tf.group(
            v1.scatter_mul(ref, idx, rows), v1.scatter_div(ref, [1], rows[:1]),
            v1.scatter_min(ref, [2, 2], rows[1:] * 4), v1.scatter_max(ref, [4], rows[2:] * 5),
            res.scatter_max(tf.IndexedSlices(rows * 6, idx)),
            res.scatter_min(tf.IndexedSlices(rows, tf.constant([1, 1, 2]))),
            tf.raw_ops.ResourceScatterMul(resource=res.handle, indices=[4], updates=rows[:1]),
            tf.raw_ops.ResourceScatterDiv(resource=res.handle, indices=[5], updates=rows[2:]))
        init_op = v1.global_variables_initializer()
        fetches = [ref.value(), res.value()]
        with v1.Session() as sess:
            sess.run(init_op)
            for _ in range(2):
                sess.run(steps)
            vals = sess.run(fetches)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax", "ResourceScatterMax",
            "ResourceScatterMin", "ResourceScatterMul", "ResourceScatterDiv"} <= ops, sorted(ops)
    save_case("scatter_mul_div_min_max", g, [t.name for t in fetches], vals,
              targets=[steps.name], steps=2, init=init_op.name)


def scatter_nd_cases():
    """scatter_nd_update/add/sub/max/min on a ref variable and on a resource
    variable (slices and elements, repeated indices; each element touched by
    one op of a step, whose ops run in any order) over two steps, and
    tensor_scatter_nd_max/min and scatter_nd_non_aliasing_add with their
    gradients."""
    g = tf.Graph()
    with g.as_default():
        init = np.arange(1, 16, dtype=np.float32).reshape(5, 3)
        ref = v1.Variable(init, name="ref", use_resource=False)
        res = v1.Variable(init, name="res", use_resource=True)
        rows = tf.constant([[2.0, 0.5, 1.0], [1.5, 2.0, 0.25]])
        row_idx = tf.constant([[3], [0]])
        elem_idx = tf.constant([[2, 2], [2, 2], [2, 0]], tf.int64)
        elems = tf.constant([1.0, 2.5, -3.0])
        steps = tf.group(
            v1.scatter_nd_add(ref, row_idx, rows), v1.scatter_nd_sub(ref, elem_idx, elems),
            v1.scatter_nd_update(ref, [[2, 1]], [7.0]),
            tf.raw_ops.ScatterNdMax(ref=ref, indices=[[1]], updates=rows[:1] * 4),
            tf.raw_ops.ScatterNdMin(ref=ref, indices=[[4, 0]], updates=[-1.0]),
            res.scatter_nd_add(row_idx, rows * 2), res.scatter_nd_sub(elem_idx, elems),
            res.scatter_nd_update([[4, 2]], [0.5]),
            tf.raw_ops.ResourceScatterNdMax(ref=res.handle, indices=[[1]], updates=rows[1:] * 9),
            tf.raw_ops.ResourceScatterNdMin(ref=res.handle, indices=[[4, 1]], updates=[-2.0]))
        x = tf.constant([[1.0, 5.0], [3.0, 4.0], [5.0, 6.0]])
        upd = tf.constant([[10.0, 2.0], [0.0, 9.0], [7.0, 1.0]])
        idx = tf.constant([[2], [0], [2]])
        tmax = tf.tensor_scatter_nd_max(x, idx, upd)
        tmin = tf.tensor_scatter_nd_min(x, idx, upd)
        nadd = tf.raw_ops.ScatterNdNonAliasingAdd(input=x, indices=idx, updates=upd)
        gx, gu = tf.gradients(tf.reduce_sum(tmax * tmax) + tf.reduce_sum(tmin * 3.0) +
                              tf.reduce_sum(nadd * nadd), [x, upd])
        init_op = v1.global_variables_initializer()
        fetches = [ref.value(), res.value(), tmax, tmin, nadd, gx, gu]
        with v1.Session() as sess:
            sess.run(init_op)
            for _ in range(2):
                sess.run(steps)
            vals = sess.run(fetches)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"ScatterNdAdd", "ScatterNdSub", "ScatterNdUpdate", "ScatterNdMax", "ScatterNdMin",
            "ResourceScatterNdAdd", "ResourceScatterNdSub", "ResourceScatterNdUpdate",
            "ResourceScatterNdMax", "ResourceScatterNdMin", "TensorScatterMax",
            "TensorScatterMin", "ScatterNdNonAliasingAdd"} <= ops, sorted(ops)
    save_case("scatter_nd", g, [t.name for t in fetches], vals,
              targets=[steps.name], steps=2, init=init_op.name)


def composite_cases():
    """tf.math.reduce_euclidean_norm and cumulative_logsumexp (exclusive,
    reverse) with their gradients."""
    g = tf.Graph()
    rng = np.random.RandomState(31)
    x_val = rng.randn(3, 5).astype(np.float32)
    with g.as_default():
        x = v1.placeholder(tf.float32, [3, 5], name="x")
        fetches = [
            tf.math.reduce_euclidean_norm(x, 1),
            tf.math.reduce_euclidean_norm(x, [0, 1], keepdims=True),
            tf.math.cumulative_logsumexp(x, 1),
            tf.math.cumulative_logsumexp(x, 0, exclusive=True),
            tf.math.cumulative_logsumexp(x, 1, reverse=True),
        ]
        loss = (tf.reduce_sum(fetches[0] * [1.0, -2.0, 0.5]) + tf.reduce_sum(fetches[2] * 0.3)
                + tf.reduce_sum(fetches[4] * x))
        fetches += tf.gradients(loss, [x])
        with v1.Session() as sess:
            vals = sess.run(fetches, {x: x_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"EuclideanNorm", "CumulativeLogsumexp"} <= ops, sorted(ops)
    save_case("composite", g, [t.name for t in fetches], vals, feeds={"x": x_val},
              rtol=1e-5, atol=1e-5)


def counting_and_diag_cases():
    """The ops TF2 programs use to count, deduplicate and take diagonals:
    tf.math.bincount (DenseBincount, and Sparse/RaggedBincount for sparse
    and ragged ids), tf.unique_with_counts and UniqueV2, and the V3
    diagonal ops of tf.linalg, with the gradients through the diagonals."""
    g = tf.Graph()
    with g.as_default():
        ids = v1.placeholder(tf.int32, [3, 4], name="ids")
        m = v1.placeholder(tf.float32, [3, 4], name="m")
        dense = tf.math.bincount(ids, minlength=6, maxlength=6, axis=-1)
        multi = tf.math.bincount(ids, minlength=6, maxlength=6, axis=-1, binary_output=True)
        weighed = tf.math.bincount(ids, weights=m, minlength=6, maxlength=6, axis=-1)
        flat = v1.raw_ops.Bincount(arr=ids, size=5, weights=tf.reshape(m, [-1]))
        sparse = tf.math.bincount(tf.sparse.from_dense(ids), minlength=6, maxlength=6, axis=-1)
        ragged = tf.math.bincount(tf.RaggedTensor.from_row_lengths(tf.reshape(ids, [-1]),
                                                                   [5, 0, 7]),
                                  minlength=6, maxlength=6, axis=-1)
        uniq = tf.unique_with_counts(tf.reshape(ids, [-1]), out_idx=tf.int64)
        rows = v1.raw_ops.UniqueV2(x=ids // 2, axis=[1])
        band = tf.linalg.diag_part(m, k=(-1, 2), padding_value=-1.0)
        built = tf.linalg.diag(band[..., 1:, :], k=(-1, 1))
        replaced = tf.linalg.set_diag(m, band[1:], k=(-1, 1), align="LEFT_RIGHT")
        loss = tf.reduce_sum(tf.square(band)) + tf.reduce_sum(built * 0.5) + \
            tf.reduce_sum(replaced * replaced)
        gm = tf.gradients(loss, m)[0]
        fetches = [dense, multi, weighed, flat, sparse, ragged, uniq.y, uniq.idx, uniq.count,
                   rows.y, rows.idx, band, built, replaced, gm]
        feeds = {ids: np.array([[0, 1, 1, 5], [2, 7, 3, 3], [4, 0, 0, 0]], np.int32),
                 m: np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)}
        with v1.Session() as sess:
            vals = sess.run(fetches, feeds)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"DenseBincount", "SparseBincount", "RaggedBincount", "UniqueWithCounts",
            "MatrixDiagV3", "MatrixDiagPartV3", "MatrixSetDiagV3"} <= ops, sorted(ops)
    save_case("counting_and_diag", g, [t.name for t in fetches], vals,
              feeds={"ids": feeds[ids], "m": feeds[m]})


def stateless_random_cases():
    """TF2's seeded draws beyond uniform and normal: tf.random's
    stateless_truncated_normal and integer stateless_uniform (bounded and
    full range, StatelessRandom*IntV2), and the V1 raw ops, from a seed fed
    at run time; Sluice must give TensorFlow's values bit for bit."""
    g = tf.Graph()
    with g.as_default():
        seed = v1.placeholder(tf.int64, [2], name="seed")
        fetches = [
            tf.random.stateless_truncated_normal([3, 5], seed),
            tf.random.stateless_truncated_normal([7], seed, mean=1.0, stddev=0.5, dtype=tf.float64),
            tf.random.stateless_uniform([4, 3], seed, minval=-7, maxval=20, dtype=tf.int32),
            tf.random.stateless_uniform([5], seed, minval=-2**40, maxval=2**41, dtype=tf.int64),
            tf.random.stateless_uniform([6], seed, minval=None, maxval=None, dtype=tf.int64),
            tf.random.stateless_uniform([6], seed, minval=None, maxval=None, dtype=tf.uint32),
            v1.raw_ops.StatelessTruncatedNormal(shape=[9], seed=seed, dtype=tf.float32),
            v1.raw_ops.StatelessRandomUniformInt(shape=[5], seed=seed, minval=tf.constant(3),
                                                 maxval=tf.constant(1000)),
            v1.raw_ops.StatelessRandomUniformFullInt(shape=[4], seed=seed, dtype=tf.int32),
        ]
        with v1.Session() as sess:
            vals = sess.run(fetches, {seed: np.array([11, -4], np.int64)})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"StatelessTruncatedNormalV2", "StatelessRandomUniformIntV2",
            "StatelessRandomUniformFullIntV2", "StatelessTruncatedNormal",
            "StatelessRandomUniformInt", "StatelessRandomUniformFullInt"} <= ops, sorted(ops)
    save_case("stateless_random", g, [t.name for t in fetches], vals,
              feeds={"seed": np.array([11, -4], np.int64)}, rtol=0, atol=0)


def linalg_cases():
    """tf.linalg's dense ops on a batch of matrices fed at run time, and
    tf.gradients of a loss through all of them: inv, det, slogdet, solve,
    triangular_solve (broadcast over the batch), cholesky and cholesky_solve."""
    g = tf.Graph()
    rng = np.random.RandomState(7)
    a_val = rng.randn(2, 4, 4) + 4 * np.eye(4)
    b_val = rng.randn(2, 4, 3)
    with g.as_default():
        a = v1.placeholder(tf.float64, [2, 4, 4], name="a")
        b = v1.placeholder(tf.float64, [2, 4, 3], name="b")
        spd = tf.matmul(a, a, transpose_b=True) + tf.eye(4, dtype=tf.float64)
        chol = tf.linalg.cholesky(spd)
        sign, logdet = tf.linalg.slogdet(a)
        fetches = [
            tf.linalg.inv(a),
            tf.linalg.inv(a, adjoint=True),
            tf.linalg.det(a),
            sign, logdet,
            tf.linalg.solve(a, b),
            tf.linalg.solve(a, b, adjoint=True),
            tf.linalg.triangular_solve(a[0], b),
            tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
            chol,
            tf.linalg.cholesky_solve(chol, b),
        ]
        loss = tf.add_n([tf.reduce_sum(tf.square(f)) for f in fetches if f is not sign])
        fetches += tf.gradients(loss, [a, b])
        with v1.Session() as sess:
            vals = sess.run(fetches, {a: a_val, b: b_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "MatrixSolve",
            "MatrixTriangularSolve", "Cholesky"} <= ops, sorted(ops)
    save_case("linalg", g, [t.name for t in fetches], vals, feeds={"a": a_val, "b": b_val},
              rtol=1e-9, atol=1e-9)


def linalg_factor_cases():
    """tf.linalg.qr, eigh, eigvalsh and svd of a batch fed at run time, with
    tf.gradients through them. Vectors are unique up to sign, so the fetches
    take them squared (and Q, R as they are: Householder QR agrees)."""
    g = tf.Graph()
    rng = np.random.RandomState(11)
    tall_val, wide_val = rng.randn(2, 5, 3), rng.randn(2, 3, 5)
    sym_val = rng.randn(2, 4, 4)
    with g.as_default():
        tall = v1.placeholder(tf.float64, [2, 5, 3], name="tall")
        wide = v1.placeholder(tf.float64, [2, 3, 5], name="wide")
        sym = v1.placeholder(tf.float64, [2, 4, 4], name="sym")
        s4 = sym + tf.linalg.matrix_transpose(sym)
        q, r = tf.linalg.qr(tall)
        qw, rw = tf.linalg.qr(wide)
        e, v = tf.linalg.eigh(s4)
        s, u, vv = tf.linalg.svd(tall)
        sw = tf.linalg.svd(wide, compute_uv=False)
        weights = tf.constant(np.arange(1, 26, dtype=np.float64).reshape(5, 5) / 7)
        fetches = [q, r, qw, rw, e, tf.square(v), tf.linalg.eigvalsh(s4), s, tf.square(u),
                   tf.square(vv), sw]
        loss = (tf.reduce_sum(q * weights[:, :3]) + tf.reduce_sum(r) + tf.reduce_sum(qw) +
                tf.reduce_sum(rw * weights[:3, :]) + tf.reduce_sum(e * e) +
                tf.reduce_sum(tf.square(v) * weights[:4, :4]) + tf.reduce_sum(s) +
                tf.reduce_sum(tf.square(u) * weights[:, :3]) +
                tf.reduce_sum(tf.square(vv) * weights[:3, :3]) + tf.reduce_sum(sw * sw))
        fetches += tf.gradients(loss, [tall, wide, sym])
        with v1.Session() as sess:
            vals = sess.run(fetches, {tall: tall_val, wide: wide_val, sym: sym_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"Qr", "SelfAdjointEigV2", "Svd"} <= ops, sorted(ops)
    save_case("linalg_factors", g, [t.name for t in fetches], vals,
              feeds={"tall": tall_val, "wide": wide_val, "sym": sym_val}, rtol=1e-8, atol=1e-9)


def nms_cases():
    """A detector's last step: tf.image.non_max_suppression (V3), the padded
    kernel (V4) and _with_scores (V5, Soft-NMS) over random boxes fed at run
    time, and the kept boxes gathered."""
    g = tf.Graph()
    rng = np.random.RandomState(5)
    corners = rng.rand(60, 2).astype(np.float32) * 10
    sizes = rng.rand(60, 2).astype(np.float32) * 3 + 0.5
    boxes_val = np.concatenate([corners, corners + sizes], axis=1)
    scores_val = rng.rand(60).astype(np.float32)
    with g.as_default():
        boxes = v1.placeholder(tf.float32, [None, 4], name="boxes")
        scores = v1.placeholder(tf.float32, [None], name="scores")
        keep = tf.image.non_max_suppression(boxes, scores, 20, iou_threshold=0.4,
                                            score_threshold=0.1)
        # tf.image.non_max_suppression_padded is a function of other ops in
        # TF2; the kernel its TF1 form called:
        padded, valid = v1.raw_ops.NonMaxSuppressionV4(
            boxes=boxes, scores=scores, max_output_size=25, iou_threshold=0.5,
            score_threshold=float("-inf"), pad_to_max_output_size=True)
        soft, soft_scores = tf.image.non_max_suppression_with_scores(
            boxes, scores, 30, iou_threshold=1.0, score_threshold=0.05, soft_nms_sigma=0.5)
        fetches = [keep, tf.gather(boxes, keep), padded, valid, soft, soft_scores]
        with v1.Session() as sess:
            vals = sess.run(fetches, {boxes: boxes_val, scores: scores_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5"} <= ops, sorted(ops)
    save_case("nms", g, [t.name for t in fetches], vals,
              feeds={"boxes": boxes_val, "scores": scores_val}, rtol=1e-6, atol=1e-6)


def resize_cases():
    """tf.image.resize's nearest and bicubic methods (TF2: half-pixel
    centers), the TF1 compat forms (legacy and align_corners sampling), and
    tf.gradients through them."""
    g = tf.Graph()
    rng = np.random.RandomState(9)
    img_val = rng.rand(2, 6, 5, 3).astype(np.float32)
    with g.as_default():
        img = v1.placeholder(tf.float32, [2, 6, 5, 3], name="img")
        fetches = [
            tf.image.resize(img, [9, 13], method="nearest"),
            tf.image.resize(img, [4, 3], method="nearest"),
            tf.image.resize(img, [11, 8], method="bicubic"),
            v1.image.resize_bicubic(img, [7, 7]),
            v1.image.resize_bicubic(img, [7, 9], align_corners=True),
            v1.image.resize_nearest_neighbor(img, [7, 9], align_corners=True),
        ]
        loss = tf.add_n([tf.reduce_sum(tf.square(f)) for f in fetches])
        fetches += tf.gradients(loss, [img])
        with v1.Session() as sess:
            vals = sess.run(fetches, {img: img_val})
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"ResizeNearestNeighbor", "ResizeBicubic", "ResizeNearestNeighborGrad",
            "ResizeBicubicGrad"} <= ops, sorted(ops)
    save_case("resize", g, [t.name for t in fetches], vals, feeds={"img": img_val},
              rtol=1e-5, atol=1e-5)


def feature_column_cases():
    """The ops a TF1 feature-column model's graph hashes, prints and pools
    with (issue 33): every string-to-bucket op, AsString, the sparse segment
    reductions and their gradients, and embedding_lookup_sparse over one
    table with each combiner."""
    g = tf.Graph()
    with g.as_default():
        words = tf.constant([["", "a", "hello"], ["Sluice", "feature_column_value_17", "x" * 100]])
        fast = tf.strings.to_hash_bucket_fast(words, 1 << 20)
        strong = tf.strings.to_hash_bucket_strong(words, 1 << 20, [7, 11])
        legacy = v1.string_to_hash_bucket(words, 1 << 20)
        printed = [tf.strings.as_string(tf.constant([3.25, -0.5, 1e-3])),
                   tf.strings.as_string(tf.constant([3.25, -0.5]), precision=3, width=9),
                   tf.strings.as_string(tf.constant([12, -7], tf.int64), width=4, fill="0")]
        data = tf.constant(np.arange(15, dtype=np.float32).reshape(5, 3) / 4.0 - 1.0)
        idx = tf.constant([4, 0, 0, 2, 3, 1])
        seg = tf.constant([0, 0, 1, 3, 3, 3])
        reductions = [v1.sparse.segment_sum(data, idx, seg),
                      v1.sparse.segment_mean(data, idx, seg),
                      v1.sparse.segment_sqrt_n(data, idx, seg),
                      v1.sparse.segment_mean(data, idx, seg, num_segments=6)]
        loss = sum(tf.reduce_sum(r * r) for r in reductions)
        grad = tf.gradients(loss, data)[0]
        table = tf.constant(np.arange(24, dtype=np.float32).reshape(8, 3) / 8.0)
        ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
                              values=tf.constant([3, 7, 1, 0, 0, 5], tf.int64), dense_shape=[3, 3])
        weights = tf.SparseTensor(indices=ids.indices, values=[1.0, 2.0, 0.5, 1.0, 3.0, 1.0],
                                  dense_shape=ids.dense_shape)
        pooled = [v1.nn.embedding_lookup_sparse(table, ids, None, combiner=c)
                  for c in ("sum", "mean", "sqrtn")]
        pooled.append(v1.nn.embedding_lookup_sparse(table, ids, weights, combiner="mean"))
        fetches = [fast, strong, legacy] + printed + reductions + [grad] + pooled
        with v1.Session() as sess:
            vals = sess.run(fetches)
    save_case("feature_columns", g, [t.name for t in fetches], vals)


def sparse_tensor_cases():
    """SparseTensor ops as tf.sparse and safe_embedding_lookup_sparse use
    them, with gradients."""
    g = tf.Graph()
    with g.as_default():
        values = tf.constant([1.0, -2.0, 3.0, 0.5])
        sp = tf.SparseTensor(indices=[[0, 1], [2, 0], [2, 2], [4, 1]], values=values, dense_shape=[5, 3])
        reshaped = tf.sparse.reshape(sp, [3, -1])
        filled, empty = tf.sparse.fill_empty_rows(sp, -1.0)
        dense = tf.sparse.to_dense(sp, default_value=0.5)
        b = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4) / 3.0)
        product = tf.sparse.sparse_dense_matmul(sp, b)
        product_t = tf.sparse.sparse_dense_matmul(sp, tf.transpose(b), adjoint_b=True)
        unordered = tf.SparseTensor(indices=[[2, 0], [0, 1], [1, 1]], values=values[:3], dense_shape=[3, 2])
        reordered = tf.sparse.reorder(unordered)
        loss = (tf.reduce_sum(filled.values * filled.values) + tf.reduce_sum(dense * dense)
                + tf.reduce_sum(product * product) + tf.reduce_sum(reordered.values * [1.0, 2.0, 3.0]))
        gvalues, gb = tf.gradients(loss, [values, b])
        table = tf.constant(np.arange(24, dtype=np.float32).reshape(8, 3) / 8.0 - 1.0)
        ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [2, 0], [3, 0], [3, 1]],
                              values=tf.constant([3, 7, 1, 0, 5], tf.int64), dense_shape=[4, 2])
        safe = v1.nn.safe_embedding_lookup_sparse(table, ids, None, combiner="mean")
        fetches = [reshaped.indices, reshaped.dense_shape, filled.indices, filled.values, empty,
                   dense, product, product_t, reordered.indices, reordered.values, gvalues, gb, safe]
        with v1.Session() as sess:
            vals = sess.run(fetches)
    save_case("sparse_tensors", g, [t.name for t in fetches], vals)


def sparse_more_cases():
    """String splitting into SparseTensors, and sparse add, concat, slice
    and dense add with their gradients."""
    g = tf.Graph()
    with g.as_default():
        split = v1.string_split(tf.constant(["a b  c", "", "d e"]), " ")
        split_v2 = v1.strings.split(tf.constant(["a<>b<><>c", "x"]), sep="<>", result_type="SparseTensor")
        a_values = tf.constant([1.0, 2.0, -1.0])
        a = tf.SparseTensor([[0, 1], [1, 0], [2, 2]], a_values, [3, 3])
        b_values = tf.constant([3.0, -2.0, 1.0])
        b = tf.SparseTensor([[0, 1], [1, 1], [2, 2]], b_values, [3, 3])
        total = tf.sparse.add(a, b, threshold=0.5)
        cat = tf.sparse.concat(1, [a, b])
        part = tf.sparse.slice(a, [1, 0], [2, 3])
        dense = tf.constant(np.arange(9, dtype=np.float32).reshape(3, 3))
        plus = tf.sparse.add(dense, a)
        loss = (tf.reduce_sum(total.values * total.values) + tf.reduce_sum(part.values * 3.0)
                + tf.reduce_sum(plus * plus))
        grads = tf.gradients(loss, [a_values, b_values, dense])
        fetches = [split.indices, split.values, split.dense_shape, split_v2.indices, split_v2.values,
                   total.indices, total.values, cat.indices, cat.values, cat.dense_shape,
                   part.indices, part.values, part.dense_shape, plus] + grads
        with v1.Session() as sess:
            vals = sess.run(fetches)
    save_case("sparse_more", g, [t.name for t in fetches], vals)


def wide_and_deep_cases():
    """A small TF1 wide & deep model as TensorFlow writes it: strings hashed
    into buckets, partitioned embedding tables looked up sparsely (their
    gradients IndexedSlices, applied by sparse Adagrad), a wide linear part
    trained by FTRL, five steps; the loss and the variables after them."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(5)
        words = tf.constant([["a", "b"], ["c", ""], ["a", "d"], ["e", "b"]])
        labels = tf.constant([[1.0], [0.0], [1.0], [0.0]])
        ids = tf.strings.to_hash_bucket_fast(words, 16)
        mask = tf.not_equal(words, "")
        where = tf.where(mask)
        sp_ids = tf.SparseTensor(where, tf.gather_nd(ids, where), tf.shape(words, out_type=tf.int64))
        full = (rng.randn(16, 3) * 0.5).astype(np.float32)

        def rows(shape, dtype=None, partition_info=None):
            off = partition_info.var_offset[0] if partition_info else 0
            return tf.constant(full[off:off + shape[0]])

        with v1.variable_scope("deep", partitioner=v1.fixed_size_partitioner(2)):
            table = v1.get_variable("emb", [16, 3], initializer=rows)
        pooled = v1.nn.embedding_lookup_sparse(table, sp_ids, None, combiner="mean")
        w_deep = v1.get_variable("w_deep", initializer=tf.constant(rng.randn(3, 1).astype(np.float32)))
        with v1.variable_scope("wide", partitioner=v1.fixed_size_partitioner(2)):
            wide = v1.get_variable("w", [16, 1], initializer=v1.zeros_initializer())
        wide_logit = v1.nn.embedding_lookup_sparse(wide, sp_ids, None, combiner="sum")
        logits = tf.matmul(pooled, w_deep) + wide_logit
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        deep_vars = list(table) + [w_deep]
        wide_vars = list(wide)
        train = tf.group(
            v1.train.AdagradOptimizer(0.5).minimize(loss, var_list=deep_vars),
            v1.train.FtrlOptimizer(0.5, l1_regularization_strength=0.01).minimize(loss, var_list=wide_vars))
        init = v1.global_variables_initializer()
        fetches = [loss] + [v.value() for v in deep_vars + wide_vars]
        with v1.Session() as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            vals = sess.run(fetches)
    # The runner: `init` once, then `train` five times, then the fetches.
    save_case("wide_and_deep", g, [t.name for t in fetches], vals,
              targets=[train.name], steps=5, rtol=1e-4, atol=1e-5, init=init.name)


def sampled_softmax_cases():
    """A skip-gram step as word2vec trains it: embeddings looked up for the
    centre words, tf.nn.sampled_softmax_loss (log-uniform candidates, unique,
    accidental hits removed) and tf.nn.nce_loss with fixed-unigram and
    learned-unigram candidates, five SGD steps on seeded samplers; the losses
    and the tables after them."""
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(42)
        rng = np.random.RandomState(8)
        vocab, dim, batch = 50, 8, 16
        centre = tf.constant(rng.randint(0, vocab, batch).astype(np.int64))
        context = tf.constant(rng.randint(0, vocab, (batch, 1)).astype(np.int64))
        emb = tf.Variable((rng.randn(vocab, dim) * 0.3).astype(np.float32), name="emb")
        out_w = tf.Variable((rng.randn(vocab, dim) * 0.3).astype(np.float32), name="out_w")
        out_b = tf.Variable(np.zeros(vocab, np.float32), name="out_b")
        nce_w = tf.Variable((rng.randn(vocab, dim) * 0.3).astype(np.float32), name="nce_w")
        nce_b = tf.Variable(np.zeros(vocab, np.float32), name="nce_b")
        x = tf.nn.embedding_lookup(emb, centre)
        softmax_loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(
            out_w, out_b, context, x, num_sampled=10, num_classes=vocab))
        counts = (np.arange(vocab, 0, -1) ** 1.2).astype(np.float32).tolist()
        fixed = tf.random.fixed_unigram_candidate_sampler(
            context, 1, 12, True, vocab, unigrams=counts, distortion=0.75)
        learned = tf.random.learned_unigram_candidate_sampler(context, 1, 6, False, vocab)
        nce_loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, context, x, 12, vocab,
                                                 sampled_values=fixed))
        nce_learned = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, context, x, 6, vocab,
                                                    sampled_values=learned,
                                                    remove_accidental_hits=True))
        loss = softmax_loss + nce_loss + 0.5 * nce_learned
        train = v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = v1.global_variables_initializer()
        fetches = [softmax_loss, nce_loss, nce_learned] + [v.value() for v in
                                                           (emb, out_w, out_b, nce_w, nce_b)]
        with v1.Session() as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            vals = sess.run(fetches)
    ops = set(n.op for n in g.as_graph_def().node)
    assert {"LogUniformCandidateSampler", "FixedUnigramCandidateSampler",
            "LearnedUnigramCandidateSampler", "ComputeAccidentalHits"} <= ops, sorted(ops)
    save_case("sampled_softmax", g, [t.name for t in fetches], vals,
              targets=[train.name], steps=5, rtol=1e-4, atol=1e-5, init=init.name)


def optimizer_op_cases():
    """The training ops Keras's optimizers emit (KerasMomentum dense and
    sparse, AdamWithAmsgrad, AdaMax), the sign rules (AddSign, PowerSign)
    and AdagradDA (dense and sparse), each on resource variables of its own with the gradient of
    sum((w - target)^2) read from the variable; five steps, then every
    variable and slot."""
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(11)
        target = tf.constant(rng.randn(4, 2).astype(np.float32))
        fetches, updates = [], []

        def var(name, value=None):
            v = v1.Variable(rng.randn(4, 2).astype(np.float32) if value is None else value,
                            name=name, use_resource=True)
            fetches.append(v.value())
            return v

        def grad(v):
            return 2.0 * (v.read_value() - target)

        zeros = np.zeros((4, 2), np.float32)
        for nesterov in (False, True):
            w, acc = var("keras_w%d" % nesterov), var("keras_acc%d" % nesterov, zeros)
            updates.append(tf.raw_ops.ResourceApplyKerasMomentum(
                var=w.handle, accum=acc.handle, lr=0.1, grad=grad(w), momentum=0.9,
                use_nesterov=nesterov))
        w, acc = var("sparse_keras_w"), var("sparse_keras_acc", zeros)
        rows = tf.constant([2, 0, 2])
        updates.append(tf.raw_ops.ResourceSparseApplyKerasMomentum(
            var=w.handle, accum=acc.handle, lr=0.1, grad=tf.gather(grad(w), rows), indices=rows,
            momentum=0.8, use_nesterov=True))
        w, m, v, vhat = var("ams_w"), var("ams_m", zeros), var("ams_v", zeros), var("ams_vhat", zeros)
        updates.append(tf.raw_ops.ResourceApplyAdamWithAmsgrad(
            var=w.handle, m=m.handle, v=v.handle, vhat=vhat.handle, beta1_power=0.9 ** 3,
            beta2_power=0.999 ** 3, lr=0.05, beta1=0.9, beta2=0.999, epsilon=1e-7, grad=grad(w)))
        w, m, u = var("adamax_w"), var("adamax_m", zeros), var("adamax_u", zeros)
        updates.append(tf.raw_ops.ResourceApplyAdaMax(
            var=w.handle, m=m.handle, v=u.handle, beta1_power=0.9 ** 2, lr=0.05, beta1=0.9,
            beta2=0.999, epsilon=1e-7, grad=grad(w)))
        w, m = var("addsign_w"), var("addsign_m", zeros)
        updates.append(tf.raw_ops.ResourceApplyAddSign(
            var=w.handle, m=m.handle, lr=0.05, alpha=1.0, sign_decay=0.5, beta=0.9, grad=grad(w)))
        w, m = var("powersign_w"), var("powersign_m", zeros)
        updates.append(tf.raw_ops.ResourceApplyPowerSign(
            var=w.handle, m=m.handle, lr=0.05, logbase=float(np.log(2.0)), sign_decay=0.5,
            beta=0.9, grad=grad(w)))
        # Adagrad's dual averaging: its global_step is int64; the sparse
        # form with a repeated row.
        tenths = np.full((4, 2), 0.1, np.float32)
        w, ga, gsa = var("da_w"), var("da_ga", zeros), var("da_gsa", tenths)
        updates.append(tf.raw_ops.ResourceApplyAdagradDA(
            var=w.handle, gradient_accumulator=ga.handle, gradient_squared_accumulator=gsa.handle,
            grad=grad(w), lr=0.1, l1=0.01, l2=0.02, global_step=tf.constant(3, tf.int64)))
        w, ga, gsa = var("sparse_da_w"), var("sparse_da_ga", zeros), var("sparse_da_gsa", tenths)
        rows = tf.constant([1, 3, 1])
        updates.append(tf.raw_ops.ResourceSparseApplyAdagradDA(
            var=w.handle, gradient_accumulator=ga.handle, gradient_squared_accumulator=gsa.handle,
            grad=tf.gather(grad(w), rows), indices=rows, lr=0.1, l1=0.01, l2=0.02,
            global_step=tf.constant(2, tf.int64)))
        train = tf.group(*updates, name="train")
        init = v1.global_variables_initializer()
        with v1.Session() as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            vals = sess.run(fetches)
    save_case("optimizer_ops", g, [t.name for t in fetches], vals, targets=[train.name], steps=5,
              rtol=1e-5, atol=1e-6, init=init.name)


def control_flow_v2_cases():
    """TF2's control flow in a v1 graph: an LSTM written with tf.while_loop
    over TensorArrays (a While over TensorLists, reading the weights inside),
    trained five steps by GradientDescentOptimizer (its gradient a second
    While with TensorList accumulators); then the loss and the weights."""
    v1.enable_control_flow_v2()
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(5)
        time, batch, depth, hidden = 6, 4, 3, 5
        xs = tf.constant(rng.randn(time, batch, depth).astype(np.float32))
        target = tf.constant(rng.randn(batch, hidden).astype(np.float32))
        kernel = v1.Variable((0.3 * rng.randn(depth + hidden, 4 * hidden)).astype(np.float32),
                             name="kernel", use_resource=True)
        bias = v1.Variable(np.zeros(4 * hidden, np.float32), name="bias", use_resource=True)
        inputs = tf.TensorArray(tf.float32, size=time).unstack(xs)
        outputs = tf.TensorArray(tf.float32, size=time)

        def step(t, c, h, outputs):
            z = tf.matmul(tf.concat([inputs.read(t), h], 1), kernel) + bias
            i, f, o, u = tf.split(z, 4, axis=1)
            c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(u)
            h = tf.sigmoid(o) * tf.tanh(c)
            return t + 1, c, h, outputs.write(t, h)

        zeros = tf.zeros([batch, hidden])
        _, c, h, outputs = tf.while_loop(lambda t, *_: t < time, step,
                                         [tf.constant(0), zeros, zeros, outputs])
        mean_h = tf.reduce_mean(outputs.stack(), axis=0)
        loss = tf.reduce_mean(tf.square(mean_h + h - target), name="loss")
        train = v1.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        init = v1.global_variables_initializer()
        fetches = [loss, kernel.value(), bias.value()]
        with v1.Session() as sess:
            sess.run(init)
            for _ in range(5):
                sess.run(train)
            vals = sess.run(fetches)
    ops = set(n.op for n in g.as_graph_def().node)
    assert ops & {"While", "StatelessWhile"}, sorted(ops)
    save_case("lstm_while_v2", g, [t.name for t in fetches], vals, targets=[train.name], steps=5,
              rtol=1e-4, atol=1e-5, init=init.name)
    v1.disable_control_flow_v2()


def keras_rnn_cases():
    """A Keras model (LSTM, GRU, Dense) frozen the TF2 way
    (convert_variables_to_constants_v2: weights as constants, its While loops
    over TensorLists lowered by TensorFlow into Enter/Merge/Switch): what
    people ship as a frozen TF2 graph. Keras needs eager execution, which
    this process has turned off, so it runs in a child process."""
    code = """
import sys, numpy as np, tensorflow as tf, keras
from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
out = sys.argv[1]
keras.utils.set_random_seed(3)
model = keras.Sequential([keras.Input((7, 3)), keras.layers.LSTM(5, return_sequences=True),
                          keras.layers.GRU(4), keras.layers.Dense(2)])
f = tf.function(lambda x: model(x), input_signature=[tf.TensorSpec([2, 7, 3], tf.float32, name="x")])
frozen = convert_variables_to_constants_v2(f.get_concrete_function())
with open(out + ".pb", "wb") as fh:
    fh.write(frozen.graph.as_graph_def().SerializeToString())
x = np.linspace(-1, 1, 42, dtype=np.float32).reshape(2, 7, 3)
np.save(out + ".feed.x_0.npy", x)
np.save(out + ".expected.0.npy", frozen(tf.constant(x))[0].numpy())
print(frozen.outputs[0].name)
"""
    prefix = os.path.join(OUT, "keras_rnn_frozen")
    done = subprocess.run([sys.executable, "-c", code, prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("freezing the Keras RNN failed:\n" + done.stderr[-3000:])
    fetch = done.stdout.strip().splitlines()[-1]
    CASES.append(dict(name="keras_rnn_frozen", graph=prefix + ".pb", fetches=[fetch],
                      expected=[prefix + ".expected.0.npy"], targets=[], steps=0,
                      feeds={"x:0": prefix + ".feed.x_0.npy"}, rtol=1e-5, atol=1e-6, init="",
                      meta_graph="", restore=""))


def nan_cases():
    """NaN through the ops whose NaN rules differ between libraries:
    Maximum and Minimum, Max and Min reductions (rows long enough for
    vectorized lanes, columns, the whole tensor), ArgMax and ArgMin, ReluGrad
    and Relu6Grad of non-finite gradients."""
    g = tf.Graph()
    with g.as_default():
        rows = np.zeros((3, 64), np.float32)
        rows[0, 0], rows[0, 32], rows[0, 10] = np.nan, 5, -3
        rows[1, 40], rows[1, 7], rows[1, 50] = np.nan, 4, -6
        rows[2, 9], rows[2, 60] = 2, -1
        cols = np.array([[np.nan] * 4, [2, 1, 3, 0], [1, np.nan, 5, 7]], np.float32)
        x, c = tf.constant(rows), tf.constant(cols)
        a, b = tf.constant([1.0, np.nan, 2.0]), tf.constant([np.nan, 1.0, 3.0])
        gr, f = tf.constant([np.inf, np.nan, 2.0, 1.0]), tf.constant([-1.0, 0.0, 1.0, 7.0])
        # ArgMax's scan starts at (0, lowest): -inf and lowest after a NaN
        # never move it.
        lowest = np.finfo(np.float32).min
        e = tf.constant(np.array([[np.nan, -np.inf], [-np.inf, 2], [np.nan, lowest],
                                  [np.nan, np.inf]], np.float32))
        fetches = [tf.maximum(a, b), tf.minimum(a, b),
                   tf.reduce_max(x, axis=1), tf.reduce_min(x, axis=1), tf.reduce_max(x),
                   tf.reduce_max(c, axis=0), tf.reduce_min(c, axis=1),
                   tf.argmax(x, axis=1), tf.argmin(x, axis=1), tf.argmax(c, axis=0),
                   tf.argmin(c, axis=0), tf.argmax(c, axis=1), tf.argmin(c, axis=1),
                   tf.argmax(e, axis=1), tf.argmin(e, axis=1), tf.argmax(e, axis=0),
                   tf.raw_ops.ReluGrad(gradients=gr, features=f),
                   tf.raw_ops.Relu6Grad(gradients=gr, features=f)]
        with v1.Session() as sess:
            vals = sess.run(fetches)
    save_case("nan_rules", g, [t.name for t in fetches], vals, rtol=0, atol=0)


def table_cases():
    """Tables as feature columns use them: a vocabulary from tensors and from
    a file, a mutable table filled by the step, and TF1 feature columns
    (vocabulary list, hash bucket, embedding with its default combiner) fed
    through input_layer."""
    vocab = os.path.join(OUT, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("apple\t3\nbanana\t5\ncherry\t7\n")
    g = tf.Graph()
    with g.as_default():
        words = tf.constant(["banana", "kiwi", "apple"])
        static = v1.lookup.StaticHashTable(
            v1.lookup.KeyValueTensorInitializer(["apple", "cherry"], tf.constant([10, 20], tf.int64)), -1)
        from_file = v1.lookup.StaticHashTable(
            v1.lookup.TextFileInitializer(vocab, tf.string, 0, tf.int64, 1, delimiter="\t"), -7)
        by_line = v1.lookup.StaticHashTable(
            v1.lookup.TextFileInitializer(vocab, tf.string, -2, tf.int64, -1), -7)
        mutable = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.float32)
        insert = tf.raw_ops.LookupTableInsertV2(table_handle=mutable, keys=tf.constant([5, 9], tf.int64),
                                                values=[0.5, 1.5])
        found = tf.raw_ops.LookupTableFindV2(table_handle=mutable, keys=tf.constant([[9, 1]], tf.int64),
                                             default_value=-1.0)
        size = tf.raw_ops.LookupTableSizeV2(table_handle=mutable)
        fc = v1.feature_column
        color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"], default_value=0)
        city = fc.categorical_column_with_hash_bucket("city", 7)
        init = v1.constant_initializer(np.arange(21, dtype=np.float32).reshape(7, 3) / 10.0)
        columns = [fc.embedding_column(color, 3, initializer=v1.constant_initializer(
                       np.arange(9, dtype=np.float32).reshape(3, 3) / 4.0)),
                   fc.embedding_column(city, 3, initializer=init, combiner="sqrtn"),
                   fc.indicator_column(color)]
        features = {"color": tf.constant([["red", "blue"], ["green", ""], ["purple", "red"]]),
                    "city": tf.constant([["paris"], ["tokyo"], [""]])}
        dense = v1.feature_column.input_layer(features, columns)
        setup = tf.group(v1.tables_initializer(), v1.global_variables_initializer(), insert)
        fetches = [static.lookup(words), from_file.lookup(words),
                   by_line.lookup(tf.constant(["cherry\t7", "apple\t3"])), found, size, dense]
        with v1.Session() as sess:
            sess.run(setup)
            vals = sess.run(fetches)
    save_case("tables", g, [t.name for t in fetches], vals, targets=[setup.name], steps=1)


def read_sluice_records(dirname):
    """What TensorFlow parses from Sluice's Fashion-MNIST-style records."""
    files = sorted(os.path.join(dirname, f) for f in os.listdir(dirname) if f.endswith(".tfrecord"))
    images, labels = [], []
    for path in files:
        for rec in tf.compat.v1.io.tf_record_iterator(path):
            e = tf.train.Example.FromString(rec)
            f = e.features.feature
            images.append(np.frombuffer(f["image_raw"].bytes_list.value[0], np.uint8))
            labels.append(f["label"].int64_list.value[0])
    np.save(os.path.join(OUT, "sluice_records.images.npy"), np.stack(images))
    np.save(os.path.join(OUT, "sluice_records.labels.npy"), np.array(labels, np.int64))


def checkpoint_cases():
    """A V2 checkpoint tf.compat.v1.train.Saver writes (dense tensors of four
    dtypes, strings among them, and a variable partitioned in 3 slices),
    restored by a graph of RestoreV2."""
    values = {"dense/kernel": np.arange(12, dtype=np.float32).reshape(3, 4) / 8,
              "global_step": np.int64(1234),
              "vocab": np.array([b"alpha", b"", b"gamma delta"]),
              "scale": np.float64(-2.5)}
    g = tf.Graph()
    with g.as_default():
        vs = [v1.get_variable(k, initializer=tf.constant(v)) for k, v in values.items()]
        # A partitioned variable: TF saves it in slices; restored whole.
        table = np.arange(21, dtype=np.float32).reshape(7, 3) - 5
        values["table"] = table
        vs += list(v1.get_variable("table", initializer=tf.constant(table),
                                   partitioner=v1.fixed_size_partitioner(3)))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            prefix = v1.train.Saver(vs).save(sess, os.path.join(OUT, "tf_ckpt", "model.ckpt"),
                                             global_step=3)
    names = sorted(values)
    g = tf.Graph()
    with g.as_default():
        out = tf.raw_ops.RestoreV2(prefix=tf.constant(prefix), tensor_names=tf.constant(names),
                                   shape_and_slices=tf.constant([""] * len(names)),
                                   dtypes=[tf.as_dtype(np.asarray(values[n]).dtype) for n in names],
                                   name="restore")
    save_case("tf_checkpoint", g, [t.name for t in out], [values[n] for n in names], rtol=0, atol=0)


def meta_graph_cases():
    """A TF1 training run (a linear model, Momentum, a global step) saved at
    step 10 with its MetaGraph (model.ckpt-10.meta + checkpoint); TensorFlow
    goes on to step 20. Sluice's runner imports the .meta, restores the
    checkpoint and runs the train op from the "train_op" collection: its loss
    and weights at step 10 and after 10 more steps must be TensorFlow's."""
    rng = np.random.RandomState(3)
    xv = rng.randn(32, 5).astype(np.float32)
    yv = (xv @ rng.randn(5, 1) + 0.3).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xv, name="x")
        y = tf.constant(yv, name="y")
        w = v1.get_variable("dense/kernel", [5, 1],
                            initializer=v1.glorot_uniform_initializer(seed=1))
        b = v1.get_variable("dense/bias", [1], initializer=v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
        v1.add_to_collection("losses", loss)
        step = v1.train.get_or_create_global_step()
        train = v1.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=step,
                                                               name="train")
        saver = v1.train.Saver()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(10):
                sess.run(train)
            prefix = saver.save(sess, os.path.join(OUT, "tf_meta", "model.ckpt"), global_step=step)
            at10 = sess.run([loss, w, step])
            for _ in range(10):
                sess.run(train)
            at20 = sess.run([loss, w, step])
    meta = v1.train.import_meta_graph(prefix + ".meta", clear_devices=True).export_meta_graph()
    train_op = [n.decode() if isinstance(n, bytes) else n
                for n in meta.collection_def["train_op"].node_list.value][0]
    def value_of(v):  # a resource variable's read, made with it (so in the .meta)
        try:
            return g.get_tensor_by_name(v.op.name + "/Read/ReadVariableOp:0").name
        except KeyError:
            return v.name
    fetches = [loss.name, value_of(w), value_of(step)]
    save_case("meta_restored", g, fetches, at10, meta_graph=prefix + ".meta", restore=prefix,
              rtol=1e-6, atol=1e-7)
    save_case("meta_resumed", g, fetches, at20, targets=[train_op], steps=10,
              meta_graph=prefix + ".meta", restore=prefix, rtol=1e-5, atol=1e-6)


def v1_checkpoint_cases():
    """TensorFlow's V1 checkpoint files both ways. v1_meta_resumed: a TF1 run
    (a partitioned weight, Momentum, a global step) on two CPU devices saved
    at step 10 by a sharded V1 saver (one file per device, restored through
    the glob ShardedFilespec makes); Sluice's runner imports the .meta,
    restores and runs 10 more steps: TensorFlow's loss and weights at step 20.
    v1_save: a graph whose Save and SaveSlices write V1 files, run by
    Sluice; conformance_test.py then has TensorFlow restore them."""
    rng = np.random.RandomState(5)
    xv = rng.randn(32, 6).astype(np.float32)
    yv = (xv @ rng.randn(6, 1) - 0.2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xv, name="x")
        y = tf.constant(yv, name="y")
        with tf.device("/cpu:0"):
            w = v1.get_variable("dense/kernel", [6, 1],
                                initializer=v1.glorot_uniform_initializer(seed=2),
                                partitioner=v1.fixed_size_partitioner(2), use_resource=False)
            step = v1.train.get_or_create_global_step()
        with tf.device("/cpu:1"):
            b = v1.get_variable("dense/bias", [1], initializer=v1.zeros_initializer(),
                                use_resource=False)
        loss = tf.reduce_mean(tf.square(tf.matmul(x, tf.concat(list(w), 0)) + b - y),
                              name="loss")
        train = v1.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=step,
                                                               name="train")
        saver = v1.train.Saver(write_version=v1.train.SaverDef.V1, sharded=True)
        os.makedirs(os.path.join(OUT, "tf_v1"), exist_ok=True)
        with v1.Session(config=v1.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(10):
                sess.run(train)
            prefix = saver.save(sess, os.path.join(OUT, "tf_v1", "model.ckpt"), global_step=step)
            for _ in range(10):
                sess.run(train)
            at20 = sess.run([loss, b, step])
    assert prefix.endswith("-?????-of-00002"), prefix
    shards = sorted(f for f in os.listdir(os.path.join(OUT, "tf_v1")) if "-of-" in f)
    assert len(shards) == 2, shards
    meta = prefix[:-len("-?????-of-00002")] + ".meta"
    step_value = g.get_tensor_by_name(step.op.name + "/Read/ReadVariableOp:0")  # in the .meta
    save_case("v1_meta_resumed", g, [loss.name, b.name, step_value.name], at20, targets=["train"],
              steps=10, meta_graph=meta, restore=prefix, rtol=1e-5, atol=1e-6,
              runner_args=["--virtual_cpus=2"])

    values = {"f": np.array([[1.5, -2], [3, 4.25]], np.float32),
              "i64": np.array([1 << 40, -3], np.int64),
              "s": np.array([b"a", b"", b"xyz"]),
              "h": np.array([0.5, -1.25], np.float16),
              "u8": np.array([0, 255], np.uint8),
              "flag": np.array(True)}
    g = tf.Graph()
    with g.as_default():
        names = sorted(values)
        tf.raw_ops.Save(filename=os.path.join(OUT, "sluice_v1.ckpt"), tensor_names=names,
                        data=[tf.constant(values[n]) for n in names], name="save")
        # Rows 2..3 of a [4, 2] tensor: a partitioned variable's part.
        tf.raw_ops.SaveSlices(filename=os.path.join(OUT, "sluice_v1_part.ckpt"),
                              tensor_names=["part"], shapes_and_slices=["4 2 2,2:-"],
                              data=[tf.constant([[5.0, 6.0], [7.0, 8.0]])], name="save_part")
        done = tf.constant(1, name="done")
    save_case("v1_save", g, [done.name], [np.int32(1)], targets=["save", "save_part"], steps=1)
    for n, v in values.items():
        save_npy(os.path.join(OUT, "sluice_v1.%s.expected.npy" % n), v)


SAVED_MODELS = {}


def saved_model_cases():
    """SavedModels TensorFlow writes, for Sluice's runner to serve: a TF1 one
    (SavedModelBuilder: variables, a predict signature, class names from a
    vocabulary asset through a table its main op fills) and a TF2 one
    (tf.saved_model.save of a module whose signature is a tf.function)."""
    w = (np.arange(12, dtype=np.float32).reshape(4, 3) % 5) * 0.25 - 0.5
    b = np.array([0.1, -0.1, 0.0], np.float32)
    images = np.array([[1, 0, 2, -1], [0.5, 3, -2, 1], [-1, -1, 0, 4], [2, 2, 2, 2]], np.float32)
    np.save(os.path.join(OUT, "sm_images.npy"), images)
    vocab = os.path.join(OUT, "sm_classes.txt")
    with open(vocab, "w") as f:
        f.write("cat\ndog\nbird\n")
    d1 = os.path.join(OUT, "tf1_saved_model")
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [None, 4], name="images")
        kernel = v1.get_variable("dense/kernel", initializer=tf.constant(w))
        bias = v1.get_variable("dense/bias", initializer=tf.constant(b))
        logits = tf.matmul(x, kernel) + bias
        probs = tf.nn.softmax(logits, name="probabilities")
        classes = tf.argmax(logits, 1, name="classes")
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(vocab, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER,
                                          tf.string, tf.lookup.TextFileIndex.WHOLE_LINE), "?")
        names = table.lookup(classes)
        with v1.Session() as sess:
            sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
            out = sess.run({"probabilities": probs, "classes": classes, "names": names},
                           {x: images})
            builder = v1.saved_model.builder.SavedModelBuilder(d1)
            sig = v1.saved_model.signature_def_utils.predict_signature_def(
                {"images": x}, {"probabilities": probs, "classes": classes, "names": names})
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": sig},
                assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS),
                main_op=v1.tables_initializer(), strip_default_attrs=True)
            builder.save()
    os.remove(vocab)  # the model must read the copy in its assets/
    SAVED_MODELS["tf1"] = dict(dir=d1, expected=save_outputs("sm_tf1", out))

    # TF2 saving needs eager execution, which this process has turned off.
    d2 = os.path.join(OUT, "tf2_saved_model")
    code = """
import sys, numpy as np, tensorflow as tf
d, w, b, images, out = sys.argv[1:6]
w, b, images = np.load(w), np.load(b), np.load(images)

class Classifier(tf.Module):
    def __init__(self):
        super().__init__()
        self.kernel = tf.Variable(w)
        self.bias = tf.Variable(b)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="images")])
    def __call__(self, images):
        logits = tf.matmul(images, self.kernel) + self.bias
        return {"probabilities": tf.nn.softmax(logits), "classes": tf.argmax(logits, 1)}

m = Classifier()
tf.saved_model.save(m, d, signatures=m.__call__)
for k, v in m(tf.constant(images)).items():
    np.save(out + "." + k + ".npy", v.numpy())
"""
    np.save(os.path.join(OUT, "sm_w.npy"), w)
    np.save(os.path.join(OUT, "sm_b.npy"), b)
    prefix = os.path.join(OUT, "sm_tf2.expected")
    subprocess.run([sys.executable, "-c", code, d2, os.path.join(OUT, "sm_w.npy"),
                    os.path.join(OUT, "sm_b.npy"), os.path.join(OUT, "sm_images.npy"), prefix],
                   check=True, capture_output=True)
    SAVED_MODELS["tf2"] = dict(dir=d2, expected={k: "%s.%s.npy" % (prefix, k)
                                                 for k in ("probabilities", "classes")})

    # A TF2 model whose signature loops (tf.while_loop in a tf.function: a
    # While over a TensorArray, i.e. TensorLists; autograph would need the
    # source, which `python -c` has not) and branches (tf.cond: an If).
    d3 = os.path.join(OUT, "tf2_loop_saved_model")
    code = """
import sys, numpy as np, tensorflow as tf
d, images, out = sys.argv[1:4]
images = np.load(images)

class Recurrent(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(np.array([0.5, -0.25, 0.75], np.float32))
        self.k = tf.Variable(np.array([[0.2, -0.1, 0.3]], np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="images")])
    def __call__(self, images):
        def step(t, h, states):
            h = tf.tanh(h * self.a + images[:, t:t + 1] * self.k)
            return t + 1, h, states.write(t, h)

        _, h, states = tf.while_loop(
            lambda t, h, states: t < 4, step,
            [tf.constant(0), tf.zeros([tf.shape(images)[0], 3]), tf.TensorArray(tf.float32, size=4)])
        total = tf.reduce_sum(h)
        scaled = tf.cond(total > 0, lambda: h * 2.0, lambda: -h)
        return {"states": tf.transpose(states.stack(), [1, 0, 2]), "scaled": scaled}

m = Recurrent()
tf.saved_model.save(m, d, signatures=m.__call__)
for k, v in m(tf.constant(images)).items():
    np.save(out + "." + k + ".npy", v.numpy())
"""
    prefix = os.path.join(OUT, "sm_tf2_loop.expected")
    done = subprocess.run([sys.executable, "-c", code, d3, os.path.join(OUT, "sm_images.npy"),
                           prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("saving the looping TF2 model failed:\n" + done.stderr[-3000:])
    SAVED_MODELS["tf2_loop"] = dict(dir=d3, rtol=1e-5, atol=1e-6,
                                    expected={k: "%s.%s.npy" % (prefix, k)
                                              for k in ("states", "scaled")})

    # A tf.Module saved without signatures, called by object path (as
    # obj.f(x) after tf.saved_model.load): a nested module's method that
    # counts its calls, and a method returning a dict holding a tuple.
    d4 = os.path.join(OUT, "tf2_module_saved_model")
    code = """
import sys, numpy as np, tensorflow as tf
d, images, out = sys.argv[1:4]
images = np.load(images)

class Scaler(tf.Module):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable(np.array([1.5, -0.5, 2.0, 0.25], np.float32))
        self.calls = tf.Variable(0, dtype=tf.int64)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def scale(self, x):
        self.calls.assign_add(1)
        return x * self.factor

class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.scaler = Scaler()
        self.kernel = tf.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features"),
                                  tf.TensorSpec([], tf.float32, name="temperature")])
    def predict(self, features, temperature):
        logits = tf.matmul(self.scaler.scale(features), self.kernel) / temperature
        return {"logits": logits, "parts": (tf.argmax(logits, 1), self.scaler.calls.read_value())}

m = Model()
m.scaler.scale(tf.constant(images))
tf.saved_model.save(m, d)
loaded = tf.saved_model.load(d)
got = loaded.predict(tf.constant(images), tf.constant(0.5))
np.save(out + ".logits.npy", got["logits"].numpy())
np.save(out + ".parts_0.npy", got["parts"][0].numpy())
np.save(out + ".parts_1.npy", got["parts"][1].numpy())
"""
    prefix = os.path.join(OUT, "sm_tf2_module.expected")
    done = subprocess.run([sys.executable, "-c", code, d4, os.path.join(OUT, "sm_images.npy"),
                           prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("saving the TF2 module failed:\n" + done.stderr[-3000:])
    temperature = os.path.join(OUT, "sm_temperature.npy")
    np.save(temperature, np.float32(0.5))
    SAVED_MODELS["tf2_module"] = dict(
        dir=d4, function="predict", rtol=1e-5, atol=1e-6,
        inputs={"features": os.path.join(OUT, "sm_images.npy"), "temperature": temperature},
        expected={k: "%s.%s.npy" % (prefix, k) for k in ("logits", "parts_0", "parts_1")})

    # A Keras 3 model saved by tf.saved_model.save: its serving function
    # captures variable handles that the MetaGraph's saver does not restore
    # (that fills others); TF2's loader binds them through the object graph.
    keras_saved_model("keras", """
x = keras.Input((4,))
h = keras.layers.BatchNormalization()(keras.layers.Dense(8, activation="relu")(x))
model = keras.Model(x, keras.layers.Dense(3, activation="softmax")(h))
model.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy")
train = np.random.RandomState(5).randn(64, 4).astype(np.float32)
model.fit(train, (train[:, 0] > 0).astype(np.int32) + (train[:, 1] > 0), epochs=3, verbose=0)
""")
    # A Keras transformer block saved the same way: MultiHeadAttention's
    # products are Einsums, which Sluice lowers into BatchMatMulV2s.
    keras_saved_model("keras_attention", """
L = keras.layers
x = keras.Input((4,))
h = L.Reshape((2, 2))(x)
h = L.LayerNormalization()(h + L.MultiHeadAttention(num_heads=2, key_dim=3)(h, h))
h = L.Dense(2, activation="gelu")(h)
model = keras.Model(x, L.Dense(3, activation="softmax")(L.Flatten()(h)))
""")

    # Keras preprocessing inside the model: Discretization (Bucketize),
    # CategoryEncoding's count and multi_hot modes (DenseBincount),
    # IntegerLookup (a hash table) and Hashing.
    keras_saved_model("keras_category", """
L = keras.layers
x = keras.Input((4,))
ids = L.Discretization(bin_boundaries=[-0.5, 0.0, 0.5])(x)
counts = L.CategoryEncoding(num_tokens=4, output_mode="count")(ids)
multi = L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")(ids)
looked = L.IntegerLookup(vocabulary=[3, 1, 2], output_mode="multi_hot")(ids)
hashed = L.Hashing(num_bins=5, output_mode="count")(ids)
model = keras.Model(x, L.Dense(3)(L.Concatenate()([counts, multi, looked, hashed, x])))
""")


def keras_saved_model(name, build):
    """Runs `build` (Python defining `model` on 4 features) in a process of
    its own (TF2 saving needs eager execution), saves the model with
    tf.saved_model.save and records TensorFlow's outputs on sm_images."""
    d = os.path.join(OUT, name + "_saved_model")
    prefix = os.path.join(OUT, "sm_%s.expected" % name)
    code = """
import sys, numpy as np, tensorflow as tf, keras
d, images, out = sys.argv[1:4]
images = np.load(images)
keras.utils.set_random_seed(5)
""" + build + """
tf.saved_model.save(model, d)
np.save(out + ".output_0.npy", model(images, training=False).numpy())
"""
    done = subprocess.run([sys.executable, "-c", code, d, os.path.join(OUT, "sm_images.npy"),
                           prefix], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("saving Keras model %s failed:\n%s" % (name, done.stderr[-3000:]))
    SAVED_MODELS[name] = dict(dir=d, input_key="inputs", rtol=1e-5, atol=1e-6,
                              expected={"output_0": prefix + ".output_0.npy"})


def save_outputs(name, outputs):
    paths = {}
    for k, v in outputs.items():
        p = os.path.join(OUT, "%s.expected.%s.npy" % (name, k))
        save_npy(p, v)
        paths[k] = p
    return paths


def read_sluice_saved_model(dirname):
    """TensorFlow's loader on the SavedModel Sluice wrote: its signature's
    outputs on the batch Sluice saved beside it."""
    g = tf.Graph()
    with g.as_default(), v1.Session() as sess:
        meta = v1.saved_model.loader.load(sess, ["serve"], os.path.join(dirname, "model"))
        sig = meta.signature_def["serving_default"]
        feeds = {sig.inputs["images"].name: np.load(os.path.join(dirname, "images.npy"))}
        for k, v in sig.outputs.items():
            save_npy(os.path.join(OUT, "sluice_sm.%s.npy" % k), sess.run(v.name, feeds))
    # TF2's tf.saved_model.load (eager: in a process of its own).
    code = """
import sys, numpy as np, tensorflow as tf
d, images, out = sys.argv[1:4]
m = tf.saved_model.load(d)
f = m.signatures["serving_default"]
for k, v in f(images=tf.constant(np.load(images))).items():
    a = v.numpy()
    np.save(out + "." + k + ".npy", a.astype("S") if a.dtype == object else a)
"""
    subprocess.run([sys.executable, "-c", code, os.path.join(dirname, "model"),
                    os.path.join(dirname, "images.npy"), os.path.join(OUT, "sluice_sm_v2")],
                   check=True, capture_output=True)


def read_sluice_checkpoint(prefix):
    """What TensorFlow reads from a checkpoint Sluice's BundleWriter wrote."""
    r = v1.train.load_checkpoint(prefix)
    names = sorted(r.get_variable_to_shape_map())
    for n in names:
        save_npy(os.path.join(OUT, "sluice_ckpt.%s.npy" % n), r.get_tensor(n))
    with open(os.path.join(OUT, "sluice_ckpt.names.json"), "w") as f:
        json.dump(names, f)


def read_sluice_saver_checkpoint(dirname):
    """What TensorFlow makes of the directory Sluice's Saver wrote: the
    latest checkpoint by its state file, every tensor by load_checkpoint, and
    the 3-part table restored by a TF Saver into 2 parts."""
    state = tf.train.get_checkpoint_state(dirname)
    latest = v1.train.latest_checkpoint(dirname)
    r = v1.train.load_checkpoint(latest)
    names = sorted(r.get_variable_to_shape_map())
    for n in names:
        np.save(os.path.join(OUT, "sluice_saver.%s.npy" % n.replace("/", "_")), r.get_tensor(n))
    g = tf.Graph()
    with g.as_default():
        emb = v1.get_variable("emb", shape=[7, 3], initializer=v1.zeros_initializer(),
                              partitioner=v1.fixed_size_partitioner(2))
        step = v1.get_variable("global_step", shape=[], dtype=tf.int64,
                               initializer=v1.zeros_initializer())
        saver = v1.train.Saver([emb, step])
        with v1.Session() as sess:
            saver.restore(sess, latest)
            parts = sess.run(list(emb))
            np.save(os.path.join(OUT, "sluice_saver.emb_in_2_parts.npy"), np.concatenate(parts))
            np.save(os.path.join(OUT, "sluice_saver.emb_part_rows.npy"),
                    np.array([p.shape[0] for p in parts]))
            np.save(os.path.join(OUT, "sluice_saver.restored_step.npy"), sess.run(step))
    with open(os.path.join(OUT, "sluice_saver.json"), "w") as f:
        json.dump(dict(names=names, latest=os.path.basename(latest),
                       all=[os.path.basename(p) for p in state.all_model_checkpoint_paths]), f)


def main():
    os.makedirs(OUT, exist_ok=True)
    paths = write_records()
    pipeline_cases(paths)
    parse_cases()
    image_cases()
    image_file_cases()
    summary_cases()
    generator_cases()
    slice_assign_cases()
    fake_quant_cases()
    compat_op_cases()
    bmp_cases()
    max_pool_second_order_cases()
    patch_cases()
    max_pool_cases()
    function_cases()
    symbolic_gradient_cases()
    text_cases()
    segment_reduction_cases()
    elementwise_extra_cases()
    search_and_histogram_cases()
    color_cases()
    categorical_cases()
    distribution_cases()
    special_function_cases()
    ctc_cases()
    projective_transform_cases()
    small_compat_cases()
    scatter_cases()
    scatter_nd_cases()
    composite_cases()
    counting_and_diag_cases()
    stateless_random_cases()
    linalg_cases()
    linalg_factor_cases()
    nms_cases()
    resize_cases()
    feature_column_cases()
    sparse_tensor_cases()
    table_cases()
    sparse_more_cases()
    wide_and_deep_cases()
    sampled_softmax_cases()
    optimizer_op_cases()
    control_flow_v2_cases()
    keras_rnn_cases()
    nan_cases()
    checkpoint_cases()
    meta_graph_cases()
    v1_checkpoint_cases()
    saved_model_cases()
    if len(sys.argv) > 2:
        read_sluice_records(sys.argv[2])
    if len(sys.argv) > 3:
        read_sluice_checkpoint(sys.argv[3])
    if len(sys.argv) > 4:
        read_sluice_saver_checkpoint(sys.argv[4])
    if len(sys.argv) > 5:
        read_sluice_saved_model(sys.argv[5])
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(dict(tensorflow=tf.__version__, cases=CASES, saved_models=SAVED_MODELS), f,
                  indent=1)


if __name__ == "__main__":
    main()
