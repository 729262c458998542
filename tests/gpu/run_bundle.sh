#!/bin/bash
# The GPU suite on a machine without Bazel: run from the folder that
# tests/gpu/bundle.sh wrote (it is copied there as run.sh).
#
#   sluice-gpu/run.sh [--quick] [FIGURES_FILE]     (default sluice-gpu/figures.txt)
#
# SLUICE_GPU_BUDGET_S (default 3600) bounds the whole run: a step that would
# start with under 10 s of it left is not started and is listed as SKIP, and
# each step's own limit (its cap below, near what it cost on an H200) is cut
# to what is left, so the table is printed even on a short lease. Give the
# device call a timeout of at least the budget + 60 s.
#
# Beside FIGURES_FILE it writes, as the run goes (so that a kill at the
# lease's limit still leaves them):
#   failures.txt  each step that failed, timed out or was skipped, with the
#                 last 40 lines of its logs
#   logs.tgz      sluice-gpu/logs/, refreshed after every step and on exit
# (three files: the device machine brings back at most eight).
#
# The steps, the figures first and the long training runs last:
# 1. nvidia-smi -L
# 2. every GPU test binary (gtest; a test that skips says why); caps:
#    gpu_kernels_test 120 s, the others 60 s
# 3. the benchmarks, each followed by its PyTorch peer (skipped with --quick):
#    gpu_mlp_step and bench/torch_gpu_mlp.py, gpu_lstm_step and
#    bench/torch_gpu_lstm.py (nn.LSTM on cuDNN), gpu_cnn_step and
#    bench/torch_gpu_cnn.py (autocast bf16: eager, CUDA graph, torch.compile),
#    gpu_matmul and bench/torch_gpu_matmul.py, then gpu_copy_bandwidth and
#    gpu_nccl_allreduce; then the ratios between them (a missing operand is
#    a `# ratio NAME: missing X` line and fails the `ratios` step). Caps: 60 s
#    for each benchmark, 90 s for a peer, 150 s for torch_gpu_cnn.py
#    (torch.compile starts cold). The peers run with PYTHONUNBUFFERED=1 and
#    the LD_LIBRARY_PATH this script was started with, not the bundle's lib/.
# 4. the examples on the GPU and, for reference, on the CPU (the GPUs hidden
#    with CUDA_VISIBLE_DEVICES=), 45 s each side: mlp, mirrored_mlp (one
#    replica per GPU, and GPU:0 + CPU:0), model_parallel_mlp, between_graph_mlp
#    --sync and --async and multi_worker_mlp through the launcher (two workers
#    on one machine); on a one-GPU machine also model_parallel_mlp (plain and
#    pipelined) and mirrored_mlp over two logical GPUs of the card
#    (SLUICE_LOGICAL_GPUS=2); each must reach its CPU accuracy (within 0.01).
#    A CPU reference command runs once and is shared by the examples that
#    name it.
# 5. the Fashion-MNIST CNN when the bundle carries its data, 60 s a run
#    (three seeds each side, medians within 0.01; then bfloat16 mixed
#    precision on the GPU within 0.005 of float on the GPU for one seed)
# Every step runs even when an earlier one fails, under a time limit. Logs go
# to sluice-gpu/logs/; `name: value unit` figures to FIGURES_FILE. A table of
# every step is printed last (also when the script is stopped by TERM or
# INT); the exit status is 1 when any step failed (a SKIP alone does not
# fail the run: the last line counts them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
quick=0
if [[ "${1:-}" == "--quick" ]]; then
  quick=1
  shift
fi
figures=${1:-$here/figures.txt}
figures_dir=$(cd "$(dirname "$figures")" && pwd)
failures_file=$figures_dir/failures.txt
archive=$figures_dir/logs.tgz
logs=$here/logs
mkdir -p "$logs"
: >"$figures"
echo "# the steps that failed, timed out or were skipped, each with the end of its logs" \
  >"$failures_file"

