#!/bin/bash
# The main job against PyTorch, in one run, on the same TFRecord files, model,
# initialisation scheme, batch per process, optimizer and learning rate:
#
#   - time to --target test accuracy (default 0.90), seconds of training
#     (evaluation excluded on both sides): Sluice 1 ps + 2 workers
#     (synchronous; over mutual TLS, the default, and over plaintext as
#     gloo), Sluice all-reduce over 2 workers, PyTorch
#     DistributedDataParallel over gloo with 2 processes; one Sluice process
#     against one PyTorch process;
#   - input pipeline throughput (TFRecord -> parse -> decode -> batch),
#     Sluice's tf.data pipeline against a PyTorch DataLoader with its best
#     worker count;
#   - the share of step time the main job's workers wait for input.
#
#   bench/fashion_mnist_vs_pytorch.sh [--target=0.90] [--skip=allreduce,...]
#
# Needs bazel-bin/{examples:fashion_mnist_cnn,examples:fashion_mnist_allreduce,
# tools:launch,bench:input_pipeline} built
# and a Python with PyTorch: $SLUICE_TORCH_PYTHON, else /usr/bin/python3.
# Prints each run's tail, then one `name: value unit` line per figure.
set -uo pipefail
cd "$(dirname "$0")/.."
target=0.90; skip=""
for arg in "$@"; do
  case "$arg" in
    --target=*) target=${arg#*=} ;;
    --skip=*) skip=${arg#*=} ;;
    *) echo "usage: bench/fashion_mnist_vs_pytorch.sh [--target=0.90] [--skip=a,b]" >&2; exit 2 ;;
  esac
done
py=${SLUICE_TORCH_PYTHON:-/usr/bin/python3}
data=/tmp/sluice/fashion_mnist
log=$(mktemp -d /tmp/sluice-bench-fmnist.XXXXXX)
trap 'rm -rf "$log"' EXIT
want() { [[ ",$skip," != *",$1,"* ]]; }
# "reached test accuracy 0.9012 >= 0.90 after 123.4 s of training" -> 123.4;
# else the first evaluation at or above the target.
reached() {
  awk -v t="$target" '
    /reached test accuracy/ { for (i = 1; i <= NF; ++i) if ($i == "after") { print $(i + 1); exit } }
    /test accuracy [0-9.]+  \(/ { for (i = 1; i <= NF; ++i) if ($i == "accuracy" && $(i + 1) + 0 >= t) {
        s = $(i + 2); sub(/\(/, "", s); print s; exit } }' "$1"
}
# The global step of the first evaluation at or above the target.
reached_step() {
  awk -v t="$target" '
    /step +[0-9]+  test accuracy [0-9.]+/ { for (i = 1; i <= NF; ++i) if ($i == "accuracy" && $(i + 1) + 0 >= t) {
        for (j = 1; j <= NF; ++j) if ($j == "step") { print $(j + 1); exit } } }' "$1"
}
# Training throughput up to the target: global steps x 128 / seconds.
rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (n > 0 && s > 0) printf "%.0f", n * 128 / s; else print "?" }'; }
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# torch: $($py -c 'import torch; print(torch.__version__)' 2>/dev/null || echo absent)"
common=(--stop_at_accuracy="$target" --max_train_s=900 --epochs=20 --eval_every_s=5)

if want ps; then
  bazel-bin/tools/launch --ps=1 --workers=2 -- bazel-bin/examples/fashion_mnist_cnn \
    "${common[@]}" >"$log/ps.txt" 2>&1
  tail -4 "$log/ps.txt" | sed 's/^/# ps: /'
  echo "sluice_ps_sync_2workers_time_to_target: $(reached "$log/ps.txt") s"
  echo "sluice_ps_sync_2workers_steps_to_target: $(reached_step "$log/ps.txt") steps"
  echo "sluice_ps_sync_2workers_throughput: $(rate "$(reached_step "$log/ps.txt")" "$(reached "$log/ps.txt")") examples/s"
  # The chief's input wait over the whole run: the mean of its progress lines.
  awk '/input wait/ { for (i = 1; i <= NF; ++i) if ($i == "wait") { s += $(i + 1); n++ } }
       END { if (n) printf "sluice_ps_input_wait_share: %.1f %%\n", s / n }' "$log/ps.txt"
fi
if want ps_plaintext; then
  # The same job over plaintext Thrift (launch --insecure), as gloo speaks:
  # what mutual TLS costs the parameter-server path.
  bazel-bin/tools/launch --insecure --ps=1 --workers=2 -- bazel-bin/examples/fashion_mnist_cnn \
    "${common[@]}" >"$log/psp.txt" 2>&1
  echo "sluice_ps_sync_2workers_plaintext_time_to_target: $(reached "$log/psp.txt") s"
  echo "sluice_ps_sync_2workers_plaintext_throughput: $(rate "$(reached_step "$log/psp.txt")" "$(reached "$log/psp.txt")") examples/s"
fi
if want allreduce; then
  bazel-bin/tools/launch --workers=2 -- bazel-bin/examples/fashion_mnist_allreduce \
    --epochs=6 --eval_every_s=5 >"$log/ar.txt" 2>&1
  tail -3 "$log/ar.txt" | sed 's/^/# allreduce: /'
  echo "sluice_allreduce_2workers_time_to_target: $(reached "$log/ar.txt") s"
  echo "sluice_allreduce_2workers_throughput: $(rate "$(reached_step "$log/ar.txt")" "$(reached "$log/ar.txt")") examples/s"
fi
if want torch_ddp; then
  $py bench/torch_fashion_mnist.py --world_size=2 --target="$target" --data_dir="$data" \
    --eval_every_s=5 >"$log/tddp.txt" 2>&1
  tail -3 "$log/tddp.txt" | sed 's/^/# torch ddp: /'
  grep -E '^torch_2proc_time_to' "$log/tddp.txt" | sed 's/^torch_2proc_time_to_[0-9]*/torch_ddp_gloo_2proc_time_to_target/'
  tsteps=$(awk '/^torch_2proc_steps:/ { print $2 }' "$log/tddp.txt")
  tsec=$(awk '/^torch_2proc_time_to/ { print $2 }' "$log/tddp.txt")
  echo "torch_ddp_gloo_2proc_throughput: $(rate "$tsteps" "$tsec") examples/s"
fi
if want local; then
  bazel-bin/examples/fashion_mnist_cnn "${common[@]}" >"$log/local.txt" 2>&1
  tail -3 "$log/local.txt" | sed 's/^/# local: /'
  echo "sluice_1proc_time_to_target: $(reached "$log/local.txt") s"
fi
if want torch_local; then
  $py bench/torch_fashion_mnist.py --world_size=1 --threads=2 --target="$target" \
    --data_dir="$data" --eval_every_s=5 >"$log/t1.txt" 2>&1
  tail -3 "$log/t1.txt" | sed 's/^/# torch 1 proc: /'
  grep -E '^torch_1proc_time_to' "$log/t1.txt" | sed 's/^torch_1proc_time_to_[0-9]*/torch_1proc_time_to_target/'
fi
if want pipeline; then
  bazel-bin/bench/input_pipeline --data_dir="$data" --threads=1,2 --rounds=3
  $py bench/torch_fashion_mnist.py --mode=pipeline --batch=64 --data_dir="$data" --pipeline_workers=0,1,2
fi
