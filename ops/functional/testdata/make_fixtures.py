"""Writes TensorFlow-made graphs that call functions, with TF's results.

Run with TensorFlow's CPU wheel (2.21) from ops/functional/testdata:
    python3 make_fixtures.py .
Each case: <name>.pbtxt (the GraphDef) and <name>.expected.txt (feeds and
fetches with TensorFlow's values, one "name value value ..." per line).
"""
import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import function as tf1_function

v1 = tf.compat.v1
OUT = sys.argv[1]


def save(name, graph, feeds, fetches, values, first_run=(), binary=False):
    if binary:  # larger graphs: <name>.pb
        with open(os.path.join(OUT, name + ".pb"), "wb") as f:
            f.write(graph.as_graph_def().SerializeToString())
    else:
        with open(os.path.join(OUT, name + ".pbtxt"), "w") as f:
            f.write("# Written by make_fixtures.py with TensorFlow %s.\n" % tf.__version__)
            f.write(str(graph.as_graph_def()))
    with open(os.path.join(OUT, name + ".expected.txt"), "w") as f:
        for target in first_run:
            f.write("run %s\n" % target)
        for k, v in feeds.items():
            f.write("feed %s %s\n" % (k, " ".join(repr(float(x)) for x in np.ravel(v))))
        for k, v in zip(fetches, values):
            f.write("fetch %s %s\n" % (k, " ".join(repr(float(x)) for x in np.ravel(v))))


def tf_function_with_gradient():
    @tf.function
    def affine(x, w):
        return tf.matmul(x, w) + 1.0, tf.reduce_sum(x)

    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [2, 3], name="x")
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
        y, s = affine(x, w)
        y = tf.identity(y, name="y")
        s = tf.identity(s, name="s")
        loss = tf.reduce_sum(y * y) + s
        gx = tf.identity(tf.gradients(loss, x)[0], name="gx")
        feed = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32)
        with v1.Session() as sess:
            vals = sess.run([y, s, gx], {x: feed})
    save("tf_function_grad", g, {"x:0": feed}, ["y:0", "s:0", "gx:0"], vals)


def defun_call():
    # (Defun's gradient is a SymbolicGradient node, which Sluice lacks.)
    @tf1_function.Defun(tf.float32, tf.float32)
    def add_mul(x, y):
        return x + y, (x + y) * y

    g = tf.Graph()
    with g.as_default():
        a = v1.placeholder(tf.float32, [3], name="a")
        b = v1.placeholder(tf.float32, [3], name="b")
        s, p = add_mul(a, b)
        p = tf.identity(p, name="p")
        s = tf.identity(s, name="s")
        fa = np.array([1.0, 2.0, -3.0], np.float32)
        fb = np.array([0.5, -1.0, 2.0], np.float32)
        with v1.Session() as sess:
            vals = sess.run([s, p], {a: fa, b: fb})
    save("defun_call", g, {"a:0": fa, "b:0": fb}, ["s:0", "p:0"], vals)


