#!/bin/bash
# The GPU suite on a machine without Bazel: run from the folder that
# tests/gpu/bundle.sh wrote (it is copied there as run.sh).
#
#   sluice-gpu/run.sh [--quick] [FIGURES_FILE]     (default sluice-gpu/figures.txt)
#
# SLUICE_GPU_BUDGET_S (default 3600) bounds the whole run: a step that would
# start past it is listed as SKIP, and each step's own limit is cut to what
# is left, so the table is printed even on a short lease.
#
# 1. nvidia-smi -L
# 2. every GPU test binary (gtest; a test that skips says why)
# 3. the examples on the GPU and, for reference, on the CPU (the GPUs hidden
#    with CUDA_VISIBLE_DEVICES=): mlp, mirrored_mlp (one replica per GPU, and
#    GPU:0 + CPU:0), model_parallel_mlp, between_graph_mlp --sync and --async
#    and multi_worker_mlp through the launcher (two workers on one machine);
#    on a one-GPU machine also model_parallel_mlp (plain and pipelined) and
#    mirrored_mlp over two logical GPUs of the card (SLUICE_LOGICAL_GPUS=2);
#    each must reach its CPU accuracy (within 0.01); and the Fashion-MNIST
#    CNN when the bundle carries its data (three seeds each side, medians
#    within 0.01; then bfloat16 mixed precision on the GPU within 0.005 of
#    float on the GPU for one seed)
# 4. the benchmarks (gpu_matmul, gpu_mlp_step, gpu_lstm_step, gpu_cnn_step,
#    gpu_copy_bandwidth, gpu_nccl_allreduce) and the PyTorch peers
#    bench/torch_gpu_mlp.py, bench/torch_gpu_matmul.py,
#    bench/torch_gpu_lstm.py (nn.LSTM on cuDNN) and bench/torch_gpu_cnn.py
#    (autocast bf16: eager, CUDA graph, torch.compile)
#    (skipped with --quick)
# Every step runs even when an earlier one fails, under a time limit. Logs go
# to sluice-gpu/logs/; `name: value unit` figures to FIGURES_FILE. A table of
# every step is printed last; the exit status is 1 when any step failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
quick=0
if [[ "${1:-}" == "--quick" ]]; then
  quick=1
  shift
fi
figures=${1:-$here/figures.txt}
logs=$here/logs
mkdir -p "$logs"
: >"$figures"
# Every program says why a step it runs is not recorded as a CUDA graph.
export SLUICE_LOG_STEP_CAPTURE=1
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$here/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

budget=${SLUICE_GPU_BUDGET_S:-3600}
rows=()      # "step|status|detail"
failures=0
row() {  # step status detail
  rows+=("$1|$2|$3")
  [[ "$2" == FAIL ]] && failures=$((failures + 1))
  printf '== %-44s %-5s %s\n' "$1" "$2" "$3"
}

# Runs a command with a time limit (cut to what is left of the budget),
# output to logs/NAME.log; returns its status (125 when past the budget).
run_logged() {  # name limit_s command...
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS - 5))
  echo "## $name: $*" >"$logs/$name.log"
  if ((left < 10)); then
    echo "skipped: the run's budget of ${budget} s is spent" >>"$logs/$name.log"
    return 125
  fi
  ((limit > left)) && limit=$left
  local start=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >>"$logs/$name.log" 2>&1
  local rc=$?
  echo "## $name: exit $rc after $((SECONDS - start)) s" >>"$logs/$name.log"
  return $rc
}

