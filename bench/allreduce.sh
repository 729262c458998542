#!/bin/bash
# All-reduce across processes on 127.0.0.1, Sluice beside torch.distributed
# gloo in one run, plus fused against unfused gradients and the synchronous
# training step with all-reduce against the parameter-server step.
# Prints every figure as `name: value unit`, then the ratios.
#
#   bench/allreduce.sh [--quick] [--no-build] [--rounds=R]
#
# Bus bandwidth (bench/allreduce.cc, bench/gloo_allreduce.py): float32 sum,
# sizes 4 KiB .. 256 MiB, N = 2, 3, 4 processes; busbw = bytes * 2(N-1)/N /
# time (NCCL-tests). Rounds alternate Sluice and gloo for each N, so load
# from elsewhere on a shared machine hits both alike; each figure is the
# median over the rounds of per-round figures that are themselves medians
# (of the slowest rank). Target: Sluice >= gloo at every size >= 1 MiB.
#
# Training step: examples/multi_worker_mlp (MultiWorkerMirrored: ring
# all-reduce of fused gradients, no ps) against examples/between_graph_mlp
# --sync (1 ps, as bench/sync_step.sh), both through //tools:launch with 2
# workers, MLP 784-256-10, 64 examples per worker per step, SGD; the rate is
# the chief's global steps over its training loop.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3; build=1; steps=300
sizes=4K,64K,1M,4M,16M,64M,256M
for arg in "$@"; do
  case "$arg" in
    --quick) rounds=1; steps=200 ;;
    --no-build) build=0 ;;
    --rounds=*) rounds="${arg#--rounds=}" ;;
    *) echo "usage: bench/allreduce.sh [--quick] [--no-build] [--rounds=R]" >&2; exit 2 ;;
  esac
done

targets=(//bench:allreduce //tools:launch //examples:multi_worker_mlp //examples:between_graph_mlp)
if [[ $build == 1 ]] && ! bazel build "${targets[@]}" >/dev/null 2>&1; then
  bazel build "${targets[@]}" 2>&1 | grep -E "error|ERROR" | head -20 >&2
  echo "allreduce.sh: the build failed; --no-build runs the binaries already built" >&2
  exit 1
fi
bin="$(bazel info bazel-bin 2>/dev/null)"
py=/usr/bin/python3
have_gloo=0
"$py" -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null && have_gloo=1

out=$(mktemp)
rounds_out=$(mktemp)
ckpt=$(mktemp -d)
trap 'rm -rf "$out" "$rounds_out" "$ckpt"' EXIT

# The median over the rounds of each `name: value unit` line in a file.
medians() {
  awk -F': ' '{ split($2, a, " "); n[$1]++; v[$1, n[$1]] = a[1] + 0; u[$1] = a[2] }
    END { for (k in n) {
            c = n[k]; for (i = 1; i <= c; i++) x[i] = v[k, i]
            for (i = 2; i <= c; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
            printf "%s: %.3f %s\n", k, c % 2 ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2, u[k] } }' "$1"
}
value() { awk -F': ' -v k="$1" '$1 == k { split($2, a, " "); print a[1] }' "$out" | tail -1; }

echo "# machine: $(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "## all-reduce bus bandwidth, float32 sum, $rounds round(s) alternating Sluice and gloo"
for ((r = 1; r <= rounds; r++)); do
  for n in 2 3 4; do
    "$bin/bench/allreduce" --n="$n" --sizes="$sizes" | grep -v '^#' |
      tee -a "$rounds_out" | sed 's/^/# round '"$r"': /'
    if [[ $have_gloo == 1 ]]; then
      "$py" bench/gloo_allreduce.py --n "$n" --sizes "$sizes" | grep -v '^#' |
        tee -a "$rounds_out" | sed 's/^/# round '"$r"': /'
    fi
  done
done
medians "$rounds_out" >"$out"
labels=()
for size in ${sizes//,/ }; do l=${size/K/KiB}; labels+=("${l/M/MiB}"); done
echo "## medians over the rounds"
for n in 2 3 4; do
  for label in "${labels[@]}"; do
    grep -E "^(gloo_)?allreduce_busbw_n${n}_${label}: " "$out" | sort -r || true
  done
done
[[ $have_gloo == 1 ]] || echo "# gloo_allreduce: skipped (torch.distributed with gloo is not installed for $py)"

echo "## Sluice / gloo bus bandwidth (target >= 1 at every size >= 1 MiB)"
for n in 2 3 4; do
  for label in "${labels[@]}"; do
    a=$(value "allreduce_busbw_n${n}_${label}"); b=$(value "gloo_allreduce_busbw_n${n}_${label}")
    if [[ -n "$a" && -n "$b" ]]; then
      awk -v n="allreduce_busbw_vs_gloo_n${n}_${label}" -v a="$a" -v b="$b" \
        'BEGIN { printf "%s: %.2f\n", n, a / b }' | tee -a "$out"
    fi
  done
done

echo "## fused vs unfused: 100 gradients all-reduced one by one vs in 4 MiB buckets"
"$bin/bench/allreduce" --mode=fused --n=2,3 --grads=100x10000,100x1000 | grep -v '^#' | tee -a "$out"
for n in 2 3; do
  for set in 100x10000 100x1000; do
    a=$(value "allreduce_unfused_n${n}_${set}"); b=$(value "allreduce_fused_n${n}_${set}")
    if [[ -n "$a" && -n "$b" ]]; then
      awk -v n="allreduce_fused_speedup_n${n}_${set}" -v a="$a" -v b="$b" \
        'BEGIN { printf "%s: %.2fx\n", n, a / b }' | tee -a "$out"
    fi
  done
done

echo "## synchronous MLP step, 2 workers: MultiWorkerMirrored (all-reduce) vs parameter server"
rate() { sed -n 's/.*trained to global step [0-9]* in [0-9.]* s (\([0-9.]*\) steps\/s.*/\1/p' | tail -1; }
step_rounds=$(mktemp)
trap 'rm -rf "$out" "$rounds_out" "$ckpt" "$step_rounds"' EXIT
for ((r = 1; r <= rounds; r++)); do
  rm -rf "${ckpt:?}"/*
  mw=$("$bin/tools/launch" --workers=2 -- "$bin/examples/multi_worker_mlp" --steps="$steps" \
         --batch=128 --hidden=256 --checkpoint_every=1000000 --checkpoint_dir="$ckpt" \
         --log_every=1000000 2>&1 | rate || true)
  ps=$("$bin/tools/launch" --ps=1 --workers=2 -- "$bin/examples/between_graph_mlp" --sync \
         --steps="$steps" --batch=64 --hidden=256 --logdir= --log_every=1000000 2>&1 | rate || true)
  for pair in "multi_worker_mirrored_step_w2:$mw" "ps_sync_step_w2:$ps"; do
    name=${pair%%:*}; v=${pair#*:}
    if [[ -n "$v" ]]; then
      awk -v n="$name" -v r="$v" 'BEGIN { printf "%s: %.3f ms/step\n", n, 1000 / r }' |
        tee -a "$step_rounds" | sed 's/^/# round '"$r"': /'
    else
      echo "# round $r: $name failed"
    fi
  done
done
medians "$step_rounds" | sort | tee -a "$out"
a=$(value multi_worker_mirrored_step_w2); b=$(value ps_sync_step_w2)
if [[ -n "$a" && -n "$b" ]]; then
  awk -v a="$a" -v b="$b" 'BEGIN { printf "allreduce_vs_ps_step: %.2fx (parameter-server step time / all-reduce step time)\n", b / a }'
fi
