#!/usr/bin/python3
"""torch.distributed (gloo) point-to-point on 127.0.0.1: the peer figures
for bench/recv_tensor.

    /usr/bin/python3 bench/gloo_sendrecv.py [--mib 64] [--transfers 20] [--pings 3000]

--mib 0 skips the throughput figure, --pings 0 the round trips.

Starts two ranks as separate processes (this script with --rank). Rank 0
times, rank 1 answers:
  gloo_sendrecv_64MiB: GB/s        send 64 MiB to rank 1, then receive a
                                   4-byte ack (as RecvTensor: request, bulk
                                   reply), median over the transfers;
  gloo_4B_rtt_{unpinned,pinned}_{p50,p99}: us
                                   send 4 bytes, receive 4 bytes back.
"pinned": both ranks (all their threads) on CPU 0. The destination tensors
are allocated once and reused.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def rank_main(args):
    if args.pin >= 0:
        os.sched_setaffinity(0, {args.pin})  # before torch starts its threads
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=args.rank, world_size=2)
    peer = 1 - args.rank
    small = torch.zeros(1, dtype=torch.float32)
    if args.mib > 0:
        big = torch.ones(args.mib * (1 << 18), dtype=torch.float32)
        times = []
        for i in range(args.transfers + 3):
            if args.rank == 0:
                t0 = time.perf_counter()
                dist.send(big, peer)
                dist.recv(small, peer)
                if i >= 3:
                    times.append(time.perf_counter() - t0)
            else:
                dist.recv(big, peer)
                dist.send(small, peer)
        if args.rank == 0:
            gbs = big.numel() * 4 / statistics.median(times) / 1e9
            print(f"gloo_sendrecv_{args.mib}MiB: {gbs:.2f} GB/s", flush=True)
    if args.pings <= 0:
        dist.destroy_process_group()
        return
    rtts = []
    for i in range(args.pings + 200):
        if args.rank == 0:
            t0 = time.perf_counter()
            dist.send(small, peer)
            dist.recv(small, peer)
            if i >= 200:
                rtts.append(time.perf_counter() - t0)
        else:
            dist.recv(small, peer)
            dist.send(small, peer)
    if args.rank == 0:
        for q in (0.50, 0.99):
            print(f"gloo_4B_rtt_{args.label}_p{int(q * 100)}: {percentile(rtts, q) * 1e6:.1f} us",
                  flush=True)
    dist.destroy_process_group()


def run_pair(args, pin, label, mib):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1")
    common = [sys.executable, os.path.abspath(__file__), "--pin", str(pin), "--label", label,
              "--mib", str(mib), "--transfers", str(args.transfers), "--pings", str(args.pings)]
    ranks = [subprocess.Popen(common + ["--rank", str(r)], env=env) for r in (0, 1)]
    codes = [p.wait(timeout=600) for p in ranks]
    if any(codes):
        print(f"# gloo_sendrecv: a rank failed ({codes})", file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, default=-1)
    ap.add_argument("--pin", type=int, default=-1)
    ap.add_argument("--label", default="unpinned")
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--transfers", type=int, default=20)
    ap.add_argument("--pings", type=int, default=3000)
    args = ap.parse_args()
    if args.rank >= 0:
        rank_main(args)
        return 0
    try:
        import torch.distributed as dist  # noqa: F401
        if not dist.is_gloo_available():
            raise ImportError("no gloo")
    except ImportError as e:
        print(f"# gloo_sendrecv: skipped (torch.distributed with gloo is missing: {e})")
        return 0
    rc = run_pair(args, -1, "unpinned", args.mib)
    if args.pings > 0:
        rc |= run_pair(args, 0, "pinned", 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
