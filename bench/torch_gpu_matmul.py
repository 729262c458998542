#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu_matmul.cc's bf16-tensor figure: an
8192 x 8192 x 8192 matrix product of bfloat16 tensors on cuda:0 (random
data, never zeros), timed with CUDA events around each product, median of
--reps after --warmup.

  python3 bench/torch_gpu_matmul.py [--n 8192 --reps 50 --warmup 10]

Prints `torch_gpu_matmul_<n>_bf16_tensors: X TFLOP/s` and `..._ms: Y ms`.
Without torch or CUDA it prints a `#` line saying why and exits 0.
"""
import argparse
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    a = p.parse_args()
    try:
        import torch
    except ImportError:
        print("# torch_gpu_matmul: skipped, torch is not installed for " + sys.executable)
        return 0
    if not torch.cuda.is_available():
        print(f"# torch_gpu_matmul: skipped, torch {torch.__version__} sees no CUDA device")
        return 0
    n = a.n
    gen = torch.Generator(device="cuda").manual_seed(3)
    x = torch.rand(n, n, device="cuda", dtype=torch.bfloat16, generator=gen) - 0.5
    y = torch.rand(n, n, device="cuda", dtype=torch.bfloat16, generator=gen) - 0.5
    for _ in range(a.warmup):
        torch.matmul(x, y)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(x, y)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    ms = times[len(times) // 2]
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    print(f"torch_gpu_matmul_{n}_bf16_tensors: {2.0 * n ** 3 / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
    print(f"torch_gpu_matmul_{n}_bf16_tensors_ms: {ms:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
