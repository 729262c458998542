#!/bin/bash
# The 4-byte RecvTensor round trip against raw TCP, both pinned to one CPU:
# RUNS runs of `recv_tensor --transfers=0 --ping_kinds=rpc,raw` (default 3),
# each giving the two p50s; prints them and the median over the runs of each
# run's ratio. Run two builds alternately to compare them:
#
#   bench/rtt_ratio.sh [--runs=N] [--pings=P] [BINARY]
#   (BINARY: default bazel-bin/bench/recv_tensor; build it first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
pings=8000
bin=bazel-bin/bench/recv_tensor
for arg in "$@"; do
  case "$arg" in
    --runs=*) runs="${arg#--runs=}" ;;
    --pings=*) pings="${arg#--pings=}" ;;
    -*) echo "usage: bench/rtt_ratio.sh [--runs=N] [--pings=P] [BINARY]" >&2; exit 2 ;;
    *) bin="$arg" ;;
  esac
done
[[ -x "$bin" ]] || { echo "no binary at $bin (bazel build //bench:recv_tensor)" >&2; exit 1; }
rpc=(); raw=()
for ((i = 0; i < runs; i++)); do
  out=$("$bin" --transfers=0 --pings="$pings" --ping_kinds=rpc,raw)
  rpc+=("$(awk '/^recv_tensor_4B_rtt_pinned_p50:/ {print $2}' <<<"$out")")
  raw+=("$(awk '/^raw_tcp_4B_rtt_pinned_p50:/ {print $2}' <<<"$out")")
done
python3 - "${rpc[*]}" "${raw[*]}" <<'PY'
import statistics, sys
rpc = [float(x) for x in sys.argv[1].split()]
raw = [float(x) for x in sys.argv[2].split()]
print("recv_tensor_4B_rtt_pinned_p50_runs: " + " ".join(f"{x:.2f}" for x in rpc) + " us")
print("raw_tcp_4B_rtt_pinned_p50_runs: " + " ".join(f"{x:.2f}" for x in raw) + " us")
print(f"recv_tensor_4B_vs_raw_tcp_pinned: {statistics.median(a / b for a, b in zip(rpc, raw)):.3f}"
      " (median of the runs' ratios; target <= 1.1)")
PY
