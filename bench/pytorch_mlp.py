#!/usr/bin/python3
"""The PyTorch peer of bench/mlp_step.cc: one training step of the MLP
784-1024-1024-10 (batch 256, ReLU, softmax cross-entropy, plain SGD lr 0.1).

  /usr/bin/python3 bench/pytorch_mlp.py            # every configuration, best last
  /usr/bin/python3 bench/pytorch_mlp.py --config t1_ob2_nospin   # one, in-process

Thread settings must be fixed before torch starts its pools, so each
configuration runs in a fresh process with its environment. Prints
`pytorch_mlp_step_<config>: X ms` per configuration (median step), then
`pytorch_mlp_step: X ms` for the fastest, with a `#` line naming it.
"""
import argparse
import os
import subprocess
import sys
import time

# name -> (torch.set_num_threads, extra environment)
CONFIGS = {
    # machine_facts.md: PyTorch's best on the 2-vCPU machines.
    "t1_ob2_nospin": (1, {"OPENBLAS_NUM_THREADS": "2", "GOMP_SPINCOUNT": "0"}),
    "t1_ob1": (1, {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}),
    "t2_ob2_nospin": (2, {"OPENBLAS_NUM_THREADS": "2", "GOMP_SPINCOUNT": "0"}),
    "t2_default": (2, {}),
}


def run_one(name, steps, warmup, batch):
    import torch  # after the environment is set

    threads, _ = CONFIGS[name]
    torch.set_num_threads(threads)
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
    model = torch.nn.Sequential(*mods)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(7)
    batches = [(torch.randn(batch, layers[0], generator=gen),
                torch.randint(0, layers[-1], (batch,), generator=gen)) for _ in range(16)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()  # Sluice fetches the loss too

    for i in range(warmup):
        step(i)
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        step(i)
        times.append((time.perf_counter() - t0) * 1000.0)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    print(f"pytorch_mlp_step_{name}: {median:.3f} ms", flush=True)
    return median


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", choices=sorted(CONFIGS), help="run one configuration here")
    p.add_argument("--configs", default=",".join(CONFIGS), help="configurations to compare")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=256)
    a = p.parse_args()
    if a.config:
        run_one(a.config, a.steps, a.warmup, a.batch)
        return 0
    try:
        import torch  # noqa: F401  (only checks that it is there)
    except ImportError:
        print("# pytorch_mlp: skipped, torch is not installed for " + sys.executable)
        return 0
    results = {}
    for name in a.configs.split(","):
        _, extra = CONFIGS[name]
        env = dict(os.environ, **extra)
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--config", name, "--steps",
             str(a.steps), "--warmup", str(a.warmup), "--batch", str(a.batch)],
            env=env, check=True, capture_output=True, text=True).stdout
        sys.stdout.write(out)
        sys.stdout.flush()
        results[name] = float(out.strip().split(":")[1].split()[0])
    best = min(results, key=results.get)
    threads, extra = CONFIGS[best]
    desc = " ".join([f"torch.set_num_threads({threads})"] + [f"{k}={v}" for k, v in extra.items()])
    print(f"# pytorch best configuration: {best} ({desc})")
    print(f"pytorch_mlp_step: {results[best]:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
