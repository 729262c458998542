#!/usr/bin/env python3
"""The PyTorch peer of the Fashion-MNIST main job, on the same TFRecord files.

Same model as examples/cnn_model.h (conv 3x3x16, pool, conv 3x3x32, pool,
dense 128, dense 10; Glorot-uniform kernels, zero biases), same optimizer
(Adam), global batch (split over the processes), learning rate, shuffle
buffer and shards as examples/fashion_mnist_cnn: rank r of W reads train
shards k with k % W == r. Prints one figure per line as
`name: value unit`.

  --mode=train     time to --target test accuracy (DistributedDataParallel
                   over gloo with --world_size processes; 1: one process)
  --mode=pipeline  input pipeline alone: TFRecord -> parse -> decode -> batch,
                   examples/s through a DataLoader with --loader_workers

The records are parsed with protobuf's Python runtime from Sluice's own
graph/proto/example.proto (compiled with protoc at start), the fastest
parser PyTorch users have without TensorFlow.
"""
import argparse
import glob
import os
import struct
import subprocess
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def example_module():
    out = tempfile.mkdtemp(prefix="sluice-torch-proto-")
    subprocess.run(["protoc", "-I", ROOT, "--python_out=" + out,
                    "graph/proto/example.proto", "graph/proto/feature.proto"], check=True)
    sys.path.insert(0, out)
    from graph.proto import example_pb2  # noqa: E402
    return example_pb2


def read_records(path):
    """TFRecord framing: u64 length, u32 masked crc, data, u32 masked crc.
    (The CRCs are not checked here; Sluice checks them.)"""
    with open(path, "rb") as f:
        while True:
            head = f.read(12)
            if len(head) < 12:
                return
            (n,) = struct.unpack("<Q", head[:8])
            data = f.read(n)
            f.read(4)
            yield data


class Records(torch.utils.data.IterableDataset):
    def __init__(self, files, shuffle_buffer, seed, example_pb2, repeat):
        self.files, self.buffer, self.seed, self.pb, self.repeat = files, shuffle_buffer, seed, example_pb2, repeat

    def parse(self, data):
        e = self.pb.Example()
        e.ParseFromString(data)
        f = e.features.feature
        image = torch.frombuffer(bytearray(f["image_raw"].bytes_list.value[0]), dtype=torch.uint8)
        return image.view(1, 28, 28).float().div_(255.0), f["label"].int64_list.value[0]

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        files = self.files if info is None else self.files[info.id::info.num_workers]
        g = torch.Generator().manual_seed(self.seed)
        epoch = 0
        while True:
            buf = []
            for path in files:
                for data in read_records(path):
                    if self.buffer <= 1:
                        yield self.parse(data)
                        continue
                    buf.append(data)
                    if len(buf) >= self.buffer:
                        i = int(torch.randint(len(buf), (1,), generator=g))
                        buf[i], buf[-1] = buf[-1], buf[i]
                        yield self.parse(buf.pop())
            while buf:
                i = int(torch.randint(len(buf), (1,), generator=g))
                buf[i], buf[-1] = buf[-1], buf[i]
                yield self.parse(buf.pop())
            epoch += 1
            if not self.repeat:
                return


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.dense = nn.Linear(7 * 7 * 32, 128)
        self.logits = nn.Linear(128, 10)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.xavier_uniform_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.dense(x.flatten(1)))
        return self.logits(x)


def test_set(files, pb):
    xs, ys = [], []
    ds = Records(files, 0, 0, pb, repeat=False)
    for x, y in ds:
        xs.append(x)
        ys.append(y)
    return torch.stack(xs), torch.tensor(ys)


def evaluate(model, test_x, test_y):
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(test_x[i:i + 1000]).argmax(1) == test_y[i:i + 1000]).sum())
                      for i in range(0, len(test_y), 1000))
    model.train()
    return correct / len(test_y)


