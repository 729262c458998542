#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu_cnn_step.cc: one training step of the
Fashion-MNIST CNN (3x3 convolutions of 16 and 32 filters, SAME padding,
ReLU, 2x2 max-pools, dense 128, 10 classes; Adam lr 0.002) on cuda:0, the
batch copied from pinned host memory and the loss read back every step
(loss.item()), as Session::Run does.

  python3 bench/torch_gpu_cnn.py [--batch 128 --steps 100] [--no-compile]

Prints (median step):
  torch_gpu_cnn_step: X ms                      fp32 eager (TF32 off)
  torch_gpu_cnn_step_bf16: Y ms                 autocast(bfloat16), eager
  torch_gpu_cnn_step_bf16_cuda_graph: Z ms      autocast, the whole step
                                                (forward, backward, Adam)
                                                captured by torch.cuda.graph
  torch_gpu_cnn_step_bf16_compile: W ms         autocast, torch.compile'd model
  torch_gpu_cnn_step_bf16_best: V ms            the faster of the last two,
                                                printed again when one beats
                                                it (the last line counts), so
                                                a run cut during compile still
                                                has one
Each figure is printed (and flushed) as its variant finishes. A variant that
raises is a `#` line (its traceback on stderr), the others still run, and the
exit status is 1. Without torch or CUDA it prints a `#` line saying why and
exits 0.
"""
import argparse
import sys
import time
import traceback


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def build(torch, dev):
    nn = torch.nn
    torch.manual_seed(1)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 32, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    return model


def measure(torch, a, dev, host, bf16, mode):
    """mode: 'eager', 'graph' or 'compile'."""
    model = build(torch, dev)
    if mode == "compile":
        model = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.002, capturable=(mode == "graph"))
    loss_fn = torch.nn.CrossEntropyLoss()

    def forward_backward(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    static_x = torch.empty(a.batch, 1, 28, 28, device=dev)
    static_y = torch.empty(a.batch, dtype=torch.long, device=dev)
    graph = None
    if mode == "graph":
        static_x.copy_(host[0][0])
        static_y.copy_(host[0][1])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                forward_backward(static_x, static_y)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = forward_backward(static_x, static_y)

    def step(i):
        x, y = host[i % len(host)]
        if graph is not None:
            static_x.copy_(x, non_blocking=True)
            static_y.copy_(y, non_blocking=True)
            graph.replay()
            return static_loss.item()
        opt.zero_grad(set_to_none=True)
        return forward_backward(x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)).item()

    for i in range(a.warmup):
        step(i)
    torch.cuda.synchronize()
    ms, last = [], 0.0
    for i in range(a.steps):
        t0 = time.perf_counter()
        last = step(i)
        ms.append((time.perf_counter() - t0) * 1e3)
    return median(ms), last


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile variant")
    a = p.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"# torch_gpu_cnn: no torch ({e})")
        return 0
    if not torch.cuda.is_available():
        print("# torch_gpu_cnn: torch sees no CUDA device")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda:0")
    g = torch.Generator().manual_seed(1)
    host = [(torch.rand(a.batch, 1, 28, 28, generator=g).pin_memory(),
             torch.randint(0, 10, (a.batch,), generator=g).pin_memory()) for _ in range(8)]
    print(f"# torch {torch.__version__}, cudnn {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name(0)}; batch {a.batch}")
    runs = [("torch_gpu_cnn_step", False, "eager"),
            ("torch_gpu_cnn_step_bf16", True, "eager"),
            ("torch_gpu_cnn_step_bf16_cuda_graph", True, "graph")]
    if not a.no_compile:
        runs.append(("torch_gpu_cnn_step_bf16_compile", True, "compile"))
    best = None
    failed = []
    for name, bf16, mode in runs:
        try:
            ms, last = measure(torch, a, dev, host, bf16, mode)
        except Exception as e:  # the other variants still run; the exit status says so
            print(f"# {name}: failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
            traceback.print_exc()
            failed.append(name)
            continue
        print(f"{name}: {ms:.3f} ms")
        print(f"{name}_loss_after: {last:.4f}", flush=True)
        if mode in ("graph", "compile") and (best is None or ms < best):
            best = ms
            print(f"torch_gpu_cnn_step_bf16_best: {best:.3f} ms", flush=True)
    if failed:
        print(f"# torch_gpu_cnn: {len(failed)} variant(s) failed: {', '.join(failed)}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