# The Python peers get the LD_LIBRARY_PATH this script was started with: the
# bundle's lib/ (Debian's libz, libssl, libgomp, libprotobuf, libpng) must not
# reach torch, torch.compile's Inductor workers or the compilers Triton runs.
if [[ -n "${LD_LIBRARY_PATH+set}" ]]; then
  py=(env "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" python3)
else
  py=(env -u LD_LIBRARY_PATH python3)
fi
# A peer killed at its limit still leaves what it printed in its log.
export PYTHONUNBUFFERED=1
# Every program says why a step it runs is not recorded as a CUDA graph.
export SLUICE_LOG_STEP_CAPTURE=1
export SLUICE_TESTDATA="$here/testdata"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$here/bin
work=$(mktemp -d)

budget=${SLUICE_GPU_BUDGET_S:-3600}
rows=()      # "step|status|detail"
failures=0
skips=0

# logs/ as one archive beside the figures, written whole then renamed.
pack_logs() {
  tar -czf "$archive.part" -C "$here" logs 2>/dev/null && mv -f "$archive.part" "$archive"
}

# One row of the table. A row that is not ok also goes to failures.txt with
# the last 40 lines of each named log (logs/NAME.log); every row refreshes
# logs.tgz.
row() {  # step status detail [log names...]
  local step=$1 status=$2 detail=$3 l
  shift 3
  rows+=("$step|$status|$detail")
  [[ "$status" == FAIL ]] && failures=$((failures + 1))
  [[ "$status" == SKIP ]] && skips=$((skips + 1))
  printf '== %-44s %-5s %s\n' "$step" "$status" "$detail"
  if [[ "$status" != ok ]]; then
    {
      echo "==== $step: $status: $detail"
      for l in "$@"; do
        echo "---- logs/$l.log (last 40 lines)"
        tail -n 40 "$logs/$l.log"
      done
      echo
    } >>"$failures_file"
  fi
  pack_logs
}

print_summary() {
  local r s st d
  echo
  echo "## figures ($figures)"
  cat "$figures"
  echo
  echo "## summary (logs in $logs; failures.txt and logs.tgz in $figures_dir)"
  printf '%-46s %-5s %s\n' step result detail
  for r in "${rows[@]}"; do
    IFS='|' read -r s st d <<<"$r"
    printf '%-46s %-5s %s\n' "$s" "$st" "$d"
  done
  echo "${#rows[@]} steps, $failures failed, $skips skipped, $SECONDS s of a ${budget} s budget"
}

# Set by run_logged for its caller: the limit the step ran under, and 1 when
# it was not started for want of budget. running_*: the step now running,
# for the signal trap.
step_limit=0
step_skipped=0
running_name="" running_pid="" running_start=0

# Runs a command with a time limit (its cap, cut to what is left of the
# budget), output to logs/NAME.log; returns its status (125 and step_skipped=1
# when it was not started).
run_logged() {  # name cap_s command...
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS - 5))
  echo "## $name: $*" >"$logs/$name.log"
  step_skipped=0
  step_limit=0
  if ((left < 10)); then
    echo "skipped: $((budget - SECONDS)) s left of the run's budget of ${budget} s" >>"$logs/$name.log"
    step_skipped=1
    return 125
  fi
  ((limit > left)) && limit=$left
  step_limit=$limit
  local start=$SECONDS rc
  # In the background and waited for: a TERM to this script then runs its
  # trap at once instead of after the step.
  timeout --kill-after=5 "$limit" "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  running_name=$name running_pid=$! running_start=$start
  wait "$running_pid"
  rc=$?
  running_name="" running_pid=""
  echo "## $name: exit $rc after $((SECONDS - start)) s (limit $limit s)" >>"$logs/$name.log"
  return $rc
}

