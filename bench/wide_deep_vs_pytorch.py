"""examples/wide_deep with 2 ps + 2 workers through the launcher against
PyTorch in one process (bench/torch_wide_deep.py: nn.Embedding(sparse=True),
sparse Adagrad, the same click logs hashed the same way), asynchronous,
side by side in one run, for each table size. Three Sluice figures:

- streamed: the workers read, parse and hash their TFRecords while they
  train (the example's default), over mutual TLS (the default);
- preloaded: the workers parse and hash their shards before training and
  train from memory (`--preload`), as the PyTorch peer does (its ids are
  read and hashed before its clock starts), over mutual TLS;
- preloaded over plaintext (`--insecure`, loopback): what TLS costs.

Each figure is the median of the chief's progress lines after the first,
and the median over --rounds rounds (the rounds alternate the four runs, so
a noisy minute hits them alike). Prints `name: value unit` lines.

    bazel build //tools:launch //examples:wide_deep
    python3 bench/wide_deep_vs_pytorch.py [--rows 18,22] [--rounds 3] \\
        [--torch_python /path/to/python-with-torch]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wide_deep_wire  # noqa: E402


def torch_rate(args, k):
    out = subprocess.run(
        [args.torch_python, os.path.join(os.path.dirname(__file__), "torch_wide_deep.py"),
         f"--rows={k}", f"--data_dir={args.data_dir}"],
        check=True, capture_output=True, text=True).stdout
    m = re.search(rf"torch_wide_deep_2\^{k}_examples_per_s: (\d+)", out)
    if not m:
        raise SystemExit(f"wide_deep_vs_pytorch: no PyTorch figure in:\n{out}")
    return float(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launch", default="bazel-bin/tools/launch")
    p.add_argument("--example", default="bazel-bin/examples/wide_deep")
    p.add_argument("--data_dir", default="/tmp/sluice/click_logs")
    p.add_argument("--rows", default="18,22")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=float, default=3)
    p.add_argument("--torch_python", default=os.environ.get("SLUICE_TORCH_PYTHON", "python3"))
    args = p.parse_args()
    runs = {
        "streamed_tls": ((), ()),
        "preloaded_tls": ((), ("--preload",)),
        "preloaded_plaintext": (("--insecure",), ("--preload",)),
    }
    for k in [int(x) for x in args.rows.split(",") if x]:
        rates = {name: [] for name in list(runs) + ["pytorch"]}
        for _ in range(args.rounds):
            for name, (launch_flags, example_flags) in runs.items():
                r = wide_deep_wire.run(args, k, dense=False, asynchronous=True,
                                       launch_flags=launch_flags, example_flags=example_flags)
                rates[name].append(r["examples_per_s"])
            rates["pytorch"].append(torch_rate(args, k))
        torch = statistics.median(rates["pytorch"])
        print(f"wide_deep_async_2^{k}_pytorch_one_process: {torch:.0f} examples/s")
        for name in runs:
            mine = statistics.median(rates[name])
            print(f"wide_deep_async_2^{k}_{name}: {mine:.0f} examples/s")
            print(f"wide_deep_async_2^{k}_{name}_vs_pytorch: {mine / torch:.2f} x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
