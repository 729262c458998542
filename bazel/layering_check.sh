#!/bin/bash
# Checks that every C++ file includes only headers of its target's direct
# dependencies (Bazel's layering_check, which needs clang: the regular GCC
# build cannot run it). Compiles everything once with clang-14 in an output
# base of its own (~/.cache/sluice-layering); later runs are incremental.
#
#   bazel/layering_check.sh            # all targets
#   bazel/layering_check.sh //graph/...
#
# Exit 0 when clean; otherwise clang's "module ... does not depend on a
# module exporting 'x.h'" errors name each file and header.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-14 >/dev/null || { echo "layering_check: needs clang-14 (apt install clang-14)" >&2; exit 2; }
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(//...)
exec bazel --noworkspace_rc --bazelrc=bazel/layering.bazelrc --output_user_root="$HOME/.cache/sluice-layering" \
  build --keep_going -- "${targets[@]}" -//fuzz/...