# What a status from run_logged means, for a row.
outcome() {  # rc
  case $1 in
    124) echo "timed out at its ${step_limit} s limit" ;;
    137) echo "killed (exit 137) with a ${step_limit} s limit" ;;
    *) echo "exit $1" ;;
  esac
}
skip_detail() { echo "not started: under 10 s left of the ${budget} s budget"; }
# The program's last line (run_logged's own "## " lines left out).
last_line() { grep -v '^## ' "$logs/$1.log" | tail -1 | cut -c1-120; }

on_signal() {  # signal name
  trap - TERM INT
  local running=$running_name
  if [[ -n "$running_pid" ]]; then
    kill -TERM "$running_pid" 2>/dev/null
    echo "## $running: stopped by SIG$1 after $((SECONDS - running_start)) s" >>"$logs/$running.log"
    row "$running" FAIL "stopped by SIG$1 after $((SECONDS - running_start)) s" "$running"
  fi
  row run FAIL "stopped by SIG$1 at $SECONDS s of a ${budget} s budget; later steps did not run"
  print_summary
  exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'pack_logs; rm -rf "$work" "$archive.part"' EXIT

echo "## GPUs"
if timeout 30 nvidia-smi -L; then
  {
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# gpus: $(timeout 30 nvidia-smi -L | paste -sd ';' -)"
    echo "# driver: $(timeout 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  } >>"$figures"
else
  row nvidia-smi FAIL "no GPU visible"
fi

# ---- 2. Tests ---------------------------------------------------------------
for t in "$bin"/*_test; do
  name=$(basename "$t")
  cap=60
  [[ $name == gpu_kernels_test ]] && cap=120
  run_logged "$name" "$cap" "$t" --gtest_color=no
  rc=$?
  if ((step_skipped)); then
    row "$name" SKIP "$(skip_detail)"
    continue
  fi
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$logs/$name.log" | grep -oE '[0-9]+$' || echo 0)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+ test' "$logs/$name.log" | grep -oE '[0-9]+' || echo 0)
  failed_tests=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$logs/$name.log" | grep -v ' listed below' |
                   sed 's/^\[  FAILED  \] //; s/ (.*//' | sort -u | paste -sd ' ' -)
  detail="${passed:-0} passed, ${skipped:-0} skipped"
  if [[ $rc == 0 ]]; then
    row "$name" ok "$detail"
  else
    row "$name" FAIL "$(outcome $rc); $detail; failed: ${failed_tests:-see failures.txt}" "$name"
  fi
done

# ---- 3. Benchmarks and their PyTorch peers ------------------------------------
bench() {  # name cap_s command...
  local name=$1 cap=$2 rc n
  shift 2
  run_logged "$name" "$cap" "$@"
  rc=$?
  if ((step_skipped)); then
    row "$name" SKIP "$(skip_detail)"
    return
  fi
  # A figure is `name: number unit`; other `word: text` lines (a library's
  # messages, "gpu: none") stay in the log only.
  local figure_re='^[A-Za-z0-9_]+: [-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?( |$)'
  n=$(grep -cE "$figure_re" "$logs/$name.log")
  grep -E "$figure_re" "$logs/$name.log" >>"$figures"
  if [[ $rc != 0 ]]; then
    row "$name" FAIL "$(outcome $rc), $n figures; $(last_line "$name")" "$name"
  elif grep -q '^gpu: none' "$logs/$name.log"; then
    row "$name" FAIL "found no GPU" "$name"
  elif [[ $n == 0 ]]; then
    row "$name" FAIL "printed no figures; $(last_line "$name")" "$name"
  else
    row "$name" ok "$n figures"
  fi
}

have_torch=0
peer() {  # name cap_s: bench/NAME.py under the starting LD_LIBRARY_PATH
  if ((have_torch)); then
    bench "$1" "$2" "${py[@]}" "$here/bench/$1.py"
  else
    row "$1" SKIP "python3 has no torch with CUDA (see the torch_cuda step)"
  fi
}

# "name: value unit" -> value, the last line of that name in the figures.
figure() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); v = a[1] } END { print v }' "$figures"; }
ratios_done=0
ratios_missing=()
ratio() {  # name ours theirs: theirs / ours, or a line saying what is missing
  local o t missing=""
  o=$(figure "$2")
  t=$(figure "$3")
  [[ -z "$o" ]] && missing+=" $2"
  [[ -z "$t" ]] && missing+=" $3"
  if [[ -z "$missing" ]] && awk -v o="$o" 'BEGIN { exit !(o + 0 != 0) }'; then
    awk -v o="$o" -v t="$t" -v n="$1" 'BEGIN { printf "%s: %.2f x\n", n, t / o }' >>"$figures"
    ratios_done=$((ratios_done + 1))
    return
  fi
  [[ -z "$missing" ]] && missing=" $2 (it is 0)"
  echo "# ratio $1: missing$missing" >>"$figures"
  ratios_missing+=("$1 (missing$missing)")
}

