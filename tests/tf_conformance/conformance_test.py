#!/usr/bin/env python3
"""Sluice against TensorFlow itself: TensorFlow (tf_side.py, under a Python
that has it) writes records, Examples, images and GraphDefs of input
pipelines and function calls with its own results; Sluice's runner runs the
same graphs and must give the same tensors. Also the other direction:
records Sluice's converter wrote are read back by TensorFlow.

TensorFlow is found as $SLUICE_TF_PYTHON, else ~/.cache/sluice-tf-venv (made
by tests/tf_conformance/setup_tf.sh, which CI runs). Without it every case
is skipped, saying so.
"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def runfile(path):
    """A data dependency's path under bazel test, or in the source tree."""
    base = os.environ.get("TEST_SRCDIR")
    if base:
        for ws in ("sluice", "__main__"):
            p = os.path.join(base, ws, path)
            if os.path.exists(p):
                return p
    return os.path.join(HERE, "..", "..", "bazel-bin", path)


def tf_python():
    env = os.environ.get("SLUICE_TF_PYTHON")
    if env:
        return env
    # The user's real home: Bazel may point $HOME elsewhere for tests.
    home = pwd.getpwuid(os.getuid()).pw_dir
    p = os.path.join(home, ".cache", "sluice-tf-venv", "bin", "python")
    return p if os.path.exists(p) else None


PY = tf_python()
SKIP = "TensorFlow is absent: run tests/tf_conformance/setup_tf.sh (or set $SLUICE_TF_PYTHON)"