def train(args, pb):
    rank, world = args.rank, args.world_size
    if world > 1:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.port,
                                rank=rank, world_size=world)
    torch.manual_seed(args.seed)
    model = Cnn()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    files = sorted(glob.glob(os.path.join(args.data_dir, "train-*.tfrecord")))[rank::world]
    loader = torch.utils.data.DataLoader(
        Records(files, args.shuffle_buffer, args.seed + rank, pb, repeat=True),
        batch_size=args.batch // world, num_workers=args.loader_workers, drop_last=True)
    test_x = test_y = None
    if rank == 0:
        test_x, test_y = test_set(sorted(glob.glob(os.path.join(args.data_dir, "test-*.tfrecord"))), pb)
    trained = 0.0  # seconds of training, evaluation excluded
    start = time.time()
    reached = None
    step = 0
    accuracy = 0.0
    next_eval = args.eval_every_s
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 20 != 0 and step < args.max_steps:
            continue
        # Every 20 steps rank 0 says whether to evaluate now (by its
        # training time) and whether to stop; every rank hears it at the
        # same step.
        now = time.time()
        flags = torch.zeros(2)
        if rank == 0 and (trained + now - start >= next_eval or step >= args.max_steps):
            flags[0] = 1
        if world > 1:
            dist.broadcast(flags, 0)
        if flags[0] == 0:
            continue
        trained += now - start
        next_eval = trained + args.eval_every_s
        if rank == 0:
            accuracy = evaluate(model, test_x, test_y)
            print("torch step %d loss %.4f test_accuracy %.4f after %.1f s" %
                  (step, float(loss), accuracy, trained), flush=True)
            if accuracy >= args.target and reached is None:
                reached = trained
            if reached is not None or trained > args.max_seconds or step >= args.max_steps:
                flags[1] = 1
        if world > 1:
            dist.broadcast(flags, 0)
        start = time.time()
        if flags[1] > 0:
            break
    if rank == 0:
        tag = "torch_%dproc" % world
        if reached is not None:
            print("%s_time_to_%d: %.1f s" % (tag, round(args.target * 100), reached))
        else:
            print("%s_time_to_%d: not reached (%.4f after %.1f s)" %
                  (tag, round(args.target * 100), accuracy, trained))
        print("%s_steps: %d" % (tag, step))
    if world > 1:
        dist.destroy_process_group()


def pipeline(args, pb):
    files = sorted(glob.glob(os.path.join(args.data_dir, "train-*.tfrecord")))
    best = 0.0
    for workers in [int(w) for w in args.pipeline_workers.split(",")]:
        loader = torch.utils.data.DataLoader(
            Records(files, args.shuffle_buffer, 1, pb, repeat=False),
            batch_size=args.batch, num_workers=workers, drop_last=True)
        start = time.time()
        n = 0
        for x, _ in loader:
            n += x.shape[0]
        rate = n / (time.time() - start)
        print("torch_pipeline_workers_%d: %.0f examples/s" % (workers, rate), flush=True)
        best = max(best, rate)
    print("torch_pipeline_best: %.0f examples/s" % best)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="train", choices=["train", "pipeline"])
    p.add_argument("--data_dir", default="/tmp/sluice/fashion_mnist")
    p.add_argument("--world_size", type=int, default=1)
    p.add_argument("--rank", type=int, default=-1, help="internal: set for spawned ranks")
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--batch", type=int, default=128, help="global batch, split over the processes")
    p.add_argument("--learning_rate", type=float, default=0.002)
    p.add_argument("--shuffle_buffer", type=int, default=10000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--target", type=float, default=0.90)
    p.add_argument("--eval_every_s", type=float, default=10, help="seconds of training")
    p.add_argument("--max_steps", type=int, default=20000)
    p.add_argument("--max_seconds", type=float, default=600)
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--loader_workers", type=int, default=1)
    p.add_argument("--pipeline_workers", default="0,1,2")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    pb = example_module()
    if args.mode == "pipeline":
        return pipeline(args, pb)
    if args.world_size > 1 and args.rank < 0:
        procs = [subprocess.Popen([sys.executable] + sys.argv + ["--rank=%d" % r])
                 for r in range(args.world_size)]
        sys.exit(max(p.wait() for p in procs))
    args.rank = max(args.rank, 0)
    train(args, pb)


if __name__ == "__main__":
    main()