def control_flow_v2():
    # TF2's functional control flow in a graph: tf.while_loop, tf.cond and
    # tf.switch_case write StatelessWhile, StatelessIf and StatelessCase
    # nodes whose cond, body and branches are library functions; a
    # tf.function holding a loop that updates a variable writes While (it is
    # stateful) inside the called function.
    v1.enable_control_flow_v2()
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, [3], name="x")
        k = v1.placeholder(tf.float32, [], name="k")

        def body(i, acc):
            return i + 1, acc * 0.5 + tf.sin(acc) * x

        _, y = tf.while_loop(lambda i, a: i < 4, body, [tf.constant(0), x])
        y = tf.identity(y, name="y")
        c = tf.cond(tf.reduce_sum(x) * k > 0, lambda: y * 2.0, lambda: -y)
        c = tf.identity(c, name="c")
        index = tf.cast(k, tf.int32)
        s = tf.switch_case(index, [lambda: c, lambda: c + 1.0, lambda: c * 3.0])
        s = tf.identity(s, name="s")

        v = tf.Variable(1.0, name="v", use_resource=True)

        @tf.function
        def grow(limit):
            n = tf.constant(0.0)
            while v < limit:  # autograph: a While (stateful: it writes v)
                v.assign(v * 2.0)
                n += 1.0
            return n

        steps = tf.identity(grow(k * 10.0), name="steps")
        with tf.control_dependencies([steps]):
            after = tf.identity(v.read_value(), name="after")
        init = v1.global_variables_initializer()
        assert init.name == "init", init.name
        fx = np.array([0.5, -1.0, 2.0], np.float32)
        fk = np.array(1.0, np.float32)
        with v1.Session() as sess:
            sess.run(init)
            vals = sess.run([y, c, s, steps, after], {x: fx, k: fk})
    ops = sorted(set(n.op for n in g.as_graph_def().node))
    assert "StatelessWhile" in ops and "StatelessIf" in ops and "StatelessCase" in ops, ops
    save("control_flow_v2", g, {"x:0": fx, "k:0": fk},
         ["y:0", "c:0", "s:0", "steps:0", "after:0"], vals, first_run=["init"])
    v1.disable_control_flow_v2()


def control_flow_v2_grad():
    # A small RNN as TF2 writes it: the input unstacked into a TensorArray
    # (TensorListFromTensor), read per step (TensorListGetItem), the states
    # written to another (TensorListReserve, TensorListSetItem) and stacked
    # (TensorListStack), in a StatelessWhile; tf.gradients of it is a second
    # While whose accumulators are TensorLists (EmptyTensorList,
    # TensorListPushBack, TensorListPopBack).
    v1.enable_control_flow_v2()
    g = tf.Graph()
    with g.as_default():
        xs = v1.placeholder(tf.float32, [4, 2, 3], name="xs")  # time, batch, features
        w = tf.constant(np.linspace(-0.5, 0.5, 9, dtype=np.float32).reshape(3, 3))
        u = tf.constant(np.linspace(0.3, -0.3, 9, dtype=np.float32).reshape(3, 3))
        inputs = tf.TensorArray(tf.float32, size=4).unstack(xs)
        states = tf.TensorArray(tf.float32, size=4)

        def body(t, h, states):
            h = tf.tanh(tf.matmul(inputs.read(t), w) + tf.matmul(h, u))
            return t + 1, h, states.write(t, h)

        _, h, states = tf.while_loop(lambda t, h, s: t < 4, body,
                                     [tf.constant(0), tf.zeros([2, 3]), states])
        hs = tf.identity(states.stack(), name="hs")
        loss = tf.reduce_sum(hs * hs) + tf.reduce_sum(h)
        gx = tf.identity(tf.gradients(loss, xs)[0], name="gx")
        fx = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(4, 2, 3)
        with v1.Session() as sess:
            vals = sess.run([hs, gx], {xs: fx})
    ops = sorted(set(n.op for n in g.as_graph_def().node))
    for f in g.as_graph_def().library.function:
        ops += [n.op for n in f.node_def]
    print("control_flow_v2_grad ops:", sorted(set(ops)))
    save("control_flow_v2_grad", g, {"xs:0": fx}, ["hs:0", "gx:0"], vals)
    v1.disable_control_flow_v2()


