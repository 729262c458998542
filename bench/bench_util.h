// Small helpers shared by Sluice's benchmark programs: wall-clock timing of
// repeated calls and the median of the samples.
//
//   std::vector<double> ms = TimeRepeated(50, [&] { ... });
//   std::printf("thing: %.3f ms\n", Median(ms));
//
// Thread-compatible; header only.
#ifndef SLUICE_BENCH_BENCH_UTIL_H_
#define SLUICE_BENCH_BENCH_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/status/status.h"

namespace sluice::bench {

// Median of `samples` (copied; the caller's order is kept). 0 when empty.
inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

// Calls fn() `reps` times; returns each call's wall time in milliseconds.
template <typename Fn>
std::vector<double> TimeRepeated(int reps, Fn&& fn) {
  std::vector<double> ms;
  ms.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return ms;
}

// The whole main() of a benchmark: parses flags, runs `body`, and turns an
// error into one "<name>: error: ..." line and exit code 1.
inline int BenchMain(int argc, char** argv, const char* name, absl::Status (*body)()) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = body();
  if (!s.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", name, std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace sluice::bench

#endif  // SLUICE_BENCH_BENCH_UTIL_H_
