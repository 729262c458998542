#!/usr/bin/env bash
# Installs the Debian packages Sluice needs to build, test and benchmark.
# Idempotent: packages already present are skipped; safe to run again.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap          # Bazel 4.2.3
  protobuf-compiler libprotobuf-dev
  libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev
  libdnnl-dev              # oneDNN: the float GEMM of ops/internal/blas.h
  libgraphviz-dev
  thrift-compiler libthrift-dev libboost-dev
  libssl-dev               # mutual TLS between tasks, the launcher's job CA
  zlib1g-dev               # GZIP and ZLIB TFRecord files (runtime/io)
  dataset-fashion-mnist    # the main job's data (/usr/share/datasets/fashion-mnist)
  libjpeg62-turbo-dev      # DecodeJpeg, DecodeImage (ops/image)
  libpng-dev               # DecodePng, EncodePng, DecodeImage (ops/image)
  libfarmhash-dev          # StringToHashBucketFast: TF's Fingerprint64 (ops/strings)
  libhighwayhash-dev       # StringToHashBucketStrong: TF's SipHash (ops/strings)
  libsnappy-dev            # checkpoint indexes older TensorFlow wrote (runtime/io)
  libre2-dev               # RegexFullMatch, StaticRegexFullMatch: TF's RE2 syntax (ops/strings)
  clang-14 libfuzzer-14-dev  # the fuzz targets (fuzz/), run in CI with ASan+UBSan
  python3-numpy            # .npy round-trip checks in tests and bench scripts
  python3-optuna           # //tools:sweep: TPE search
  python3-matplotlib       # //tools:sweep: plot.svg
  python3-torch            # the PyTorch peer in bench/
  iperf3                   # raw TCP peer of the RecvTensor benchmark
  iproute2 iputils-ping    # tests/distributed/netns_hosts: a host per task (ip netns, tc)
)
# python3-torch is large and only the benchmarks need it.
if [[ "${SLUICE_SKIP_TORCH:-0}" == "1" ]]; then
  PACKAGES=("${PACKAGES[@]/python3-torch}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  [[ -z "$p" ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
