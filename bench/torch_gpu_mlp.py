#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu_mlp_step.cc: one training step of the MLP
784-1024-1024-10 (batch 256, ReLU, softmax cross-entropy, plain SGD lr 0.1)
on cuda:0, the loss read back every step (loss.item()) and the device
synchronized after each step.

  python3 bench/torch_gpu_mlp.py [--steps 200 --warmup 20]

Configurations, each measured in this one process:
  fp32 / tf32       torch.backends.cuda.matmul.allow_tf32 (and cudnn's) off / on
  fed / resident    the batch copied from host memory each step (pinned,
                    non_blocking, its best) / already on the GPU
  sgd foreach       torch.optim.SGD(foreach=True), the fast default on CUDA
  cuda graph        the whole resident step (forward, backward, SGD step)
                    captured once by hand with torch.cuda.graph after a
                    warm-up on a side stream (PyTorch's documented recipe),
                    then replayed: g.replay(), loss.item(), synchronize
Prints `torch_gpu_mlp_step_<precision>_<batch>: X ms` (median step) for each
as it finishes, the fp32 ones (measured first) each followed by the figure
gpu_mlp_step.cc is compared with, at its default float32 precision, so that
a run cut during the tf32 ones still has them:
  torch_gpu_mlp_step: X ms              fp32, batch fed from the host
  torch_gpu_mlp_step_resident: Y ms     fp32, batch on the GPU
  torch_gpu_mlp_step_cuda_graph: Z ms   fp32, batch on the GPU, CUDA graph
Without torch or CUDA it prints a `#` line saying why and exits 0.
"""
import argparse
import sys
import time


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def measure(torch, tf32, resident, steps, warmup, batch, graph=False):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    dev = torch.device("cuda:0")
    torch.manual_seed(1)
    layers = [784, 1024, 1024, 10]
    mods = []
    for i in range(1, len(layers)):
        lin = torch.nn.Linear(layers[i - 1], layers[i])
        torch.nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
        torch.nn.init.zeros_(lin.bias)
        mods.append(lin)
        if i + 1 < len(layers):
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(7)
    host = [(torch.randn(batch, layers[0], generator=gen).pin_memory(),
             torch.randint(0, layers[-1], (batch,), generator=gen).pin_memory())
            for _ in range(16)]
    on_gpu = [(x.to(dev), y.to(dev)) for x, y in host]

    if graph:
        static_x, static_y = on_gpu[0]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                loss_fn(model(static_x), static_y).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            static_loss = loss_fn(model(static_x), static_y)
            static_loss.backward()
            opt.step()

    def step(i):
        if graph:
            g.replay()
            value = static_loss.item()
            torch.cuda.synchronize()
            return value
        if resident:
            x, y = on_gpu[i % len(on_gpu)]
        else:
            hx, hy = host[i % len(host)]
            x, y = hx.to(dev, non_blocking=True), hy.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()  # Sluice fetches the loss too
        torch.cuda.synchronize()
        return value

    for i in range(warmup):
        step(i)
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - t0) * 1000.0)
    return median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--batch", type=int, default=256)
    a = p.parse_args()
    try:
        import torch
    except ImportError:
        print("# torch_gpu_mlp: skipped, torch is not installed for " + sys.executable)
        return 0
    if not torch.cuda.is_available():
        print(f"# torch_gpu_mlp: skipped, torch {torch.__version__} sees no CUDA device")
        return 0
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}", flush=True)
    # The names gpu_mlp_step.cc's figures are compared with.
    compared = {"fp32_fed": "torch_gpu_mlp_step",
                "fp32_resident": "torch_gpu_mlp_step_resident",
                "fp32_cuda_graph": "torch_gpu_mlp_step_cuda_graph"}
    for tf32 in (False, True):
        for resident, graph in ((False, False), (True, False), (True, True)):
            name = (f"{'tf32' if tf32 else 'fp32'}_"
                    f"{'cuda_graph' if graph else 'resident' if resident else 'fed'}")
            ms = measure(torch, tf32, resident, a.steps, a.warmup, a.batch, graph=graph)
            print(f"torch_gpu_mlp_step_{name}: {ms:.3f} ms", flush=True)
            if name in compared:
                print(f"{compared[name]}: {ms:.3f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