def keras_training_step(name, model, x, y, loss_fn, freeze=False):
    """Saves the training step of a Keras 3 `model` as TF2 traces it: a
    tf.function whose arguments are the batch and the weights
    (Model.stateless_call), returning the loss and GradientTape's gradient of
    it for each weight. Feeds x:0, y:0, w_i:0; fetches the loss, then
    d loss / d w_i. `freeze`: variables the layers read themselves (a seed
    generator's state) become constants, as TensorFlow's freezing does."""
    weights = [v.value for v in model.trainable_variables]
    state = [v.value for v in model.non_trainable_variables]
    specs = [tf.TensorSpec(x.shape, x.dtype), tf.TensorSpec(y.shape, y.dtype)]
    specs += [tf.TensorSpec(w.shape, tf.float32) for w in weights]

    @tf.function(input_signature=specs)
    def step(x, y, *w):
        with tf.GradientTape() as tape:
            tape.watch(w)
            p, _ = model.stateless_call(list(w), state, x, training=True)
            loss = loss_fn(y, p)
        return [loss] + list(tape.gradient(loss, w))

    w = [np.asarray(v) for v in weights]
    values = [np.asarray(v) for v in step(x, y, *w)]
    fn = step.get_concrete_function()
    if freeze:
        from tensorflow.python.framework.convert_to_constants import (
            convert_variables_to_constants_v2)
        fn = convert_variables_to_constants_v2(fn)
    feeds = {"x:0": x, "y:0": y}
    feeds.update({"w_%d:0" % i: v for i, v in enumerate(w)})
    save(name, fn.graph, feeds, [t.name for t in fn.outputs], values, binary=True)


def mean_squared_error(y, p):
    return tf.reduce_mean(tf.square(p - y))


def keras_rnn_grad():
    # LSTM, GRU, Dense: each recurrent layer a StatelessWhile (Keras picks
    # its own loop, not cuDNN's, on a CPU: the graph TensorFlow runs
    # everywhere without cuDNN), its gradient a second StatelessWhile over
    # TensorList accumulators.
    import keras
    keras.utils.set_random_seed(1)
    inp = keras.Input((6, 3), batch_size=4)
    h = keras.layers.LSTM(8, return_sequences=True)(inp)
    h = keras.layers.GRU(5)(h)
    model = keras.Model(inp, keras.layers.Dense(2)(h))
    rng = np.random.RandomState(3)
    keras_training_step("keras_rnn_grad", model, rng.randn(4, 6, 3).astype(np.float32),
                        rng.randn(4, 2).astype(np.float32), mean_squared_error)


def keras_attention_grad():
    # A transformer block (MultiHeadAttention, whose products are Einsums;
    # LayerNormalization; a GELU feed-forward): GradientTape's gradients are
    # Einsums with other equations, with the reductions and reshapes of
    # TensorFlow's Einsum gradient.
    import keras
    keras.utils.set_random_seed(4)
    L = keras.layers
    x = keras.Input((5, 8), batch_size=2)
    a = L.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
    h = L.LayerNormalization()(x + a)
    f = L.Dense(8)(L.Dense(16, activation="gelu")(h))
    h = L.GlobalAveragePooling1D()(L.LayerNormalization()(h + f))
    model = keras.Model(x, L.Dense(3)(h))
    rng = np.random.RandomState(6)
    keras_training_step("keras_attention_grad", model, rng.randn(2, 5, 8).astype(np.float32),
                        rng.randn(2, 3).astype(np.float32), mean_squared_error)


def keras_dropout_grad():
    # A CNN with two Dropouts: the masks are stateless Philox draws
    # (StatelessRandomGetKeyCounter, StatelessRandomUniformV2) from the seed
    # generator's state, so the loss and gradients are TensorFlow's only if
    # the draws are bit for bit.
    import keras
    keras.utils.set_random_seed(7)
    L = keras.layers
    x = keras.Input((8, 8, 1), batch_size=4)
    h = L.MaxPooling2D()(L.Conv2D(4, 3, activation="relu")(x))
    h = L.Dropout(0.5)(L.Flatten()(h))
    model = keras.Model(x, L.Dense(3)(L.Dropout(0.25)(L.Dense(6, activation="relu")(h))))
    keras_training_step(
        "keras_dropout_grad", model,
        np.random.RandomState(8).randn(4, 8, 8, 1).astype(np.float32),
        np.array([0, 2, 1, 2], np.int32),
        lambda y, p: tf.reduce_mean(
            keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True)),
        freeze=True)


os.makedirs(OUT, exist_ok=True)
tf_function_with_gradient()
defun_call()
control_flow_v2()
control_flow_v2_grad()
keras_rnn_grad()
keras_attention_grad()
keras_dropout_grad()
