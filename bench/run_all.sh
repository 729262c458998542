#!/bin/bash
# Builds Sluice's benchmarks and runs them, with the PyTorch peer, in one run;
# prints every figure as `name: value unit`, then the comparison ratios.
#
#   bench/run_all.sh [--quick] [--no-build]   (from anywhere in the repository)
#
# --quick: fewer repetitions; --no-build: run the binaries already in
# bazel-bin (e.g. while someone else's half-edited file breaks the build).
# .bazelrc already builds with -O2. The PyTorch peer needs Debian's
# python3-torch for /usr/bin/python3; when it is missing we try apt-get, and
# skip the comparison with a clear line if that fails.
set -euo pipefail
cd "$(dirname "$0")/.."

reps=200; steps=50; secs=2; build=1
for arg in "$@"; do
  case "$arg" in
    --quick) reps=50; steps=20; secs=0.5 ;;
    --no-build) build=0 ;;
    *) echo "usage: bench/run_all.sh [--quick] [--no-build]" >&2; exit 2 ;;
  esac
done

echo "# machine: $(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
targets=(//bench:executor_overhead //bench:matmul //bench:mlp_step //bench:while_loop //bench:process_start
         //tools:server //tools:runner //tools:launch)
if [[ $build == 1 ]] && ! bazel build "${targets[@]}" >/dev/null 2>&1; then
  bazel build "${targets[@]}" 2>&1 | grep -E "error|ERROR" | head -20 >&2
  echo "run_all: the build failed (see above); --no-build runs the binaries already built" >&2
  exit 1
fi
bin=bazel-bin/bench

out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() { "$@" | tee -a "$out"; }

echo "## executor overhead"
run "$bin/executor_overhead" --reps="$reps"
echo "## matmul: Session::Run vs cblas_sgemm"
run "$bin/matmul" --sizes=256,1024,2048 --seconds="$secs"
echo "## MLP 784-1024-1024-10, batch 256, SGD: Sluice"
run "$bin/mlp_step" --steps="$steps" 2>&1
echo "## the same, nodes run one at a time (SessionOptions::inter_op_parallelism = 1)"
"$bin/mlp_step" --steps="$steps" --inter_op=1 --profile=false 2>&1 |
  sed 's/^mlp_step:/mlp_step_inter_op1:/' | tee -a "$out"
echo "## MLP 784-1024-1024-10, batch 256, SGD: PyTorch"
py=/usr/bin/python3
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "# python3-torch missing; trying: apt-get install -y python3-torch"
  apt-get install -y python3-torch >/dev/null 2>&1 || true
fi
if "$py" -c "import torch" 2>/dev/null; then
  run "$py" bench/pytorch_mlp.py --steps="$steps"
else
  echo "# pytorch_mlp: skipped (python3-torch is not installed for $py)"
fi

echo "## a 1,000-iteration while loop of small ops: Sluice (tf.while_loop) vs a Python loop of PyTorch eager ops"
run "$bin/while_loop" --iterations=1000 --reps="$steps"
if "$py" -c "import torch" 2>/dev/null; then
  run "$py" bench/torch_loop.py --iterations=1000 --reps="$steps"
else
  echo "# torch_loop: skipped (python3-torch is not installed for $py)"
fi

# Comparison ratios from the figures above.
value() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); print a[1] }' "$out" | tail -1; }
echo "## comparison"
chain=$(value executor_chain_10000)
[[ -n "$chain" ]] && echo "executor_chain_10000_vs_target_1us: $chain us/node (target <= 1)"
ratio=$(value matmul_1024_ratio)
[[ -n "$ratio" ]] && echo "matmul_1024_ratio_vs_target: $ratio (target >= 0.95)"
sl=$(value mlp_step); s1=$(value mlp_step_inter_op1); pt=$(value pytorch_mlp_step)
if [[ -n "$sl" && -n "$pt" ]]; then
  # Best configuration against best configuration (PyTorch's is tuned too).
  awk -v s="$sl" -v p="$pt" 'BEGIN { printf "mlp_step_speedup_vs_pytorch_default_executor: %.2fx\n", p / s }'
  [[ -n "$s1" ]] && awk -v s="$s1" -v p="$pt" 'BEGIN { printf "mlp_step_speedup_vs_pytorch_inter_op1: %.2fx\n", p / s }'
  awk -v a="$sl" -v b="${s1:-$sl}" -v p="$pt" 'BEGIN { s = a < b ? a : b; printf "mlp_step_speedup_vs_pytorch: %.2fx (best Sluice configuration vs best PyTorch configuration)\n", p / s }'
else
  echo "# mlp_step_speedup_vs_pytorch: skipped (no PyTorch figure)"
fi

wl=$(value while_loop_1000_parallel10); tl=$(value torch_loop_1000)
if [[ -n "$wl" && -n "$tl" ]]; then
  awk -v s="$wl" -v p="$tl" 'BEGIN { printf "while_loop_speedup_vs_pytorch_python_loop: %.2fx\n", p / s }'
fi

echo "## starting a tool: peak RSS and wall time of --help (cuBLAS and NCCL are opened on first GPU use)"
run "$bin/process_start" --runs=20 bazel-bin/tools/server bazel-bin/tools/runner bazel-bin/tools/launch

echo "## RecvTensor over Thrift vs raw TCP, iperf3 and gloo (bench/recv_tensor_peers.sh)"
peer_flags=()
[[ $reps == 50 ]] && peer_flags+=(--quick)
[[ $build == 0 ]] && peer_flags+=(--no-build)
bench/recv_tensor_peers.sh "${peer_flags[@]}" || echo "# recv_tensor_peers: failed"

echo "## all-reduce across processes vs gloo, fused vs unfused, all-reduce vs ps step (bench/allreduce.sh)"
bench/allreduce.sh "${peer_flags[@]}" || echo "# allreduce: failed"
