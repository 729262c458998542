#!/usr/bin/python3
"""The PyTorch peer of bench/while_loop.cc: the same loop as a Python loop of
PyTorch eager ops on scalars (one thread, as PyTorch is fastest on these
machines for small ops):

    while i < n:  x = x * 0.999 + 0.001;  i = i + 1

i and x are tensors and the condition is a tensor op read back each
iteration, as a graph's LoopCond is. Prints `torch_loop_<n>: X us/iteration`
(median of --reps loops).
"""
import argparse
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    torch.set_num_threads(1)
    n = torch.tensor(args.iterations, dtype=torch.int32)
    times = []
    for rep in range(args.reps + 3):
        start = time.perf_counter()
        i = torch.tensor(0, dtype=torch.int32)
        x = torch.tensor(1.0)
        while bool(i < n):
            x = x * 0.999 + 0.001
            i = i + 1
        elapsed = time.perf_counter() - start
        if rep >= 3:  # warm-up
            times.append(elapsed)
    times.sort()
    median = times[len(times) // 2]
    print(f"torch_loop_{args.iterations}: {median * 1e6 / args.iterations:.3f} us/iteration")


if __name__ == "__main__":
    main()
