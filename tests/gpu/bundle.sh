#!/bin/bash
# Packs the GPU suite for a GPU machine that has the NVIDIA driver and the
# CUDA 13 libraries but no Bazel and no Debian packages. Run here (where the
# CUDA toolkit is, GPU or not):
#
#   tests/gpu/bundle.sh [OUT_DIR]        (default gpu_bundle/, git-ignored)
#
# It builds every GPU test, the GPU benchmarks, the GPU-capable examples,
# the launcher and the runner (not the server: the launcher runs the
# examples' own binaries, and the transfer limit is near), then writes
# OUT_DIR/sluice-gpu/ with
#   bin/   the binaries
#   lib/   every shared library `ldd` lists for them except glibc,
#          libstdc++/libgcc_s and the CUDA libraries (cudart, cuBLAS, NCCL),
#          which the GPU machine has in /usr/local/cuda/lib64
#   bench/torch_gpu_*.py     the PyTorch peers
#   run.sh                   tests/gpu/run_bundle.sh
#   data/fashion-mnist/      40,000 of the 60,000 training images and the
#                            whole test set (SLUICE_BUNDLE_FMNIST_TRAIN)
#   testdata/                TensorFlow-written graphs the GPU tests run
# and OUT_DIR/sluice-gpu.tar.xz of it. On the GPU machine:
#
#   tar xJf sluice-gpu.tar.xz && SLUICE_GPU_BUDGET_S=330 sluice-gpu/run.sh FIGURES
#
# or straight from OUT_DIR/sluice-gpu/run.sh when the folder was copied. Its
# last line says what the device call needs: a timeout of at least the
# budget + 60 s, and the archive itself carried (not OUT_DIR, which holds the
# unpacked copy too), with how much of the 64 MiB transfer limit it and the
# working tree take.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:-gpu_bundle}
root="$out/sluice-gpu"

# label -> name in bin/ (the basename of the label).
targets=(
  //tests/gpu:gpu_kernels_test
  //tests/gpu:gpu_host_types_test
  //tests/gpu:gpu_logical_gpus_test
  //runtime/gpu:gpu_device_test
  //runtime/gpu:cuda_libraries_test
  //ops/gpu:cwise_kernels_test
  //ops/gpu:array_kernels_registration_test
  //ops/gpu:reduction_plan_test
  //ops/gpu:philox_test
  //ops/gpu:matmul_random_training_kernels_test
  //ops/gpu:matmul_precision_test
  //ops/gpu:nccl_collectives_test
  //ops/gpu:vector_loop_test
  //bench:gpu_matmul
  //bench:gpu_mlp_step
  //bench:gpu_lstm_step
  //bench:gpu_cnn_step
  //bench:gpu_copy_bandwidth
  //bench:gpu_nccl_allreduce
  //examples:mlp
  //examples:mirrored_mlp
  //examples:model_parallel_mlp
  //examples:between_graph_mlp
  //examples:multi_worker_mlp
  //examples:fashion_mnist_cnn
  //tools:launch
  //tools:runner
)

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "bundle: no CUDA toolkit at /usr/local/cuda: the binaries would have no GPU code" >&2
  exit 1
fi

echo "bundle: building ${#targets[@]} targets"
bazel build "${targets[@]}" --curses=no --color=no --show_progress_rate_limit=60

