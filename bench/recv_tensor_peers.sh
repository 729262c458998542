#!/bin/bash
# RecvTensor between two processes on 127.0.0.1 against its peers, in one run:
# Sluice's Thrift RecvTensor, a raw TCP loop with the same process layout,
# iperf3 (one stream, 1 MiB writes) and torch.distributed gloo send/recv.
# Prints every figure as `name: value unit`, then the ratios to the targets.
#
#   bench/recv_tensor_peers.sh [--quick] [--no-build]
#   RECV_TENSOR_BIN=/path/to/recv_tensor bench/recv_tensor_peers.sh --no-build
#                                   (another build, e.g. to compare two commits)
#
# The 64 MiB and Sluice/raw TCP 4-byte figures come from rounds that
# alternate Sluice and gloo (each figure is the median over the rounds), so
# that load from elsewhere on a shared machine hits both alike; gloo's
# round trips (slow to take) are measured once after the rounds. iperf3 streams from one 1 MiB buffer that
# stays in cache, so it is a ceiling rather than a peer for 64 MiB tensors.
# Skips iperf3 / gloo with a `# ...` line when they are not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

transfers=20; pings=3000; rounds=3; build=1
for arg in "$@"; do
  case "$arg" in
    --quick) transfers=10; pings=1000; rounds=1 ;;
    --no-build) build=0 ;;
    *) echo "usage: bench/recv_tensor_peers.sh [--quick] [--no-build]" >&2; exit 2 ;;
  esac
done

if [[ $build == 1 ]] && ! bazel build -c opt //bench:recv_tensor >/dev/null 2>&1; then
  bazel build -c opt //bench:recv_tensor 2>&1 | grep -E "error|ERROR" | head -20 >&2
  echo "recv_tensor_peers: the build failed" >&2
  exit 1
fi
bin="${RECV_TENSOR_BIN:-$(bazel info -c opt bazel-bin 2>/dev/null)/bench/recv_tensor}"
py=/usr/bin/python3
have_gloo=0
"$py" -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null && have_gloo=1

out=$(mktemp)
rounds_out=$(mktemp)
iperf_pid=""
cleanup() {
  rm -f "$out" "$rounds_out"
  if [[ -n "$iperf_pid" ]]; then kill "$iperf_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
run() { "$@" | tee -a "$out"; }

echo "# machine: $(nproc) vCPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## 64 MiB (Sluice RecvTensor, raw TCP, gloo) and 4-byte round trips (Sluice, raw TCP),"
echo "## $rounds alternating round(s)"
for ((r = 1; r <= rounds; r++)); do
  "$bin" --transfers="$transfers" --pings=0 | tee -a "$rounds_out" | sed 's/^/# round '"$r"': /'
  if [[ $have_gloo == 1 ]]; then
    "$py" bench/gloo_sendrecv.py --mib 64 --transfers "$transfers" --pings 0 |
      tee -a "$rounds_out" | sed 's/^/# round '"$r"': /'
  fi
  "$bin" --transfers=0 --pings="$pings" | tee -a "$rounds_out" | sed 's/^/# round '"$r"': /'
done
# The median over the rounds of each figure.
awk -F': ' '{ split($2, a, " "); n[$1]++; v[$1, n[$1]] = a[1] + 0; u[$1] = a[2] }
  END { for (k in n) {
          c = n[k]; for (i = 1; i <= c; i++) x[i] = v[k, i]
          for (i = 2; i <= c; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
          printf "%s: %.2f %s\n", k, c % 2 ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2, u[k] } }' \
  "$rounds_out" | sort | tee -a "$out"
[[ $have_gloo == 1 ]] || echo "# gloo_sendrecv: skipped (torch.distributed with gloo is not installed for $py)"

echo "## iperf3, one stream, 1 MiB writes"
if command -v iperf3 >/dev/null; then
  port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  iperf3 -s -1 -B 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  iperf_pid=$!
  sleep 0.5
  gbytes=$(iperf3 -c 127.0.0.1 -p "$port" -l 1M -t 3 -f G 2>/dev/null |
    awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "GBytes/sec") print $(i - 1) }')
  wait "$iperf_pid" 2>/dev/null || true
  iperf_pid=""
  if [[ -n "$gbytes" ]]; then
    # GBytes here are GiB; the other figures are 10^9 bytes.
    awk -v g="$gbytes" 'BEGIN { printf "iperf3_1MiB_writes: %.2f GB/s\n", g * 1.073741824 }' | tee -a "$out"
  else
    echo "# iperf3: no result"
  fi
else
  echo "# iperf3: skipped (not installed)"
fi

echo "## 4-byte round trips: gloo"
if [[ $have_gloo == 1 ]]; then
  run "$py" bench/gloo_sendrecv.py --mib 0 --pings "$pings"
else
  echo "# gloo_sendrecv: skipped"
fi

value() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); print a[1] }' "$out" | tail -1; }
ratio() {  # name a b note
  if [[ -n "$2" && -n "$3" ]]; then
    awk -v n="$1" -v a="$2" -v b="$3" -v t="$4" 'BEGIN { printf "%s: %.2f (%s)\n", n, a / b, t }'
  fi
}
echo "## comparison"
ratio recv_tensor_64MiB_vs_gloo "$(value recv_tensor_64MiB)" "$(value gloo_sendrecv_64MiB)" "target >= 1.2"
ratio recv_tensor_64MiB_fresh_buffer_vs_gloo "$(value recv_tensor_64MiB_fresh_buffer)" \
  "$(value gloo_sendrecv_64MiB)" "gloo receives into one reused tensor"
ratio recv_tensor_64MiB_vs_raw_tcp "$(value recv_tensor_64MiB)" "$(value raw_tcp_64MiB)" "plain socket loop"
ratio recv_tensor_64MiB_vs_raw_tcp_rcvlowat "$(value recv_tensor_64MiB)" "$(value raw_tcp_64MiB_rcvlowat)" \
  "the same wake-up tuning; 1 = no overhead"
ratio recv_tensor_4B_p50_vs_raw_tcp_pinned "$(value recv_tensor_4B_rtt_pinned_p50)" \
  "$(value raw_tcp_4B_rtt_pinned_p50)" "target <= 1.1"
ratio recv_tensor_4B_p50_vs_raw_tcp_unpinned "$(value recv_tensor_4B_rtt_unpinned_p50)" \
  "$(value raw_tcp_4B_rtt_unpinned_p50)" "bimodal: see bench/recv_tensor.cc"
ratio recv_tensor_4B_p50_vs_gloo_unpinned "$(value recv_tensor_4B_rtt_unpinned_p50)" \
  "$(value gloo_4B_rtt_unpinned_p50)" "target < 1"
ratio recv_tensor_4B_p50_vs_gloo_pinned "$(value recv_tensor_4B_rtt_pinned_p50)" \
  "$(value gloo_4B_rtt_pinned_p50)" "target < 1"
ratio recv_tensor_tls_64MiB_vs_plaintext "$(value recv_tensor_tls_64MiB)" "$(value recv_tensor_64MiB)" \
  "target >= 0.67 (TLS within 1.5x)"
ratio recv_tensor_tls_64MiB_vs_gloo "$(value recv_tensor_tls_64MiB)" "$(value gloo_sendrecv_64MiB)" \
  "gloo is plaintext"
ratio recv_tensor_tls_4B_p50_vs_plaintext_pinned "$(value recv_tensor_tls_4B_rtt_pinned_p50)" \
  "$(value recv_tensor_4B_rtt_pinned_p50)" "the same RPC over TLS"
