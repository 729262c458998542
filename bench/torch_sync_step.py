"""PyTorch's synchronous data-parallel step over torch.distributed (gloo on
loopback): the peer of bench/sync_step.sh. Each of W processes runs the MLP
on its own batch, all-reduces the gradients (averaged) and applies SGD.

  /usr/bin/python3 bench/torch_sync_step.py --workers 2 --steps 200 --batch 64

Prints "torch_sync_step_w<W>: <ms> ms/step" (median over 5 blocks of steps,
rank 0) and "torch_sync_steps_per_s_w<W>: <x> steps/s".
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank, args, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)  # its best on these 2-core machines (machine_facts.md)
    dist.init_process_group("gloo", rank=rank, world_size=args.workers)
    torch.manual_seed(1)
    sizes = [784] + [int(h) for h in args.hidden.split(",")] + [10]
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(args.batch, 784)
    y = torch.randint(0, 10, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= args.workers
        opt.step()

    for _ in range(20):
        step()
    block = max(1, args.steps // 5)
    times = []
    for _ in range(5):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(block):
            step()
        times.append((time.perf_counter() - t0) / block)
    if rank == 0:
        ms = statistics.median(times) * 1e3
        print(f"torch_sync_step_w{args.workers}: {ms:.3f} ms/step", flush=True)
        print(f"torch_sync_steps_per_s_w{args.workers}: {1e3 / ms:.1f} steps/s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", default="256")
    args = parser.parse_args()
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(run, args=(args, port), nprocs=args.workers)