rm -rf "$root"
mkdir -p "$root/bin" "$root/lib" "$root/bench"
for t in "${targets[@]}"; do
  pkg=${t#//}
  pkg=${pkg%%:*}
  name=${t##*:}
  cp -L "bazel-bin/$pkg/$name" "$root/bin/$name"
done
cp bench/torch_gpu_mlp.py bench/torch_gpu_matmul.py bench/torch_gpu_lstm.py bench/torch_gpu_cnn.py \
  "$root/bench/"
cp tests/gpu/run_bundle.sh "$root/run.sh"
# Graphs TensorFlow wrote that GPU tests run (found through $SLUICE_TESTDATA
# when the bundle runs away from a checkout).
mkdir -p "$root/testdata"
cp ops/functional/testdata/control_flow_v2_grad.{pbtxt,expected.txt} \
   ops/functional/testdata/keras_rnn_grad.{pb,expected.txt} \
   ops/functional/testdata/keras_attention_grad.{pb,expected.txt} \
   ops/functional/testdata/keras_dropout_grad.{pb,expected.txt} "$root/testdata/"
chmod +x "$root/run.sh"

# What the GPU machine provides itself: the C runtime and the CUDA libraries.
provided='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl)\.so'
# ldd reads each binary where Bazel put it: test binaries find Bazel's
# _solib_k8/ libraries through a RUNPATH relative to their own place.
for t in "${targets[@]}"; do
  pkg=${t#//}
  pkg=${pkg%%:*}
  b="bazel-bin/$pkg/${t##*:}"
  # "name => /path (0x...)": the resolved ones; a "not found" is an error.
  # ldd's whole output is read first: `ldd | grep -q` under pipefail can
  # miss a failure when grep stops early and ldd dies of SIGPIPE.
  if ! deps=$(ldd "$b" 2>&1); then
    echo "bundle: ldd $b failed: $deps" >&2
    exit 1
  fi
  if grep -q 'not found' <<<"$deps"; then
    echo "bundle: $b has unresolved libraries:" >&2
    grep 'not found' <<<"$deps" >&2
    exit 1
  fi
  awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$deps" |
    while read -r soname path; do
      if [[ "$soname" =~ $provided ]]; then continue; fi
      [[ -e "$root/lib/$soname" ]] || cp -L "$path" "$root/lib/$soname"
    done
done
# The executables find lib/ through LD_LIBRARY_PATH (run.sh sets it).

# The Fashion-MNIST CNN's data (Debian's dataset-fashion-mnist; the GPU
# machine has no Debian packages). SLUICE_BUNDLE_FMNIST_TRAIN=N keeps the
# first N training images only (the IDX headers rewritten to say so; the
# example counts the records it reads), default 40000: with all 60,000 the
# archive does not fit the device machine's 64 MiB transfer limit beside the
# working tree (40,000 left 1.7 MB to spare). 0 keeps them all. The test set
# is always whole.
fmnist=/usr/share/datasets/fashion-mnist
if [[ -d "$fmnist" ]]; then
  mkdir -p "$root/data/fashion-mnist"
  cp "$fmnist"/t10k-*.gz "$root/data/fashion-mnist/"
  keep=${SLUICE_BUNDLE_FMNIST_TRAIN:-40000}
  if [[ "$keep" == 0 ]]; then
    cp "$fmnist"/train-*.gz "$root/data/fashion-mnist/"
  else
    python3 - "$fmnist" "$root/data/fashion-mnist" "$keep" <<'PY'
import gzip, struct, sys
src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
for name, header, record in (("train-images-idx3-ubyte.gz", 16, 28 * 28),
                             ("train-labels-idx1-ubyte.gz", 8, 1)):
    data = gzip.open(f"{src}/{name}").read()
    count = struct.unpack(">I", data[4:8])[0]
    keep = min(keep, count)
    out = data[:4] + struct.pack(">I", keep) + data[8:header] + data[header:header + keep * record]
    with gzip.open(f"{dst}/{name}", "wb", compresslevel=9) as f:
        f.write(out)
PY
  fi
else
  echo "bundle: no $fmnist (apt-get install dataset-fashion-mnist): the CNN step will skip" >&2
fi

echo "bundle: $(ls "$root/bin" | wc -l) binaries, $(ls "$root/lib" | wc -l) libraries," \
  "$(du -sh "$root" | cut -f1) unpacked"
# One xz stream with a dictionary larger than several binaries: the statically
# linked programs share most of their bytes, which a multi-threaded xz (blocks
# of a few dictionary sizes) cannot see. About half the size, 3 min on 1 core.
tar -C "$out" -c sluice-gpu | xz -T1 --lzma2=preset=6,dict=256MiB >"$out/sluice-gpu.tar.xz"
echo "bundle: $out/sluice-gpu.tar.xz ($(du -h "$out/sluice-gpu.tar.xz" | cut -f1))"

# What travels to the device machine: the working tree (tracked files and
# untracked ones git does not ignore) plus the carried archive, at most 64 MiB.
tar_bytes=$(stat -c %s "$out/sluice-gpu.tar.xz")
tree_bytes=$(git ls-files -z --cached --others --exclude-standard |
               xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
awk -v a="$tar_bytes" -v t="$tree_bytes" -v p="$out/sluice-gpu.tar.xz" 'BEGIN {
  mib = 1048576; total = a + t
  printf "bundle: run it with timeout_s >= SLUICE_GPU_BUDGET_S + 60 (390 for 330) and carry [\"%s\"] (the file, not its folder): %.1f MiB archive + %.1f MiB working tree = %.1f of 64 MiB%s\n",
    p, a / mib, t / mib, total / mib, (total > 64 * mib ? " -- OVER THE LIMIT" : "")
}'
