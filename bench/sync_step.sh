#!/usr/bin/env bash
# The synchronous between-graph training step with 1 and 2 workers (1 ps),
# each task its own process on loopback through //tools:launch, beside
# PyTorch's synchronous data-parallel step over torch.distributed gloo with
# the same model and per-worker batch. Run from the workspace root:
#
#   bash bench/sync_step.sh [steps]
#
# Prints "name: value unit" lines. A Sluice step here is a full parameter-
# server step: pull the variables from the ps, compute, push the gradients
# into the ps accumulators, the chief's average-and-apply, the token that
# opens the next step.
set -euo pipefail
steps="${1:-300}"
bazel build -c opt //tools:launch //examples:between_graph_mlp >/dev/null 2>&1
bin=bazel-out/k8-opt/bin  # not bazel-bin: another build may repoint it
launch=$bin/tools/launch
for w in 1 2; do
  for mode in sync async; do
    line=$("$launch" --ps=1 --workers="$w" -- "$bin"/examples/between_graph_mlp \
             --"$mode" --steps="$steps" --batch=64 --hidden=256 --logdir= --log_every=100000 2>&1 |
           grep "trained to global step" || true)
    rate=$(sed -n 's/.*(\([0-9.]*\) steps\/s.*/\1/p' <<<"$line")
    if [[ -n "$rate" ]]; then
      echo "sluice_${mode}_steps_per_s_w${w}: $rate steps/s"
      awk -v r="$rate" -v m="$mode" -v w="$w" 'BEGIN { printf "sluice_%s_step_w%d: %.3f ms/step\n", m, w, 1000 / r }'
    else
      echo "# sluice_${mode}_w${w}: failed"
    fi
  done
done
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  for w in 1 2; do
    OMP_NUM_THREADS=1 GOMP_SPINCOUNT=0 /usr/bin/python3 bench/torch_sync_step.py \
      --workers "$w" --steps "$steps" --batch 64 --hidden 256 2>/dev/null | grep -E "^torch_" || true
  done
else
  echo "# torch_sync_step: skipped (no torch for /usr/bin/python3)"
fi
