#!/bin/bash
# The tools start without cuBLAS, cuBLASLt or NCCL: those libraries (about
# 200 MB of resident memory when mapped) are opened by the GPU backend only
# when it makes a GPU device (runtime/gpu/cublas_library.h). Each binary
# given must not list them among the libraries it needs, and must print its
# usage for --help (Abseil's --help exits 1, so the output is what counts).
set -euo pipefail
status=0
for binary in "$@"; do
  needed=$(readelf -d "$binary" | awk '/NEEDED/ { print $NF }')
  if grep -E 'libcublas|libnccl' <<<"$needed"; then
    echo "FAIL: $binary links a CUDA library it should open on first use" >&2
    status=1
  fi
  help=$(timeout 30 "$binary" --help 2>&1 || true)
  if ! grep -qiE 'usage|flags from' <<<"$help"; then
    echo "FAIL: $binary --help did not succeed" >&2
    status=1
  fi
  echo "$binary: needs $(tr '\n' ' ' <<<"$needed")"
done
exit $status
