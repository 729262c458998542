#!/bin/bash
# The MLP step (784-1024-1024-10, batch 256, SGD) with the graph-rewrite pass
# on and off, against PyTorch's best configuration, in alternating rounds of
# one run; prints each round, then the medians and ratios as `name: value`.
#
#   bench/fusion_vs_pytorch.sh [--rounds=7] [--steps=30]   (after building //bench:mlp_step)
#
# A round is one mlp_step process (fused and unfused sessions alternating
# inside it, --rounds=1) and one pytorch_mlp.py run over its two best
# configurations (each in its own process; the faster counts).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=7; steps=30
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --steps=*) steps=${arg#*=} ;;
    *) echo "usage: bench/fusion_vs_pytorch.sh [--rounds=N] [--steps=N]" >&2; exit 2 ;;
  esac
done
value() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); print a[1] }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
fused=(); unfused=(); torch=()
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  s=$(bazel-bin/bench/mlp_step --steps="$steps" --rounds=1 --profile=false 2>&1)
  p=$(/usr/bin/python3 bench/pytorch_mlp.py --steps="$steps" --configs=t1_ob2_nospin,t2_ob2_nospin)
  fused+=("$(value mlp_step_fused <<<"$s")"); unfused+=("$(value mlp_step_unfused <<<"$s")")
  torch+=("$(value pytorch_mlp_step <<<"$p")")
  echo "# round $r: fused ${fused[-1]} ms, unfused ${unfused[-1]} ms, pytorch ${torch[-1]} ms (load $(cut -d' ' -f1 /proc/loadavg))"
done
f=$(printf '%s\n' "${fused[@]}" | median); u=$(printf '%s\n' "${unfused[@]}" | median)
t=$(printf '%s\n' "${torch[@]}" | median)
echo "mlp_step_fused: $f ms"
echo "mlp_step_unfused: $u ms"
echo "pytorch_mlp_step: $t ms"
awk -v f="$f" -v u="$u" -v t="$t" 'BEGIN {
  printf "mlp_step_fusion_speedup: %.2fx\n", u / f
  printf "mlp_step_fused_speedup_vs_pytorch: %.2fx (target >= 1.25)\n", t / f
  printf "mlp_step_unfused_speedup_vs_pytorch: %.2fx\n", t / u }'
