#!/usr/bin/env bash
# Runs Bazel tests built as the fuzz targets are (clang-14 with ASan and
# UBSan: fuzz/sanitized.bazelrc, in an output base of its own, warm from the
# shared disk cache): use-after-free, out-of-bounds and undefined behaviour
# that an ordinary GCC build lets pass.
#
#   bash fuzz/sanitized_test.sh                       # every CPU test
#   bash fuzz/sanitized_test.sh //runtime/... //session/...
#
# The GPU packages stay out: nvcc does not build under this configuration.
# Leak reports are off (a test's process-wide registries live until exit);
# the first UBSan report not in fuzz/ubsan_suppressions.txt fails its test.
# A cold build and run of every test takes about 40 minutes on two cores
# (185 targets on 2026-11-30). Ends with Bazel's own summary and exit
# status.
set -uo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(//... -//ops/gpu/... -//runtime/gpu/... -//tests/gpu/... -//bench/... -//fuzz/...)
fi
base="$HOME/.cache/sluice-sanitized-output-base"
suppressions="$PWD/fuzz/ubsan_suppressions.txt"
exec bazel --noworkspace_rc --bazelrc=fuzz/sanitized.bazelrc --output_base="$base" test \
  --curses=no --color=no --show_progress_rate_limit=120 --test_output=errors --keep_going \
  --test_env=ASAN_OPTIONS=detect_leaks=0 \
  --test_env=UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$suppressions" \
  -- "${targets[@]}"
