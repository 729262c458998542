#!/usr/bin/env bash
# Builds the fuzz targets with clang-14, libFuzzer, ASan and UBSan
# (fuzz/fuzz.bazelrc, in an output base of its own beside the ordinary build;
# the shared disk cache keeps rebuilds cheap) and runs each for a bounded
# time, starting from a copy of its corpus in fuzz/corpus/.
#
#   bash fuzz/run.sh [--seconds=60] [TARGET...]     # default: every target
#
# Prints one line per target, "fuzz TARGET: ok (N runs, cov C)" or
# "fuzz TARGET: CRASH ..." followed by the sanitizer's report; a crashing
# input is kept under $FUZZ_ARTIFACTS (default /tmp/sluice-fuzz) for
# adding to the corpus once fixed. Ends with "fuzz: N passed, N failed" and
# exits 1 when any target crashed or did not build.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=60
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds="${arg#--seconds=}" ;;
    -*) echo "usage: fuzz/run.sh [--seconds=N] [TARGET...]" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
if ((${#targets[@]} == 0)); then
  targets=(graph_def_fuzzer rpc_request_fuzzer task_handlers_fuzzer npy_fuzzer checkpoint_fuzzer
           cluster_spec_fuzzer record_reader_fuzzer example_parser_fuzzer image_decode_fuzzer
           tensor_bundle_fuzzer)
fi

base="$HOME/.cache/sluice-fuzz-output-base"
fuzz_bazel() { bazel --noworkspace_rc --bazelrc=fuzz/fuzz.bazelrc --output_base="$base" "$@"; }
artifacts="${FUZZ_ARTIFACTS:-/tmp/sluice-fuzz}"
suppressions="$PWD/fuzz/ubsan_suppressions.txt"
mkdir -p "$artifacts"
quiet=(--curses=no --color=no --show_progress_rate_limit=60)
labels=()
for t in "${targets[@]}"; do labels+=("//fuzz:$t"); done

passed=0; failed=0
build_log=$(mktemp)
fuzz_bazel build "${quiet[@]}" "${labels[@]}" >"$build_log" 2>&1
built=$?
grep -E "error|ERROR|Elapsed" "$build_log"
rm -f "$build_log"
bin="$(fuzz_bazel info bazel-bin 2>/dev/null)/fuzz"
for t in "${targets[@]}"; do
  # A failed build fails every target: the binaries an earlier build left
  # are not the code under test.
  if [[ $built -ne 0 ]]; then
    echo "fuzz $t: FAILED (the fuzz build failed, exit $built)"
    failed=$((failed + 1))
    continue
  fi
  if [[ ! -x "$bin/$t" ]]; then
    echo "fuzz $t: FAILED (not built)"
    failed=$((failed + 1))
    continue
  fi
  work=$(mktemp -d)
  cp -r "fuzz/corpus/$t/." "$work/"
  log="$artifacts/$t.log"
  # -rss_limit_mb: an input may not make the target hold more than 2 GiB;
  # -timeout: nor take more than 10 s.
  (cd "$artifacts" && UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$suppressions" \
      "$bin/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$artifacts/$t-" -print_final_stats=1 "$work" >"$log" 2>&1)
  status=$?
  runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$" | tail -1)
  cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1 | grep -oE "[0-9]+")
  if [[ $status -eq 0 ]]; then
    echo "fuzz $t: ok (${runs:-?} runs in ${seconds} s, cov ${cov:-?}, corpus $(ls "$work" | wc -l) inputs)"
    passed=$((passed + 1))
  else
    echo "fuzz $t: CRASH (exit $status); report:"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written|#[0-9]+ 0x" "$log" | head -30 | sed 's/^/  /'
    failed=$((failed + 1))
  fi
  rm -rf "$work"
done
fuzz_bazel shutdown >/dev/null 2>&1 || true
echo "fuzz: ${passed} passed, ${failed} failed"
[[ $failed -eq 0 ]]
