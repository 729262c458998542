"""PyTorch peer of examples/wide_deep in one process: the same click-log
TFRecords, hashed as Sluice hashes them (TensorFlow's
strings.to_hash_bucket_fast of "Ck:value", read with the TensorFlow wheel,
outside the timing), the same model (an embedding table of 2^k x 32 and a
linear table of 2^k x 1 as nn.Embedding(sparse=True), 26 x 32 -> 64 -> 1
ReLU layers, sigmoid cross-entropy) trained with sparse Adagrad on the
tables and Adagrad on the dense layers (PyTorch has no FTRL), batch 256.
Prints `torch_wide_deep_2^k_examples_per_s: X examples/s` (median over
windows of --window steps) per table size, and the test AUC after one epoch.

    python3 bench/torch_wide_deep.py --data_dir /tmp/sluice/click_logs [--rows 18,22]
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def dump(files, buckets, out, features=26):
    """In its own process: TensorFlow and PyTorch clash in one (LLVM options)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    keys = [f"C{k + 1}" for k in range(features)]
    spec = {k: tf.io.FixedLenFeature([], tf.string) for k in keys}
    spec["label"] = tf.io.FixedLenFeature([], tf.int64)
    ids, labels = [], []
    for batch in tf.data.TFRecordDataset(files).batch(4096):
        p = tf.io.parse_example(batch, spec)
        cols = [tf.strings.to_hash_bucket_fast(tf.strings.join([k, p[k]], ":"), buckets)
                for k in keys]
        ids.append(tf.stack(cols, axis=1).numpy())
        labels.append(p["label"].numpy())
    np.save(out + "_ids.npy", np.concatenate(ids))
    np.save(out + "_labels.npy", np.concatenate(labels).astype("float32"))


def load(files, buckets, tmp, name):
    out = os.path.join(tmp, name)
    subprocess.run([sys.executable, __file__, "--dump", out, "--buckets", str(buckets)] + files,
                   check=True)
    import torch
    return (torch.from_numpy(np.load(out + "_ids.npy")),
            torch.from_numpy(np.load(out + "_labels.npy")))


def make_model(buckets, dim=32, features=26, hidden=64):
    import torch

    class WideDeep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(buckets, dim, sparse=True)
            self.linear = torch.nn.Embedding(buckets, 1, sparse=True)
            torch.nn.init.zeros_(self.linear.weight)
            self.bias = torch.nn.Parameter(torch.zeros(()))
            self.dnn = torch.nn.Sequential(torch.nn.Linear(features * dim, hidden),
                                           torch.nn.ReLU(), torch.nn.Linear(hidden, 1))

        def forward(self, ids):
            wide = self.linear(ids).sum(dim=(1, 2)) + self.bias
            deep = self.dnn(self.emb(ids).flatten(1)).squeeze(1)
            return wide + deep

    return WideDeep()


def auc(labels, scores):
    import torch
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    pos = labels.sum().item()
    neg = len(labels) - pos
    return ((ranks[labels > 0].sum().item() - pos * (pos + 1) / 2) / (pos * neg))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--dump":
        dump(sys.argv[5:], int(sys.argv[4]), sys.argv[2])
        return
    import torch
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", default="/tmp/sluice/click_logs")
    p.add_argument("--rows", default="18,22")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--window", type=int, default=50)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    train_files = sorted(glob.glob(f"{args.data_dir}/train-*.tfrecord"))
    test_files = sorted(glob.glob(f"{args.data_dir}/test-*.tfrecord"))
    for k in [int(x) for x in args.rows.split(",") if x]:
        buckets = 1 << k
        with tempfile.TemporaryDirectory() as tmp:
            ids, labels = load(train_files, buckets, tmp, "train")
            test_ids, test_labels = load(test_files, buckets, tmp, "test")
        torch.manual_seed(1)
        model = make_model(buckets)
        sparse = [model.emb.weight, model.linear.weight]
        dense = [p for n, p in model.named_parameters() if not n.startswith(("emb", "linear"))]
        opts = [torch.optim.Adagrad(sparse, lr=0.05), torch.optim.Adagrad(dense, lr=0.05)]
        loss_fn = torch.nn.BCEWithLogitsLoss()
        perm = torch.randperm(len(labels), generator=torch.Generator().manual_seed(1))
        rates, start = [], time.perf_counter()
        steps = len(labels) // args.batch
        for s in range(steps):
            i = perm[s * args.batch:(s + 1) * args.batch]
            for o in opts:
                o.zero_grad()
            loss = loss_fn(model(ids[i]), labels[i])
            loss.backward()
            for o in opts:
                o.step()
            if (s + 1) % args.window == 0:
                now = time.perf_counter()
                rates.append(args.window * args.batch / (now - start))
                start = now
        with torch.no_grad():
            test_auc = auc(test_labels, model(test_ids))
        print(f"torch_wide_deep_2^{k}_examples_per_s: {statistics.median(rates):.0f} examples/s")
        print(f"torch_wide_deep_2^{k}_test_auc_after_1_epoch: {test_auc:.4f}")
        del model, opts


if __name__ == "__main__":
    main()
