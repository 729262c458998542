#!/usr/bin/env python3
"""A fake training program for the sweep tests: reports loss = x + 1/step.

Flags (--name=value): x (default 1), steps (10), sleep (seconds per step,
0.01), fail_x (exit 3 with a message on stderr when x equals it), slow_x and
slow_unless (when x equals slow_x, sleep 60 s per step unless the file
slow_unless exists), runs_log (append "x=<x>" to this file at start), start_delay (seconds of
silence before anything is printed).
Prints its CUDA_VISIBLE_DEVICES and SLUICE_NUM_THREADS first.
"""
import os
import sys
import time

flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
x = float(flags.get("x", 1))
steps = int(flags.get("steps", 10))
sleep = float(flags.get("sleep", 0.01))
time.sleep(float(flags.get("start_delay", 0)))
print("ENV CUDA_VISIBLE_DEVICES=%s" % os.environ.get("CUDA_VISIBLE_DEVICES"))
print("ENV SLUICE_NUM_THREADS=%s" % os.environ.get("SLUICE_NUM_THREADS"))
sys.stdout.flush()
if "runs_log" in flags:
    with open(flags["runs_log"], "a") as f:
        f.write("x=%g\n" % x)
if "fail_x" in flags and float(flags["fail_x"]) == x:
    print("fake_trial: step 1 of %d" % steps)
    print("fake_trial: out of cheese at x=%g" % x, file=sys.stderr)
    sys.exit(3)
if "slow_x" in flags and float(flags["slow_x"]) == x and \
        not os.path.exists(flags.get("slow_unless", "")):
    sleep = 60
for step in range(1, steps + 1):
    print('SLUICE_SWEEP {"step": %d, "loss": %r, "accuracy": %r}' % (step, x + 1.0 / step, 1.0 / x))
    sys.stdout.flush()
    time.sleep(sleep)
print("done")
