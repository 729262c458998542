#!/usr/bin/python3
"""torch.distributed (gloo) all_reduce on 127.0.0.1: the peer figures for
bench/allreduce (bench/allreduce.sh runs both).

    /usr/bin/python3 bench/gloo_allreduce.py [--n 2,3,4] [--sizes 4K,64K,1M,...]

For each N, starts N ranks as separate processes (this script with --rank).
Per size, as bench/allreduce does it: float32, sum, --warmup untimed runs,
then timed runs each after a dist.barrier(); each rank takes the median of
its runs and the figure uses the slowest rank's median:
  gloo_allreduce_busbw_n<N>_<size>: GB/s   bytes * 2(N-1)/N / time
  gloo_allreduce_time_n<N>_<size>: ms
The tensor is allocated once per size and reduced in place (gloo's usual
use). torch runs one intra-op thread (its best on these 2 vCPUs).
"""
import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import time


def parse_sizes(text):
    out = []
    for item in text.split(","):
        if not item:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(item[-1], 1)
        out.append(int(item[:-1] if scale > 1 else item) * scale)
    return out


def label(nbytes):
    if nbytes % (1 << 20) == 0:
        return f"{nbytes >> 20}MiB"
    if nbytes % (1 << 10) == 0:
        return f"{nbytes >> 10}KiB"
    return f"{nbytes}B"


def iterations(nbytes, fixed):
    if fixed > 0:
        return fixed
    return max(5, min(40, (750 << 20) // nbytes))


def rank_main(args):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=args.rank, world_size=args.world)
    n = args.world
    sizes = parse_sizes(args.sizes)
    medians = []
    for nbytes in sizes:
        x = torch.full((nbytes // 4,), float(args.rank + 1), dtype=torch.float32)
        dist.all_reduce(x)
        want = n * (n + 1) / 2
        if x[0].item() != want or x[-1].item() != want:
            print(f"# gloo_allreduce: wrong sum {x[0].item()} (want {want})", file=sys.stderr)
            return 1
        for _ in range(args.warmup - 1):
            dist.all_reduce(x)
        times = []
        cpu0 = time.process_time()
        sys0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        for _ in range(iterations(nbytes, args.iters)):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - t0)
        if args.verbose:
            cpu = (time.process_time() - cpu0) / len(times) * 1e3
            sys_ms = (resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys0) / len(times) * 1e3
            print(f"# gloo rank {args.rank} n{n} {label(nbytes)}: {statistics.median(times) * 1e3:.3f} ms,"
                  f" cpu {cpu:.3f} ms/run (system {sys_ms:.3f})", flush=True)
        medians.append(statistics.median(times))
    slowest = torch.tensor(medians, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if args.rank == 0:
        for nbytes, t in zip(sizes, slowest.tolist()):
            name = f"n{n}_{label(nbytes)}"
            print(f"gloo_allreduce_time_{name}: {t * 1e3:.3f} ms")
            print(f"gloo_allreduce_busbw_{name}: {nbytes * 2 * (n - 1) / n / t / 1e9:.3f} GB/s",
                  flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_group(args, n):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1", GOMP_SPINCOUNT="0")
    common = [sys.executable, os.path.abspath(__file__), "--world", str(n), "--sizes", args.sizes,
              "--warmup", str(args.warmup), "--iters", str(args.iters)]
    if args.verbose:
        common.append("--verbose")
    ranks = [subprocess.Popen(common + ["--rank", str(r)], env=env) for r in range(n)]
    try:
        codes = [p.wait(timeout=1200) for p in ranks]
    except subprocess.TimeoutExpired:
        for p in ranks:
            p.kill()
        codes = [1]
    if any(codes):
        print(f"# gloo_allreduce: a rank of the n={n} group failed ({codes})", file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, default=-1)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--n", default="2,3,4")
    ap.add_argument("--sizes", default="4K,64K,1M,4M,16M,64M,256M")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=0, help="0: about 1.5 s worth, 5 to 40")
    ap.add_argument("--verbose", action="store_true", help="every rank prints its CPU time per run")
    args = ap.parse_args()
    if args.rank >= 0:
        return rank_main(args)
    try:
        import torch.distributed as dist
        if not dist.is_gloo_available():
            raise ImportError("no gloo")
    except ImportError as e:
        print(f"# gloo_allreduce: skipped (torch.distributed with gloo is missing: {e})")
        return 0
    rc = 0
    for n in (int(v) for v in args.n.split(",") if v):
        rc |= run_group(args, n)
    return rc


if __name__ == "__main__":
    sys.exit(main())
