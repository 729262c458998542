#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu_lstm_step.cc: one training step of an LSTM
(torch.nn.LSTM, one layer, cuDNN) over [batch, time, depth] sequences, mean
squared error of its outputs against a target sequence, plain SGD, on
cuda:0; the loss read back every step (loss.item()), so each step ends
synchronized, as Session::Run does.

  python3 bench/torch_gpu_lstm.py [--batch 64 --time 32 --depth 128 --hidden 256]

Prints `torch_gpu_lstm_step: X ms` (median step, fp32, TF32 off as Sluice's
default float32 MatMul). Without torch or CUDA it prints a `#` line saying
why and exits 0.
"""
import argparse
import sys
import time


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--time", type=int, default=32)
    p.add_argument("--depth", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    a = p.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"# torch_gpu_lstm: no torch ({e})")
        return 0
    if not torch.cuda.is_available():
        print("# torch_gpu_lstm: torch sees no CUDA device")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda:0")
    torch.manual_seed(1)
    lstm = torch.nn.LSTM(a.depth, a.hidden, batch_first=True).to(dev)
    opt = torch.optim.SGD(lstm.parameters(), lr=0.1)
    batches = [(torch.rand(a.batch, a.time, a.depth, device=dev) * 2 - 1,
                torch.rand(a.batch, a.time, a.hidden, device=dev) - 0.5) for _ in range(4)]
    host = [(x.cpu().pin_memory(), t.cpu().pin_memory()) for x, t in batches]

    def step(i):
        x, t = host[i % len(host)]
        x = x.to(dev, non_blocking=True)
        t = t.to(dev, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        y, _ = lstm(x)
        loss = torch.nn.functional.mse_loss(y, t)
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(a.warmup):
        step(i)
    torch.cuda.synchronize()
    ms = []
    last = 0.0
    for i in range(a.steps):
        t0 = time.perf_counter()
        last = step(i)
        ms.append((time.perf_counter() - t0) * 1e3)
    print(f"# torch {torch.__version__}, cudnn {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name(0)}; batch {a.batch}, time {a.time}, "
          f"depth {a.depth}, hidden {a.hidden}")
    print(f"torch_gpu_lstm_step: {median(ms):.3f} ms")
    print(f"torch_gpu_lstm_step_loss_after: {last:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
