#!/bin/bash
# The GPU suite's dry run (tests/gpu/gpu_compare.h): every GPU test binary
# with SLUICE_GPU_TEST_ON_CPU=1, GPU:k standing for the virtual device
# CPU:k+1. It runs no CUDA code; it checks that the cases themselves (their
# graphs, shapes and CPU reference runs) are sound, so a broken case is
# found here and not on a lent GPU, whose time is scarce.
#
#   dry_run_test.sh BINARY...        (bazel test //tests/gpu:gpu_dry_run_test)
set -uo pipefail
failed=0
for bin in "$@"; do
  name=$(basename "$bin")
  if SLUICE_GPU_TEST_ON_CPU=1 "$bin" --gtest_brief=1 > "${TEST_UNDECLARED_OUTPUTS_DIR:-/tmp}/$name.log" 2>&1; then
    echo "$name: $(grep -E '^\[  PASSED  \]' "${TEST_UNDECLARED_OUTPUTS_DIR:-/tmp}/$name.log")"
  else
    echo "$name: FAILED"
    grep -E '^\[  FAILED  \]|Failure|error' "${TEST_UNDECLARED_OUTPUTS_DIR:-/tmp}/$name.log" | head -40
    failed=1
  fi
done
exit "$failed"
