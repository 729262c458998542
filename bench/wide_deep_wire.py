"""Bytes on the wire and steps per second of examples/wide_deep over 2 ps +
2 workers through the launcher (mutual TLS on loopback), as the table grows,
against the least a step can move (its distinct rows x (dim + 1) x 4 B, each
way, plus the dense layers, read and updated whole every step: the row
ratios subtract those) and against the same model with dense gradients.

Bytes are the parameter servers' socket traffic: the growth of rchar/wchar in
/proc/<pid>/io of each ps task between two progress lines of the chief (a ps
reads and writes nothing else while training), divided by the worker steps
in between. Prints one `name: value unit` line per figure.

    bazel build //tools:launch //examples:wide_deep
    python3 bench/wide_deep_wire.py [--rows 18,20,22,24] [--dense_rows 18]
"""
import argparse
import re
import statistics
import subprocess
import sys
import time


def ps_io(pids):
    """Summed (rchar, wchar) of the processes."""
    read = written = 0
    for pid in pids:
        with open(f"/proc/{pid}/io") as f:
            fields = dict(line.split(": ") for line in f.read().splitlines())
        read += int(fields["rchar"])
        written += int(fields["wchar"])
    return read, written


def run(args, log2_rows, dense, asynchronous, launch_flags=(), example_flags=()):
    cmd = [args.launch, "--ps=2", "--workers=2", *launch_flags, "--", args.example,
           *example_flags,
           f"--buckets_log2={log2_rows}", f"--data_dir={args.data_dir}",
           f"--epochs={args.dense_epochs if dense else args.epochs}",
           f"--log_every={3 if dense else 10}", "--eval_every_s=100000"]
    if dense:
        cmd.append("--dense_gradients")
    if asynchronous:
        cmd.append("--async")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ps_pids, samples, rates, rows_bytes, log = [], [], [], [], []
    other = 0
    for line in proc.stdout:
        log.append(line)
        m = re.search(r"\[launch\] started ps:\d+ \(pid (\d+)\)", line)
        if m:
            ps_pids.append(int(m.group(1)))
        m = re.search(r"\[worker:0\] step +(\d+) +loss \S+ +(\d+) examples/s", line)
        if m and len(ps_pids) == 2:
            samples.append((int(m.group(1)), ps_io(ps_pids)))
            rates.append(int(m.group(2)))
        m = re.search(r"distinct ids per step: (\d+) bytes of rows each way.*, (\d+) bytes of "
                      r"other variables", line)
        if m:
            rows_bytes.append(int(m.group(1)))
            other = int(m.group(2))
    proc.wait()
    if proc.returncode != 0 or len(samples) < 3 or not rows_bytes:
        sys.stderr.write("".join(log[-30:]))
        raise SystemExit(f"wide_deep_wire: the run at 2^{log2_rows} failed")
    # From the second progress line (the first includes start-up) to the last.
    (step0, (r0, w0)), (step1, (r1, w1)) = samples[1], samples[-1]
    worker_steps = (step1 - step0) * (1 if asynchronous else 2)
    return {
        "in": (r1 - r0) / worker_steps,    # to the ps: ids, gradients
        "out": (w1 - w0) / worker_steps,   # from the ps: rows
        "limit": statistics.mean(rows_bytes),
        "other": other,
        "examples_per_s": statistics.median(rates[1:]),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launch", default="bazel-bin/tools/launch")
    p.add_argument("--example", default="bazel-bin/examples/wide_deep")
    p.add_argument("--data_dir", default="/tmp/sluice/click_logs")
    p.add_argument("--rows", default="18,20,22,24")
    p.add_argument("--dense_rows", default="18")
    p.add_argument("--epochs", type=float, default=0.5)
    p.add_argument("--dense_epochs", type=float, default=0.08)
    args = p.parse_args()
    for mode in ("sync", "async"):
        for k in [int(x) for x in args.rows.split(",") if x]:
            r = run(args, k, dense=False, asynchronous=mode == "async")
            name = f"wide_deep_{mode}_2^{k}"
            print(f"{name}_bytes_to_ps_per_worker_step: {r['in']:.0f} bytes")
            print(f"{name}_bytes_from_ps_per_worker_step: {r['out']:.0f} bytes")
            print(f"{name}_least_row_bytes_each_way: {r['limit']:.0f} bytes")
            print(f"{name}_dense_variable_bytes_each_way: {r['other']:.0f} bytes")
            rows_in, rows_out = r["in"] - r["other"], r["out"] - r["other"]
            print(f"{name}_row_bytes_to_least_ratio_to_ps: {rows_in / r['limit']:.2f} x")
            print(f"{name}_row_bytes_to_least_ratio_from_ps: {rows_out / r['limit']:.2f} x")
            print(f"{name}_examples_per_s: {r['examples_per_s']:.0f} examples/s")
            sys.stdout.flush()
            if mode == "sync" and str(k) in args.dense_rows.split(","):
                d = run(args, k, dense=True, asynchronous=False)
                print(f"{name}_dense_bytes_to_ps_per_worker_step: {d['in']:.0f} bytes")
                print(f"{name}_dense_examples_per_s: {d['examples_per_s']:.0f} examples/s")
                print(f"{name}_sparse_bytes_fewer_than_dense: {d['in'] / r['in']:.1f} x")
                print(f"{name}_sparse_speedup_over_dense: "
                      f"{r['examples_per_s'] / d['examples_per_s']:.1f} x")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