@unittest.skipIf(PY is None, SKIP)
class TensorFlowConformanceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sluice-tf-conformance-")
        records = os.path.join(cls.dir, "sluice_records")
        os.makedirs(records)
        # Records Sluice writes, from a tiny IDX dataset.
        idx = os.path.join(cls.dir, "idx")
        os.makedirs(idx)
        cls.images = (np.arange(5 * 4 * 3) % 251).astype(np.uint8).reshape(5, 4, 3)
        cls.labels = np.array([3, 1, 4, 1, 5], np.uint8)
        write_idx(os.path.join(idx, "tiny-images-idx3-ubyte"), cls.images, 0x08)
        write_idx(os.path.join(idx, "tiny-labels-idx1-ubyte"), cls.labels, 0x08)
        subprocess.run([runfile("tools/idx_to_tfrecord"),
                        "--images=" + os.path.join(idx, "tiny-images-idx3-ubyte"),
                        "--labels=" + os.path.join(idx, "tiny-labels-idx1-ubyte"),
                        "--out=" + os.path.join(records, "tiny"), "--shards=2"],
                       check=True, capture_output=True)
        # A checkpoint Sluice's BundleWriter writes, for TensorFlow to read.
        ckpt = os.path.join(cls.dir, "sluice_ckpt")
        os.makedirs(ckpt)
        subprocess.run([runfile("runtime/io/write_test_bundle"), os.path.join(ckpt, "model.ckpt-5")],
                       check=True, capture_output=True)
        # Two checkpoints Sluice's Saver writes (sharded, a partitioned table).
        saver_dir = os.path.join(cls.dir, "sluice_saver")
        subprocess.run([runfile("training/checkpoint/write_test_checkpoint"), saver_dir],
                       check=True, capture_output=True)
        # A SavedModel Sluice writes, with its outputs on a batch beside it.
        cls.sluice_sm = os.path.join(cls.dir, "sluice_saved_model")
        subprocess.run([runfile("training/checkpoint/write_test_saved_model"), cls.sluice_sm],
                       check=True, capture_output=True)
        os.remove(os.path.join(cls.sluice_sm, "classes.txt"))  # TF must read the asset copy
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        done = subprocess.run([PY, os.path.join(HERE, "tf_side.py"), cls.dir, records,
                               os.path.join(ckpt, "model.ckpt-5"), saver_dir, cls.sluice_sm],
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError("tf_side.py failed:\n" + done.stderr[-4000:])
        with open(os.path.join(cls.dir, "cases.json")) as f:
            cls.manifest = json.load(f)
        print("TensorFlow %s wrote %d cases" % (cls.manifest["tensorflow"], len(cls.manifest["cases"])),
              file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_case(self, name):
        case = next(c for c in self.manifest["cases"] if c["name"] == name)
        out = os.path.join(self.dir, name + ".sluice")
        os.makedirs(out, exist_ok=True)
        argv = [runfile("tools/runner"), "--fetch=" + ",".join(case["fetches"]), "--out_dir=" + out]
        argv += case.get("runner_args", [])
        if case.get("meta_graph"):
            argv += ["--meta_graph=" + case["meta_graph"], "--restore=" + case["restore"]]
        else:
            argv.append("--graph=" + case["graph"])
        if case.get("init"):
            argv.append("--init=" + case["init"])
        if case["targets"]:
            argv += ["--target=" + ",".join(case["targets"]), "--steps=%d" % case["steps"]]
        for k, v in case["feeds"].items():
            argv.append("--feed=%s=%s" % (k, v))
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, "%s: runner failed:\n%s" % (name, done.stderr[-3000:]))
        files = sorted(f for f in os.listdir(out) if f.endswith(".npy"))
        for i, fetch in enumerate(case["fetches"]):
            expected = np.load(case["expected"][i], allow_pickle=True)
            got = np.load(os.path.join(out, fetch_file(fetch)), allow_pickle=True)
            msg = "%s: fetch %s (Sluice wrote %s)" % (name, fetch, files)
            self.assertEqual(got.shape, expected.shape, msg)
            if expected.dtype.kind in "SUO":
                self.assertEqual([to_bytes(x) for x in got.ravel()],
                                 [to_bytes(x) for x in expected.ravel()], msg)
            else:
                self.assertEqual(got.dtype, expected.dtype, msg)
                np.testing.assert_allclose(got, expected, rtol=case["rtol"], atol=case["atol"],
                                           err_msg=msg)

    def test_pipeline_plain_records(self):
        self.run_case("pipeline_plain")

    def test_pipeline_gzip_records(self):
        self.run_case("pipeline_gzip")

    def test_pipeline_zlib_records(self):
        self.run_case("pipeline_zlib")

    def test_pipeline_filter_skip_take_repeat_zip_batch(self):
        self.run_case("pipeline_range_ops")

    def test_pipeline_padded_batch(self):
        self.run_case("pipeline_padded_batch")

    def test_pipeline_interleave(self):
        self.run_case("pipeline_interleave")

    def test_parse_example(self):
        self.run_case("parse_example")

    def test_decode_csv(self):
        self.run_case("decode_csv")

    def test_decode_raw(self):
        self.run_case("decode_raw")

    def test_images(self):
        self.run_case("images")

    def test_jpeg_files_cropped_by_distorted_boxes_encoded_serialized_and_formatted(self):
        self.run_case("image_files")

    def test_tensorboard_summaries_written_as_tensorflow_writes_them(self):
        case = next((c for c in self.manifest["cases"] if c["name"] == "summaries"), None)
        if case is None:
            self.skipTest("TensorBoard is absent beside TensorFlow: run setup_tf.sh")
        self.run_case("summaries")
        done = subprocess.run([PY, os.path.join(HERE, "compare_events.py"), case["events"]["sluice"],
                               case["events"]["tensorflow"]],
                              env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout[-6000:] + done.stderr[-3000:])
        print(done.stdout.strip(), file=sys.stderr)

    def test_random_generator_draws_are_tensorflows(self):
        self.run_case("generator")

    def test_slice_assignments_and_count_up_to(self):
        self.run_case("slice_assign")

    def test_quantization_aware_training_with_fake_quant_ops(self):
        self.run_case("fake_quant")

    def test_ops_tf_graphs_carry_beside_the_core_ones(self):
        self.run_case("compat_ops")

    def test_bmp_files_decoded_as_tensorflow_decodes_them(self):
        self.run_case("bmp")

    def test_second_derivatives_through_max_pooling(self):
        self.run_case("max_pool_second_order")

    def test_extract_patches_and_its_gradient(self):
        self.run_case("extract_patches")

    def test_max_pool_with_argmax_and_v2_with_gradients(self):
        self.run_case("max_pool_argmax")

    def test_function_call_and_its_gradient(self):
        self.run_case("function_call")

    def test_bincount_unique_and_diagonal_ops_and_their_gradients(self):
        self.run_case("counting_and_diag")

    def test_stateless_truncated_normal_and_integer_draws_are_tensorflows(self):
        self.run_case("stateless_random")

    def test_linalg_ops_and_their_gradients(self):
        self.run_case("linalg")

    def test_qr_eigh_and_svd_and_their_gradients(self):
        self.run_case("linalg_factors")

    def test_non_max_suppression_hard_padded_and_soft(self):
        self.run_case("nms")

    def test_segment_max_min_mean_prod_sorted_and_unsorted_with_gradients(self):
        self.run_case("segment_reductions")

    def test_bitwise_mod_mul_no_nan_and_special_functions_with_gradients(self):
        self.run_case("elementwise_extra")

    def test_tf1_top_k_searchsorted_and_histogram(self):
        self.run_case("search_and_histogram")

    def test_hsv_conversions_hue_and_saturation_with_rgb_to_hsv_gradient(self):
        self.run_case("color")

    def test_categorical_draws_are_tensorflows_ids(self):
        self.run_case("categorical")

    def test_gamma_poisson_and_binomial_draws_with_gamma_gradients(self):
        self.run_case("distributions")

    def test_incomplete_gamma_beta_bessel_and_special_integrals_with_gradients(self):
        self.run_case("special_functions")

    def test_ctc_loss_with_gradients_greedy_and_beam_decoding_and_edit_distance(self):
        self.run_case("ctc")

    def test_projective_transforms_in_every_mode_with_image_gradient_and_area_resize(self):
        self.run_case("projective_transform")

    def test_nextafter_bias_add_v1_inv_grad_snapshot_to_bool_and_resource_gather_nd(self):
        self.run_case("small_compat")

    def test_scatter_mul_div_min_max_on_ref_and_resource_variables(self):
        self.run_case("scatter_mul_div_min_max")

    def test_scatter_nd_on_variables_and_tensor_scatter_max_min_with_gradients(self):
        self.run_case("scatter_nd")

    def test_euclidean_norm_and_cumulative_logsumexp_with_gradients(self):
        self.run_case("composite")

    def test_text_cleaned_split_and_parsed_by_tf_strings(self):
        self.run_case("text")

    def test_a_defun_differentiated_by_symbolic_gradient(self):
        self.run_case("symbolic_gradient")

    def test_nearest_and_bicubic_resize_and_their_gradients(self):
        self.run_case("resize")

    def test_feature_column_ops(self):
        self.run_case("feature_columns")

    def test_sparse_tensor_ops(self):
        self.run_case("sparse_tensors")

    def test_tables_and_feature_columns(self):
        self.run_case("tables")

    def test_string_split_and_sparse_add_concat_slice(self):
        self.run_case("sparse_more")

    def test_wide_and_deep_trains_as_in_tensorflow(self):
        self.run_case("wide_and_deep")

    def test_word2vec_sampled_softmax_and_nce_train_as_in_tensorflow(self):
        self.run_case("sampled_softmax")

    def test_keras_and_sign_optimizer_ops(self):
        self.run_case("optimizer_ops")

    def test_an_lstm_in_a_tf2_while_loop_trains_as_in_tensorflow(self):
        self.run_case("lstm_while_v2")

    def test_a_frozen_keras_lstm_and_gru_model_gives_tensorflows_outputs(self):
        self.run_case("keras_rnn_frozen")

    def test_nan_through_max_min_argmax_and_relu_grads(self):
        self.run_case("nan_rules")

    def test_a_tf1_run_restored_from_its_meta_graph_and_checkpoint(self):
        self.run_case("meta_restored")

    def test_a_tf1_run_resumed_from_its_meta_graph_continues_its_loss_curve(self):
        self.run_case("meta_resumed")

    def test_restores_a_checkpoint_tensorflow_wrote(self):
        self.run_case("tf_checkpoint")

    def test_a_tf1_run_saved_in_v1_shards_resumes_from_its_meta_graph(self):
        self.run_case("v1_meta_resumed")

    def test_tensorflow_restores_the_v1_files_sluices_save_ops_wrote(self):
        self.run_case("v1_save")  # Sluice runs Save and SaveSlices
        code = """
import sys, numpy as np, tensorflow as tf
out, names = sys.argv[1], sys.argv[2].split(",")
reader = tf.train.load_checkpoint(out + "/sluice_v1.ckpt")
as_npy = lambda a: np.asarray(a).astype("S") if np.asarray(a).dtype == object else np.asarray(a)
for n in names:
    dtype = reader.get_variable_to_dtype_map()[n]
    r = tf.raw_ops.Restore(file_pattern=out + "/sluice_v1.ckpt", tensor_name=n, dt=dtype)
    np.save(out + "/sluice_v1.%s.tf.npy" % n, as_npy(r.numpy()))
    if dtype != tf.float16:  # TensorFlow's V1 reader has no half (it says Unimplemented)
        np.save(out + "/sluice_v1.%s.reader.npy" % n, as_npy(reader.get_tensor(n)))
part = tf.raw_ops.RestoreSlice(file_pattern=out + "/sluice_v1_part.ckpt", tensor_name="part",
                               shape_and_slice="4 2 3,1:-", dt=tf.float32).numpy()
np.save(out + "/sluice_v1.part.tf.npy", part)
"""
        names = ["f", "flag", "h", "i64", "s", "u8"]
        done = subprocess.run([PY, "-c", code, self.dir, ",".join(names)], capture_output=True,
                              text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        for n in names:
            want = np.load(os.path.join(self.dir, "sluice_v1.%s.expected.npy" % n))
            for how in ("tf", "reader") if n != "h" else ("tf",):
                got = np.load(os.path.join(self.dir, "sluice_v1.%s.%s.npy" % (n, how)))
                self.assertEqual(got.dtype, want.dtype, "%s via %s" % (n, how))
                np.testing.assert_array_equal(got, want, "%s via %s" % (n, how))
        np.testing.assert_array_equal(np.load(os.path.join(self.dir, "sluice_v1.part.tf.npy")),
                                      np.array([[7.0, 8.0]], np.float32))

    def test_tensorflow_reads_a_checkpoint_sluice_wrote(self):
        with open(os.path.join(self.dir, "sluice_ckpt.names.json")) as f:
            self.assertEqual(json.load(f), ["names", "step", "w", "x"])
        got = {n: np.load(os.path.join(self.dir, "sluice_ckpt.%s.npy" % n), allow_pickle=True)
               for n in ("names", "step", "w", "x")}
        np.testing.assert_array_equal(got["w"], np.array([[1, 2], [3, 4]], np.float32))
        self.assertEqual(got["w"].dtype, np.float32)
        self.assertEqual([to_bytes(x) for x in got["names"]], [b"a", b"", b"bc"])
        self.assertEqual(got["step"].dtype, np.int64)
        self.assertEqual(int(got["step"]), 9)
        np.testing.assert_array_equal(got["x"], np.array([0.5, 1.5, 2.5]))

    def test_tensorflow_reads_and_repartitions_a_checkpoint_sluices_saver_wrote(self):
        with open(os.path.join(self.dir, "sluice_saver.json")) as f:
            meta = json.load(f)
        self.assertEqual(meta["latest"], "model.ckpt-10")
        self.assertEqual(meta["all"], ["model.ckpt-5", "model.ckpt-10"])
        self.assertEqual(meta["names"], ["dense/kernel", "emb", "global_step"])
        load = lambda n: np.load(os.path.join(self.dir, "sluice_saver.%s.npy" % n))
        table = np.array([[10.0 * r + c for c in range(3)] for r in range(7)], np.float32)
        np.testing.assert_array_equal(load("emb"), table)  # three slices, assembled by TF
        np.testing.assert_array_equal(load("dense_kernel"), np.array([[1, 2], [3, 4]], np.float32))
        self.assertEqual(int(load("global_step")), 42)
        # Saved in 3 parts by Sluice, restored by TensorFlow into 2.
        np.testing.assert_array_equal(load("emb_part_rows"), [4, 3])
        np.testing.assert_array_equal(load("emb_in_2_parts"), table)
        self.assertEqual(int(load("restored_step")), 42)

    # Sluice's ops against TensorFlow's OpDefs: each attr TensorFlow has, with
    # its default, and TensorFlow's argument names. Known differences, each
    # with its reason; anything else fails.
    KNOWN_OP_DIFFERENCES = {
        # Sluice's ConditionalAccumulators are found by shared_name, with no
        # handle input (ops/data_flow/data_flow_ops.h): TensorFlow's graphs with
        # accumulators do not run; Sluice's own SyncReplicas does.
        "AccumulatorApplyGradient", "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
        "AccumulatorTakeGradient", "SparseAccumulatorApplyGradient",
        "SparseAccumulatorTakeGradient",
        # The runtime's own transfer op (never in a graph file).
        "_Recv",
    }

    def test_op_attrs_defaults_and_argument_names_are_tensorflows(self):
        ops = os.path.join(self.dir, "sluice_ops.pb")
        subprocess.run([runfile("tests/tf_conformance/dump_op_defs"), ops], check=True)
        done = subprocess.run([PY, os.path.join(HERE, "op_defs_check.py"), ops],
                              env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        report = json.loads(done.stdout)
        self.assertGreater(report["shared"], 400)  # ops both have
        unexpected = [d for d in report["differences"] if d[0] not in self.KNOWN_OP_DIFFERENCES]
        self.assertEqual(unexpected, [], "\n".join(" ".join(d) for d in unexpected))

    def run_saved_model(self, name):
        sm = self.manifest["saved_models"][name]
        out = os.path.join(self.dir, name + ".sluice_sm")
        inputs = sm.get("inputs") or {sm.get("input_key", "images"):
                                      os.path.join(self.dir, "sm_images.npy")}
        argv = [runfile("tools/runner"), "--saved_model=" + sm["dir"], "--out_dir=" + out]
        argv += ["--input=%s=%s" % kv for kv in sorted(inputs.items())]
        if sm.get("function"):
            argv.append("--function=" + sm["function"])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, "%s: runner failed:\n%s" % (name, done.stderr[-3000:]))
        for key, path in sm["expected"].items():
            expected = np.load(path, allow_pickle=True)
            got = np.load(os.path.join(out, key + ".npy"), allow_pickle=True)
            if expected.dtype.kind in "SUO":
                self.assertEqual([to_bytes(x) for x in got.ravel()],
                                 [to_bytes(x) for x in expected.ravel()], key)
            else:
                np.testing.assert_allclose(got, expected, rtol=sm.get("rtol", 1e-6),
                                           atol=sm.get("atol", 1e-7), err_msg=key)

    def test_sluice_serves_a_tf1_saved_model_with_an_asset_table(self):
        self.run_saved_model("tf1")

    def test_sluice_serves_a_tf2_saved_model(self):
        self.run_saved_model("tf2")

    def test_sluice_calls_a_tf2_modules_function_by_object_path(self):
        self.run_saved_model("tf2_module")

    def test_sluice_serves_a_tf2_saved_model_that_loops_and_branches(self):
        self.run_saved_model("tf2_loop")

    def test_sluice_serves_a_keras_model_saved_by_tf_saved_model_save(self):
        self.run_saved_model("keras")

    def test_sluice_serves_a_keras_transformer_block(self):
        self.run_saved_model("keras_attention")

    def test_sluice_serves_a_keras_model_with_category_encoding(self):
        self.run_saved_model("keras_category")

    def test_tensorflow_serves_a_saved_model_sluice_wrote(self):
        self.check_sluice_saved_model("sluice_sm")

    def test_tf2_saved_model_load_serves_a_saved_model_sluice_wrote(self):
        self.check_sluice_saved_model("sluice_sm_v2")

    def check_sluice_saved_model(self, prefix):
        for key in ("probabilities", "classes", "names"):
            got = np.load(os.path.join(self.dir, "%s.%s.npy" % (prefix, key)), allow_pickle=True)
            want = np.load(os.path.join(self.sluice_sm, "expected.%s.npy" % key), allow_pickle=True)
            if want.dtype.kind in "SUO":
                self.assertEqual([to_bytes(x) for x in got.ravel()],
                                 [to_bytes(x) for x in want.ravel()], key)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=key)

    def test_tensorflow_reads_what_sluice_wrote(self):
        images = np.load(os.path.join(self.dir, "sluice_records.images.npy"))
        labels = np.load(os.path.join(self.dir, "sluice_records.labels.npy"))
        # Two shards: example i went to shard i % 2; TF read shard 0 then 1.
        order = [0, 2, 4, 1, 3]
        np.testing.assert_array_equal(images, self.images.reshape(5, -1)[order])
        np.testing.assert_array_equal(labels, self.labels[order].astype(np.int64))


def fetch_file(fetch):
    """The runner's file name for a fetched tensor."""
    return fetch.replace("/", "_").replace(":", "_") + ".npy"


def to_bytes(x):
    return x if isinstance(x, bytes) else str(x).encode()


def write_idx(path, array, code):
    with open(path, "wb") as f:
        f.write(bytes([0, 0, code, array.ndim]))
        for d in array.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(array.astype(">u1" if code == 0x08 else array.dtype).tobytes())


if __name__ == "__main__":
    unittest.main()
