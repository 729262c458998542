"""Sweep overhead: how long a trial takes from launch to its first reported
step, and how much faster K trials run side by side than one after another.

  bazel run //bench:sweep_overhead [-- --repeats=5 --steps=1500]

Prints
  sweep_launch_to_first_step_ms: X ms   (median; Popen to the first SLUICE_SWEEP line
                                          of //examples:sweep_mlp, which builds its
                                          graph and session and runs one step)
  sweep_parallel_speedup_k2: Y x        (2 trials through //tools:sweep with
                                          --parallel=1 over --parallel=2, first
                                          launch to last exit; each trial on one
                                          CPU slot, SLUICE_NUM_THREADS=1)
"""

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tools.sweep import scheduler

# The runfiles root under `bazel run` (or the source tree with --program).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "examples", "sweep_mlp")


def launch_to_first_step(tmp, repeats):
    times = []
    for i in range(repeats):
        q = queue.Queue()
        slot = scheduler.Slot("cpu", ["0"])
        start = time.perf_counter()
        proc = scheduler.TrialProcess(i, [PROGRAM, "--steps=2", "--report_every=1"],
                                      os.path.join(tmp, "launch_%d" % i), slot, q)
        while True:
            _, kind, _ = q.get(timeout=60)
            if kind == "report":
                times.append((time.perf_counter() - start) * 1000)
                break
        proc.terminate(5)
        proc.wait_reader()
    return statistics.median(times)


def sweep_seconds(tmp, parallel, steps, k):
    space = os.path.join(tmp, "space.json")
    with open(space, "w") as f:
        json.dump({"learning_rate": [0.01 + 0.001 * i for i in range(k)]}, f)
    out = os.path.join(tmp, "sweep_p%d" % parallel)
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "tools.sweep.main", "--space=" + space,
            "--trials=%d" % k, "--search=grid", "--parallel=%d" % parallel,
            "--devices=" + ",".join("cpu:%d" % i for i in range(k)), "--early_stop=none",
            "--out=" + out, "--", PROGRAM, "--steps=%d" % steps, "--report_every=100"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("BUILD_WORKING_DIRECTORY", None)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    # From the first trial's launch to the last one's exit (the driver's own
    # start-up and its plot at the end are the same either way).
    with open(os.path.join(out, "sweep_state.json")) as f:
        trials = json.load(f)["trials"]
    return max(t["end"] for t in trials) - min(t["start"] for t in trials)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--program", default="", help="sweep_mlp elsewhere than the runfiles")
    args = p.parse_args()
    global PROGRAM
    if args.program:
        PROGRAM = os.path.abspath(args.program)
    tmp = tempfile.mkdtemp(prefix="sweep_overhead.")
    try:
        ms = launch_to_first_step(tmp, args.repeats)
        print("sweep_launch_to_first_step_ms: %.1f ms" % ms)
        k = 2
        seq = statistics.median(sweep_seconds(tmp, 1, args.steps, k) for _ in range(2))
        par = statistics.median(sweep_seconds(tmp, k, args.steps, k) for _ in range(2))
        print("sweep_sequential_k2_s: %.2f s" % seq)
        print("sweep_parallel_k2_s: %.2f s" % par)
        print("sweep_parallel_speedup_k2: %.2f x" % (seq / par))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
