"""PyTorch peer of bench/sparse_embedding.cc: nn.EmbeddingBag (mode='sum',
sparse=True) over a table of 2^k x 32 floats, a batch of 256 examples of 26
uniform ids, loss = mean over the batch of the squared norm of the sum, plain
SGD (sparse gradient). Prints `torch_embedding_sparse_step_2^k: X ms`
(median of --steps timed steps) per size, and the dense-gradient variant
(sparse=False) as `torch_embedding_dense_step_2^k: X ms`.

    python3 bench/torch_embedding.py [--steps 20] [--max-log2-rows 22]
"""
import argparse
import time

import torch


def step_ms(rows, sparse, args):
    torch.manual_seed(1)
    bag = torch.nn.EmbeddingBag(rows, args.dim, mode="sum", sparse=sparse)
    opt = torch.optim.SGD(bag.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(7)

    def batch():
        return torch.randint(0, rows, (args.batch, args.features), generator=gen)

    def one(ids):
        opt.zero_grad(set_to_none=True)
        loss = bag(ids).pow(2).sum(1).mean()
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        one(batch())
    batches = [batch() for _ in range(args.steps)]
    times = []
    for ids in batches:
        t0 = time.perf_counter()
        one(ids)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--features", type=int, default=26)
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--min-log2-rows", type=int, default=18)
    p.add_argument("--max-log2-rows", type=int, default=22)
    p.add_argument("--max-dense-log2-rows", type=int, default=22)
    args = p.parse_args()
    for k in range(args.min_log2_rows, args.max_log2_rows + 1, 2):
        rows = 1 << k
        print(f"torch_embedding_sparse_step_2^{k}: {step_ms(rows, True, args):.3f} ms", flush=True)
        if k <= args.max_dense_log2_rows:
            print(f"torch_embedding_dense_step_2^{k}: {step_ms(rows, False, args):.3f} ms", flush=True)


if __name__ == "__main__":
    main()
