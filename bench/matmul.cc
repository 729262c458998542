// float32 MatMul through Session::Run against cblas_sgemm called directly,
// in the same process, on the same square sizes.
//
//   bazel run //bench:matmul [-- --sizes=256,1024,2048]
//
// Session: two Placeholders fed pre-made tensors, the product fetched (the
// output is a fresh tensor each step, as in a real graph). Direct: one
// cblas_sgemm into a buffer allocated once. Prints per size
//   matmul_N_session: X ms, matmul_N_cblas: Y ms, matmul_N_ratio: Y/X
// (1.0 means the session adds nothing).
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "runtime/direct_session.h"
#include "sluice.h"

extern "C" void openblas_set_num_threads(int num_threads);

ABSL_FLAG(std::string, sizes, "256,1024,2048", "square matrix sizes, comma separated");
ABSL_FLAG(double, seconds, 2.0, "approximate time to spend per size and method");

namespace sluice {
namespace {

Tensor RandomMatrix(int64_t n, uint64_t seed) {
  Tensor t(DT_FLOAT, TensorShape({n, n}));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = u(rng);
  return t;
}

absl::Status BenchSize(int64_t n) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Placeholder(s.WithOpName("a"), DT_FLOAT, {.shape = TensorShape({n, n})});
  Output b = ops::Placeholder(s.WithOpName("b"), DT_FLOAT, {.shape = TensorShape({n, n})});
  Output c = ops::MatMul(s.WithOpName("c"), a, b);
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                   NewSession(BuiltinSessionOptions(), *s.graph()));
  Tensor ta = RandomMatrix(n, 1), tb = RandomMatrix(n, 2);
  std::vector<float> out(static_cast<size_t>(n * n));

  absl::Status status;
  auto session_step = [&] {
    absl::StatusOr<std::vector<Tensor>> r = session->Run({{a, ta}, {b, tb}}, {c});
    if (!r.ok()) status = r.status();
  };
  // Sluice turns OpenBLAS's own threads off process-wide at its first GEMM
  // (ops/internal/blas.h) and splits GEMMs over its device pools instead; the
  // raw peer gets OpenBLAS at its full thread count, and Sluice gets its one
  // thread back before each of its rounds.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto cblas_step = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, ta.data<float>(), n,
                tb.data<float>(), n, 0.0f, out.data(), n);
  };
  // Warm up both (the first Run compiles; BLAS starts its threads), then
  // size the repetitions from one timed call.
  for (int i = 0; i < 3; ++i) {
    openblas_set_num_threads(1);
    session_step();
    openblas_set_num_threads(cores);
    cblas_step();
  }
  RETURN_IF_ERROR(status);
  const double one_ms = bench::Median(bench::TimeRepeated(3, cblas_step));
  const int reps = std::max(5, static_cast<int>(absl::GetFlag(FLAGS_seconds) * 1000 / one_ms));
  // Interleave in rounds so that noise hits both methods alike.
  std::vector<double> session_ms, cblas_ms;
  const int rounds = 5;
  for (int r = 0; r < rounds; ++r) {
    openblas_set_num_threads(1);
    for (double v : bench::TimeRepeated((reps + rounds - 1) / rounds, session_step)) {
      session_ms.push_back(v);
    }
    openblas_set_num_threads(cores);
    for (double v : bench::TimeRepeated((reps + rounds - 1) / rounds, cblas_step)) {
      cblas_ms.push_back(v);
    }
  }
  RETURN_IF_ERROR(status);
  const double sm = bench::Median(session_ms), cm = bench::Median(cblas_ms);
  const double gflop = 2.0 * n * n * n * 1e-9;
  std::printf("matmul_%lld_session: %.3f ms\n", static_cast<long long>(n), sm);
  std::printf("matmul_%lld_cblas: %.3f ms\n", static_cast<long long>(n), cm);
  std::printf("matmul_%lld_session_gflops: %.1f GFLOP/s\n", static_cast<long long>(n),
              gflop / (sm * 1e-3));
  std::printf("matmul_%lld_ratio: %.3f\n", static_cast<long long>(n), cm / sm);
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Main() {
  for (absl::string_view v : absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    int64_t n;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--sizes: bad size '", v, "'"));
    }
    RETURN_IF_ERROR(BenchSize(n));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "matmul", sluice::Main);
}