echo "## GPUs"
if nvidia-smi -L; then
  {
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# gpus: $(nvidia-smi -L | paste -sd ';' -)"
    echo "# driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  } >>"$figures"
else
  row nvidia-smi FAIL "no GPU visible"
fi

# ---- 2. Tests ---------------------------------------------------------------
for t in "$bin"/*_test; do
  name=$(basename "$t")
  run_logged "$name" 600 "$t" --gtest_color=no
  rc=$?
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$logs/$name.log" | grep -oE '[0-9]+$' || echo 0)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+ test' "$logs/$name.log" | grep -oE '[0-9]+' || echo 0)
  failed_tests=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$logs/$name.log" | grep -v ' listed below' |
                   sed 's/^\[  FAILED  \] //; s/ (.*//' | sort -u | paste -sd ' ' -)
  detail="${passed:-0} passed, ${skipped:-0} skipped"
  if [[ $rc == 0 ]]; then
    row "$name" ok "$detail"
  else
    row "$name" FAIL "exit $rc; $detail; failed: ${failed_tests:-see logs/$name.log}"
  fi
done

# ---- 3. Examples, GPU against CPU ---------------------------------------------
# "final: loss=L accuracy=A" -> A
accuracy_of() { sed -nE 's/.*final: loss=[^ ]+ accuracy=([0-9.]+).*/\1/p' "$1" | tail -1; }

# Runs one example on the GPU and its reference on the CPU (the GPUs hidden)
# and compares their final accuracy. The CPU command is the GPU one unless
# cpu_cmd (an array) is set by the caller.
cpu_cmd=()
example() {  # name command...
  local name=$1
  shift
  local reference=("$@")
  ((${#cpu_cmd[@]} > 0)) && reference=("${cpu_cmd[@]}")
  cpu_cmd=()
  run_logged "$name.gpu" 300 "$@"
  local rc_gpu=$?
  CUDA_VISIBLE_DEVICES= run_logged "$name.cpu" 300 "${reference[@]}"
  local rc_cpu=$?
  local gpu cpu
  gpu=$(accuracy_of "$logs/$name.gpu.log")
  cpu=$(accuracy_of "$logs/$name.cpu.log")
  if [[ $rc_gpu != 0 || -z "$gpu" ]]; then
    row "$name" FAIL "GPU run: exit $rc_gpu, $(tail -1 "$logs/$name.gpu.log" | cut -c1-120)"
  elif [[ $rc_cpu != 0 || -z "$cpu" ]]; then
    row "$name" FAIL "CPU run: exit $rc_cpu, $(tail -1 "$logs/$name.cpu.log" | cut -c1-120)"
  elif awk -v g="$gpu" -v c="$cpu" 'BEGIN { exit !(g - c >= -0.01) }'; then
    row "$name" ok "accuracy GPU $gpu, CPU $cpu"
  else
    row "$name" FAIL "accuracy GPU $gpu < CPU $cpu"
  fi
  echo "example_${name}_accuracy_gpu: $gpu" >>"$figures"
  echo "example_${name}_accuracy_cpu: $cpu" >>"$figures"
}

example mlp "$bin/mlp"
example mirrored_mlp "$bin/mirrored_mlp"
cpu_cmd=("$bin/mirrored_mlp" --replicas=2)
example mirrored_mlp_gpu_cpu "$bin/mirrored_mlp" --devices=GPU:0,CPU:0
example model_parallel_mlp "$bin/model_parallel_mlp"
example between_graph_sync \
  "$bin/launch" --ps=1 --workers=2 -- "$bin/between_graph_mlp" --sync --logdir=
example between_graph_async \
  "$bin/launch" --ps=1 --workers=2 -- "$bin/between_graph_mlp" --async --logdir=
example multi_worker_mlp "$bin/launch" --workers=2 -- "$bin/multi_worker_mlp"

# Logical GPUs (runtime/gpu/logical_gpus.h): with one card, the multi-GPU
# examples over two logical GPUs carved from it (layers, pipelined
# micro-batches, replicas), each against its reference over CPU:0 and CPU:1.
if [[ $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') == 1 ]]; then
  export SLUICE_LOGICAL_GPUS=2
  example model_parallel_mlp_logical_gpus "$bin/model_parallel_mlp"
  example pipelined_mlp_logical_gpus "$bin/model_parallel_mlp" --micro_batches=4
  cpu_cmd=("$bin/mirrored_mlp" --replicas=2)
  example mirrored_mlp_logical_gpus "$bin/mirrored_mlp"
  unset SLUICE_LOGICAL_GPUS
fi

# The Fashion-MNIST CNN (one process), when the bundle carries the dataset
# (data/fashion-mnist: Debian's IDX files; bundle.sh may carry a subset of the
# training images to fit a transfer limit). The GPU's random ops draw other
# numbers than the CPU's for the same seed, so one GPU run against one CPU run
# compares two initializations: each side trains once per seed
# (SLUICE_GPU_CNN_SEEDS, default "1 2 3") and the medians of the test
# accuracies are compared (within 0.01). On 2 cores here, seeds 1-3 at 2
# epochs on 40,000 images gave 0.8839, 0.8791, 0.8882.
cnn_accuracy() { sed -nE 's/^final: test accuracy ([0-9.]+) .*/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
if [[ -d "$here/data/fashion-mnist" ]]; then
  cnn_args=(--source_dir="$here/data/fashion-mnist" --data_dir="$work/fashion_mnist"
            --epochs="${SLUICE_GPU_CNN_EPOCHS:-2}" --max_train_s=150 --eval_every_s=1000)
  gpu_accs=() cpu_accs=() cnn_failed=""
  for seed in ${SLUICE_GPU_CNN_SEEDS:-1 2 3}; do
    run_logged "fashion_mnist_cnn.gpu.seed$seed" 240 "$bin/fashion_mnist_cnn" "${cnn_args[@]}" --seed="$seed"
    rc=$?
    a=$(cnn_accuracy "$logs/fashion_mnist_cnn.gpu.seed$seed.log")
    [[ $rc != 0 || -z "$a" ]] && cnn_failed+=" GPU seed $seed: exit $rc;"
    gpu_accs+=("$a")
    CUDA_VISIBLE_DEVICES= run_logged "fashion_mnist_cnn.cpu.seed$seed" 240 \
      "$bin/fashion_mnist_cnn" "${cnn_args[@]}" --seed="$seed"
    rc=$?
    a=$(cnn_accuracy "$logs/fashion_mnist_cnn.cpu.seed$seed.log")
    [[ $rc != 0 || -z "$a" ]] && cnn_failed+=" CPU seed $seed: exit $rc;"
    cpu_accs+=("$a")
  done
  gpu=$(printf '%s\n' "${gpu_accs[@]}" | grep . | median)
  cpu=$(printf '%s\n' "${cpu_accs[@]}" | grep . | median)
  detail="median test accuracy GPU $gpu (${gpu_accs[*]}), CPU $cpu (${cpu_accs[*]})"
  if [[ -n "$cnn_failed" ]]; then
    row fashion_mnist_cnn FAIL "$cnn_failed"
  elif awk -v g="$gpu" -v c="$cpu" 'BEGIN { exit !(g - c >= -0.01) }'; then
    row fashion_mnist_cnn ok "$detail"
  else
    row fashion_mnist_cnn FAIL "$detail"
  fi
  echo "example_fashion_mnist_cnn_accuracy_gpu: $gpu" >>"$figures"
  echo "example_fashion_mnist_cnn_accuracy_cpu: $cpu" >>"$figures"
  # Mixed precision (bfloat16) on the GPU against float on the GPU, from the
  # same seed (so the same initial weights and batch order): within 0.005
  # (half a point) of test accuracy.
  mixed_seed=${SLUICE_GPU_CNN_MIXED_SEED:-1}
  float_acc=$(cnn_accuracy "$logs/fashion_mnist_cnn.gpu.seed$mixed_seed.log")
  run_logged "fashion_mnist_cnn.gpu_bf16.seed$mixed_seed" 240 "$bin/fashion_mnist_cnn" \
    "${cnn_args[@]}" --seed="$mixed_seed" --mixed_precision
  rc=$?
  mixed_acc=$(cnn_accuracy "$logs/fashion_mnist_cnn.gpu_bf16.seed$mixed_seed.log")
  detail="seed $mixed_seed test accuracy bfloat16 $mixed_acc, float $float_acc"
  if [[ $rc != 0 || -z "$mixed_acc" || -z "$float_acc" ]]; then
    row fashion_mnist_cnn_mixed_precision FAIL "exit $rc; $detail"
  elif awk -v m="$mixed_acc" -v f="$float_acc" 'BEGIN { exit !(m - f >= -0.005) }'; then
    row fashion_mnist_cnn_mixed_precision ok "$detail"
  else
    row fashion_mnist_cnn_mixed_precision FAIL "$detail"
  fi
  echo "example_fashion_mnist_cnn_accuracy_gpu_bf16: $mixed_acc" >>"$figures"
else
  row fashion_mnist_cnn SKIP "the bundle carries no data/fashion-mnist"
fi

# ---- 4. Benchmarks and the PyTorch peer -------------------------------------------
bench() {  # name command...
  local name=$1
  shift
  run_logged "$name" 400 "$@"
  local rc=$?
  grep -E '^[A-Za-z0-9_]+: ' "$logs/$name.log" >>"$figures"
  if [[ $rc != 0 ]]; then
    row "$name" FAIL "exit $rc, $(tail -1 "$logs/$name.log" | cut -c1-120)"
  elif grep -q '^gpu: none' "$logs/$name.log"; then
    row "$name" FAIL "found no GPU"
  else
    row "$name" ok "$(grep -cE '^[A-Za-z0-9_]+: ' "$logs/$name.log") figures"
  fi
}

if [[ $quick == 0 ]]; then
  bench gpu_matmul "$bin/gpu_matmul"
  # SLUICE_LOG_FUSED_GEMM: the log says where a fused product fell back.
  SLUICE_LOG_FUSED_GEMM=1 bench gpu_mlp_step "$bin/gpu_mlp_step"
  # SLUICE_LOG_STEP_CAPTURE: the log says why a step was not recorded.
  SLUICE_LOG_STEP_CAPTURE=1 bench gpu_lstm_step "$bin/gpu_lstm_step"
  bench gpu_cnn_step "$bin/gpu_cnn_step"
  bench gpu_copy_bandwidth "$bin/gpu_copy_bandwidth"
  bench gpu_nccl_allreduce "$bin/gpu_nccl_allreduce"
  if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
      >/dev/null 2>&1; then
    bench torch_gpu_mlp python3 "$here/bench/torch_gpu_mlp.py"
    bench torch_gpu_matmul python3 "$here/bench/torch_gpu_matmul.py"
    bench torch_gpu_lstm python3 "$here/bench/torch_gpu_lstm.py"
    bench torch_gpu_cnn python3 "$here/bench/torch_gpu_cnn.py"
  else
    row torch_gpu_mlp FAIL "python3 has no torch with CUDA"
  fi
  ratio() {  # name ours theirs: theirs / ours
    local o t
    o=$(awk -F': ' -v k="$2" '$1 == k { split($2, a, " "); v = a[1] } END { print v }' "$figures")
    t=$(awk -F': ' -v k="$3" '$1 == k { split($2, a, " "); v = a[1] } END { print v }' "$figures")
    [[ -n "$o" && -n "$t" ]] &&
      awk -v o="$o" -v t="$t" -v n="$1" 'BEGIN { printf "%s: %.2f x\n", n, t / o }' >>"$figures"
  }
  ratio gpu_mlp_step_speedup_vs_torch gpu_mlp_step torch_gpu_mlp_step
  ratio gpu_mlp_step_resident_speedup_vs_torch gpu_mlp_step_resident torch_gpu_mlp_step_resident
  ratio gpu_mlp_step_resident_speedup_vs_torch_cuda_graph gpu_mlp_step_resident \
    torch_gpu_mlp_step_cuda_graph
  ratio gpu_lstm_step_speedup_vs_torch_cudnn gpu_lstm_step torch_gpu_lstm_step
  ratio gpu_cnn_step_bf16_speedup_vs_torch_best gpu_cnn_step_bf16 torch_gpu_cnn_step_bf16_best
  ratio gpu_cnn_step_speedup_vs_torch_eager gpu_cnn_step torch_gpu_cnn_step
  ratio gpu_mlp_step_capture_speedup gpu_mlp_step gpu_mlp_step_executor
  ratio gpu_mlp_step_resident_capture_speedup gpu_mlp_step_resident \
    gpu_mlp_step_resident_executor
  ratio gpu_mlp_step_resident_fusion_speedup gpu_mlp_step_resident \
    gpu_mlp_step_resident_unfused
fi

echo
echo "## figures ($figures)"
cat "$figures"
echo
echo "## summary (logs in $logs)"
printf '%-46s %-5s %s\n' step result detail
for r in "${rows[@]}"; do
  IFS='|' read -r s st d <<<"$r"
  printf '%-46s %-5s %s\n' "$s" "$st" "$d"
done
echo "${#rows[@]} steps, $failures failed"
[[ $failures == 0 ]]