if [[ $quick == 0 ]]; then
  run_logged torch_cuda 60 "${py[@]}" -c \
    "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available()); assert torch.cuda.is_available()"
  rc=$?
  if ((step_skipped)); then
    row torch_cuda SKIP "$(skip_detail)"
  elif [[ $rc == 0 ]]; then
    have_torch=1
    row torch_cuda ok "$(last_line torch_cuda)"
  else
    row torch_cuda FAIL "python3 has no torch with CUDA: $(outcome $rc)" torch_cuda
  fi
  # The part-7 pairs first. SLUICE_LOG_FUSED_GEMM: the log says where a fused
  # product fell back.
  SLUICE_LOG_FUSED_GEMM=1 bench gpu_mlp_step 60 "$bin/gpu_mlp_step"
  peer torch_gpu_mlp 90
  bench gpu_lstm_step 60 "$bin/gpu_lstm_step"
  peer torch_gpu_lstm 90
  bench gpu_cnn_step 60 "$bin/gpu_cnn_step"
  peer torch_gpu_cnn 150
  bench gpu_matmul 60 "$bin/gpu_matmul"
  peer torch_gpu_matmul 90
  bench gpu_copy_bandwidth 60 "$bin/gpu_copy_bandwidth"
  bench gpu_nccl_allreduce 60 "$bin/gpu_nccl_allreduce"

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
  if ((${#ratios_missing[@]} == 0)); then
    row ratios ok "$ratios_done ratios"
  else
    row ratios FAIL "$ratios_done ratios; not: $(IFS=';'; echo "${ratios_missing[*]}")"
  fi
fi

# ---- 4. Examples, GPU against CPU ---------------------------------------------
# "final: loss=L accuracy=A" -> A
accuracy_of() { sed -nE 's/.*final: loss=[^ ]+ accuracy=([0-9.]+).*/\1/p' "$1" | tail -1; }

# Runs one example on the GPU and its reference on the CPU (the GPUs hidden)
# and compares their final accuracy. The CPU command is the GPU one unless
# cpu_cmd (an array) is set by the caller. A CPU command runs once: a later
# example that names it again reads the first one's log (the GPUs are hidden
# there, so SLUICE_LOGICAL_GPUS changes nothing on that side).
cpu_cmd=()
declare -A cpu_log_of=() cpu_rc_of=()   # CPU command -> its log name, its status
example() {  # name command...
  local name=$1
  shift
  local reference=("$@")
  ((${#cpu_cmd[@]} > 0)) && reference=("${cpu_cmd[@]}")
  cpu_cmd=()
  run_logged "$name.gpu" 45 "$@"
  local rc_gpu=$? gpu_skipped=$step_skipped
  local key="${reference[*]}" cpu_log rc_cpu cpu_skipped=0 shared=""
  if [[ -n "${cpu_log_of[$key]:-}" ]]; then
    cpu_log=${cpu_log_of[$key]}
    rc_cpu=${cpu_rc_of[$key]}
    shared=" (CPU run of ${cpu_log%.cpu})"
  else
    CUDA_VISIBLE_DEVICES= run_logged "$name.cpu" 45 "${reference[@]}"
    rc_cpu=$?
    cpu_skipped=$step_skipped
    cpu_log=$name.cpu
    if ((!cpu_skipped)); then
      cpu_log_of[$key]=$cpu_log
      cpu_rc_of[$key]=$rc_cpu
    fi
  fi
  local gpu cpu
  gpu=$(accuracy_of "$logs/$name.gpu.log")
  cpu=$(accuracy_of "$logs/$cpu_log.log")
  if ((gpu_skipped)); then
    row "$name" SKIP "$(skip_detail)"
  elif [[ $rc_gpu != 0 || -z "$gpu" ]]; then
    row "$name" FAIL "GPU run: $(outcome $rc_gpu), $(last_line "$name.gpu")" "$name.gpu"
  elif ((cpu_skipped)); then
    row "$name" SKIP "GPU accuracy $gpu; the CPU run was $(skip_detail)"
  elif [[ $rc_cpu != 0 || -z "$cpu" ]]; then
    row "$name" FAIL "CPU run: $(outcome $rc_cpu), $(last_line "$cpu_log")$shared" "$cpu_log"
  elif awk -v g="$gpu" -v c="$cpu" 'BEGIN { exit !(g - c >= -0.01) }'; then
    row "$name" ok "accuracy GPU $gpu, CPU $cpu$shared"
  else
    row "$name" FAIL "accuracy GPU $gpu < CPU $cpu$shared" "$name.gpu" "$cpu_log"
  fi
  [[ -n "$gpu" ]] && echo "example_${name}_accuracy_gpu: $gpu" >>"$figures"
  [[ -n "$cpu" ]] && echo "example_${name}_accuracy_cpu: $cpu" >>"$figures"
}

example mlp "$bin/mlp"
# --replicas=2 is mirrored_mlp's default without a GPU: spelled out so that
# the three mirrored examples share one CPU run.
cpu_cmd=("$bin/mirrored_mlp" --replicas=2)
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
if [[ $(timeout 30 nvidia-smi -L 2>/dev/null | grep -c '^GPU') == 1 ]]; then
  export SLUICE_LOGICAL_GPUS=2
  example model_parallel_mlp_logical_gpus "$bin/model_parallel_mlp"
  example pipelined_mlp_logical_gpus "$bin/model_parallel_mlp" --micro_batches=4
  cpu_cmd=("$bin/mirrored_mlp" --replicas=2)
  example mirrored_mlp_logical_gpus "$bin/mirrored_mlp"
  unset SLUICE_LOGICAL_GPUS
fi

# ---- 5. The Fashion-MNIST CNN ---------------------------------------------------
# One process, when the bundle carries the dataset (data/fashion-mnist:
# Debian's IDX files; bundle.sh carries 40,000 of the training images by
# default, to fit the transfer limit). The GPU's random ops draw other numbers
# than the CPU's for the same seed, so one GPU run against one CPU run
# compares two initializations: each side trains once per seed
# (SLUICE_GPU_CNN_SEEDS, default "1 2 3") and the medians of the test
# accuracies are compared (within 0.01). On 2 cores here, seeds 1-3 at 2
# epochs on 40,000 images gave 0.8839, 0.8791, 0.8882. --max_train_s=40 stops
# training inside the 60 s cap, so that a slow run still prints its accuracy.
cnn_accuracy() { sed -nE 's/^final: test accuracy ([0-9.]+) .*/\1/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
if [[ -d "$here/data/fashion-mnist" ]]; then
  cnn_args=(--source_dir="$here/data/fashion-mnist" --data_dir="$work/fashion_mnist"
            --epochs="${SLUICE_GPU_CNN_EPOCHS:-2}" --max_train_s=40 --eval_every_s=1000)
  gpu_accs=() cpu_accs=() cnn_failed="" cnn_failed_logs=() cnn_skipped=""
  # One run of one side and seed: its accuracy to `a`, a failure noted.
  cnn_run() {  # side(gpu|cpu) seed
    local log=fashion_mnist_cnn.$1.seed$2 rc
    if [[ $1 == cpu ]]; then
      CUDA_VISIBLE_DEVICES= run_logged "$log" 60 "$bin/fashion_mnist_cnn" "${cnn_args[@]}" --seed="$2"
    else
      run_logged "$log" 60 "$bin/fashion_mnist_cnn" "${cnn_args[@]}" --seed="$2"
    fi
    rc=$?
    a=$(cnn_accuracy "$logs/$log.log")
    if ((step_skipped)); then
      cnn_skipped+=" ${1^^} seed $2;"
    elif [[ $rc != 0 || -z "$a" ]]; then
      cnn_failed+=" ${1^^} seed $2: $(outcome $rc);"
      cnn_failed_logs+=("$log")
    fi
  }
  for seed in ${SLUICE_GPU_CNN_SEEDS:-1 2 3}; do
    cnn_run gpu "$seed"
    gpu_accs+=("$a")
    cnn_run cpu "$seed"
    cpu_accs+=("$a")
  done
  gpu=$(printf '%s\n' "${gpu_accs[@]}" | grep . | median)
  cpu=$(printf '%s\n' "${cpu_accs[@]}" | grep . | median)
  detail="median test accuracy GPU $gpu (${gpu_accs[*]}), CPU $cpu (${cpu_accs[*]})"
  if [[ -n "$cnn_failed" ]]; then
    row fashion_mnist_cnn FAIL "$cnn_failed" "${cnn_failed_logs[@]}"
  elif [[ -n "$cnn_skipped" ]]; then
    row fashion_mnist_cnn SKIP "not started:$cnn_skipped $detail"
  elif awk -v g="$gpu" -v c="$cpu" 'BEGIN { exit !(g - c >= -0.01) }'; then
    row fashion_mnist_cnn ok "$detail"
  else
    row fashion_mnist_cnn FAIL "$detail"
  fi
  [[ -n "$gpu" ]] && echo "example_fashion_mnist_cnn_accuracy_gpu: $gpu" >>"$figures"
  [[ -n "$cpu" ]] && echo "example_fashion_mnist_cnn_accuracy_cpu: $cpu" >>"$figures"
  # Mixed precision (bfloat16) on the GPU against float on the GPU, from the
  # same seed (so the same initial weights and batch order): within 0.005
  # (half a point) of test accuracy.
  mixed_seed=${SLUICE_GPU_CNN_MIXED_SEED:-1}
  float_acc=$(cnn_accuracy "$logs/fashion_mnist_cnn.gpu.seed$mixed_seed.log")
  log=fashion_mnist_cnn.gpu_bf16.seed$mixed_seed
  run_logged "$log" 60 "$bin/fashion_mnist_cnn" "${cnn_args[@]}" --seed="$mixed_seed" --mixed_precision
  rc=$?
  mixed_acc=$(cnn_accuracy "$logs/$log.log")
  detail="seed $mixed_seed test accuracy bfloat16 $mixed_acc, float $float_acc"
  if ((step_skipped)); then
    row fashion_mnist_cnn_mixed_precision SKIP "$(skip_detail)"
  elif [[ $rc != 0 || -z "$mixed_acc" || -z "$float_acc" ]]; then
    row fashion_mnist_cnn_mixed_precision FAIL "$(outcome $rc); $detail" "$log"
  elif awk -v m="$mixed_acc" -v f="$float_acc" 'BEGIN { exit !(m - f >= -0.005) }'; then
    row fashion_mnist_cnn_mixed_precision ok "$detail"
  else
    row fashion_mnist_cnn_mixed_precision FAIL "$detail"
  fi
  [[ -n "$mixed_acc" ]] && echo "example_fashion_mnist_cnn_accuracy_gpu_bf16: $mixed_acc" >>"$figures"
else
  row fashion_mnist_cnn SKIP "the bundle carries no data/fashion-mnist"
fi

print_summary
[[ $failures == 0 ]]
