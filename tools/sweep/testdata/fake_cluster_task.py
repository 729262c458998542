#!/usr/bin/env python3
"""A fake task of a sub-cluster trial, for the sweep tests: started by the
launcher once per task with its place in SLUICE_CONFIG.

ps tasks and non-chief workers print a line and then wait to be stopped (a
non-chief worker also prints SLUICE_SWEEP lines with loss 1000, which the
sweep must ignore). The chief (worker 0) reports loss = x + 1/step for
--steps steps, --sleep seconds apart, and exits 0.

Flags (--name=value): x (1), steps (10), sleep (0.05), fail_task (a task,
e.g. "ps:0", that exits 3 with a message on stderr after fail_after_s
seconds, 0.3) when x equals fail_x.
"""
import json
import os
import sys
import time

flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
x = float(flags.get("x", 1))
steps = int(flags.get("steps", 10))
sleep = float(flags.get("sleep", 0.05))
task = json.loads(os.environ["SLUICE_CONFIG"])["task"]
name = "%s:%d" % (task["type"], task["index"])
print("%s: up, SLUICE_NUM_THREADS=%s, cwd=%s"
      % (name, os.environ.get("SLUICE_NUM_THREADS"), os.getcwd()), flush=True)

if flags.get("fail_task") == name and float(flags.get("fail_x", x)) == x:
    time.sleep(float(flags.get("fail_after_s", 0.3)))
    print("fake_cluster_task: %s lost its disk at x=%g" % (name, x), file=sys.stderr, flush=True)
    sys.exit(3)

if name != "worker:0":
    for step in range(1, steps + 1):
        if task["type"] == "worker":
            print('SLUICE_SWEEP {"step": %d, "loss": 1000}' % step, flush=True)
        time.sleep(sleep)
    while True:  # until the launcher stops the cluster
        time.sleep(60)

for step in range(1, steps + 1):
    print('SLUICE_SWEEP {"step": %d, "loss": %r}' % (step, x + 1.0 / step), flush=True)
    time.sleep(sleep)
print("chief done", flush=True)
