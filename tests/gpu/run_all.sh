#!/bin/bash
# The GPU suite and the GPU benchmarks in one command, on a machine with a
# GPU, bazel and the CUDA toolkit (after `bash setup.sh`):
#
#   tests/gpu/run_all.sh [FIGURES_FILE]      (default /tmp/gpu_bench.txt)
#
# 1. nvidia-smi -L
# 2. bazel test //tests/gpu/... //runtime/gpu/... //ops/gpu/... (not cached)
# 3. builds and runs bench/gpu_matmul, bench/gpu_mlp_step,
#    bench/gpu_copy_bandwidth, bench/gpu_nccl_allreduce (NCCL bus bandwidth
#    over all GPUs; no figure with one GPU) and bench/torch_gpu_mlp.py, then
#    the ratios.
# Every `name: value unit` figure is printed and also written to
# FIGURES_FILE. Every step runs even when an earlier one fails; the exit
# status is non-zero when any failed, and the failed steps are listed last.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

figures=${1:-/tmp/gpu_bench.txt}
mkdir -p "$(dirname "$figures")" && : >"$figures" || { echo "run_all: cannot write $figures" >&2; exit 1; }
failed=()
step() { echo; echo "## $*"; }

step "GPUs"
if ! nvidia-smi -L; then
  failed+=("nvidia-smi -L")
fi
{
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# gpus: $(nvidia-smi -L 2>/dev/null | paste -sd ';' -)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null) (working tree may differ)"
} >>"$figures"

step "GPU test suite"
if ! bazel test //tests/gpu/... //runtime/gpu/... //ops/gpu/... \
    --test_output=errors --cache_test_results=no; then
  failed+=("bazel test")
fi

step "building the GPU benchmarks"
benches=(gpu_matmul gpu_mlp_step gpu_copy_bandwidth gpu_nccl_allreduce)
built=1
if ! bazel build "${benches[@]/#/\/\/bench:}"; then
  failed+=("bazel build benchmarks")
  built=0
fi

# Runs a benchmark, printing everything and keeping its figures.
bench() {
  local name=$1
  shift
  step "$name"
  local log
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  grep -E '^[A-Za-z0-9_]+: ' "$log" >>"$figures"
  if grep -q '^gpu: none' "$log"; then
    echo "run_all: $name found no GPU" >&2
    rc=1
  fi
  rm -f "$log"
  if [[ $rc != 0 ]]; then
    failed+=("$name")
  fi
}

if [[ $built == 1 ]]; then
  bench gpu_matmul bazel-bin/bench/gpu_matmul
  bench gpu_mlp_step bazel-bin/bench/gpu_mlp_step
  bench gpu_copy_bandwidth bazel-bin/bench/gpu_copy_bandwidth
  bench gpu_nccl_allreduce bazel-bin/bench/gpu_nccl_allreduce
fi

# The PyTorch peer: the first Python whose torch sees a CUDA device.
py=""
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
      >/dev/null 2>&1; then
    py=$candidate
    break
  fi
done
if [[ -n "$py" ]]; then
  bench torch_gpu_mlp "$py" bench/torch_gpu_mlp.py
else
  step "torch_gpu_mlp"
  echo "# torch_gpu_mlp: skipped (no Python here has torch with CUDA)"
  failed+=("torch_gpu_mlp (no torch with CUDA)")
fi

step "comparison"
value() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); print a[1] }' "$figures" | tail -1; }
compare() {  # name, ours, theirs: speedup theirs/ours
  local ours theirs
  ours=$(value "$2")
  theirs=$(value "$3")
  if [[ -n "$ours" && -n "$theirs" ]]; then
    awk -v o="$ours" -v t="$theirs" -v n="$1" \
      'BEGIN { printf "%s: %.2fx (>= 1 means Sluice is not slower)\n", n, t / o }' |
      tee -a "$figures"
  else
    echo "# $1: skipped (missing $2 or $3)"
  fi
}
compare gpu_mlp_step_speedup_vs_torch gpu_mlp_step torch_gpu_mlp_step
compare gpu_mlp_step_resident_speedup_vs_torch gpu_mlp_step_resident torch_gpu_mlp_step_resident
for p in fp32 tf32 bf16; do
  r=$(value "gpu_matmul_8192_${p}_ratio")
  [[ -n "$r" ]] && echo "gpu_matmul_8192_${p}_ratio: $r (target >= 0.95)"
done

echo
echo "figures: $figures"
if ((${#failed[@]} > 0)); then
  echo "run_all: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run_all: all steps passed"
