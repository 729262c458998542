// float32 MatMul through Session::Run against the GEMM libraries called
// directly, in the same process, on the same square sizes: OpenBLAS's
// cblas_sgemm and oneDNN's dnnl_sgemm, each on all cores.
//
//   bazel run //bench:matmul [-- --sizes=256,1024,2048]
//
// Session: two Placeholders fed pre-made tensors, the product fetched (the
// output is a fresh tensor each step, as in a real graph). Direct: one
// library call into a buffer allocated once. Prints per size
//   matmul_N_session: X ms, matmul_N_cblas: Y ms, matmul_N_onednn: Z ms,
//   matmul_N_ratio: Y/X (OpenBLAS's time over the session's; 1.0 means the
//   session adds nothing to OpenBLAS), matmul_N_onednn_ratio: Z/X.
#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "session/direct_session.h"
#include "sluice.h"

extern "C" void openblas_set_num_threads(int num_threads);
extern "C" void omp_set_num_threads(int num_threads);  // libgomp, oneDNN's threads

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
                   NewSession(BuiltinSessionConfig(), *s.graph()));
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
  bool onednn_ok = true;
  auto onednn_step = [&] {
    onednn_ok = onednn_ok && dnnl_sgemm('N', 'N', n, n, n, 1.0f, ta.data<float>(), n,
                                        tb.data<float>(), n, 0.0f, out.data(), n) == dnnl_success;
  };
  // Each method gets the machine as it wants it: Sluice one OpenBLAS thread
  // (its own pools split the work), the raw peers all cores. Both libraries'
  // idle workers keep polling after a threaded call (OpenMP's for
  // milliseconds, OpenBLAS's for about 0.1 s), which halved the speed of
  // whatever ran next, so each raw peer's rounds end with a pause.
  auto for_session = [&] { openblas_set_num_threads(1); };
  auto for_cblas = [&] { openblas_set_num_threads(cores); };
  auto for_onednn = [&] { omp_set_num_threads(cores); };
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
  // Warm up all (the first Run compiles; the libraries start their threads),
  // then size the repetitions from one timed call.
  for (int i = 0; i < 3; ++i) {
    for_session();
    session_step();
    for_cblas();
    cblas_step();
    settle();
    for_onednn();
    onednn_step();
    settle();
  }
  RETURN_IF_ERROR(status);
  if (!onednn_ok) return absl::InternalError("dnnl_sgemm failed");
  const double one_ms = bench::Median(bench::TimeRepeated(3, cblas_step));
  settle();
  const int reps = std::max(5, static_cast<int>(absl::GetFlag(FLAGS_seconds) * 1000 / one_ms));
  // Interleave in rounds so that noise hits all methods alike.
  std::vector<double> session_ms, cblas_ms, onednn_ms;
  const int rounds = 5, per_round = (reps + rounds - 1) / rounds;
  for (int r = 0; r < rounds; ++r) {
    for_session();
    for (double v : bench::TimeRepeated(per_round, session_step)) session_ms.push_back(v);
    for_cblas();
    for (double v : bench::TimeRepeated(per_round, cblas_step)) cblas_ms.push_back(v);
    settle();
    for_onednn();
    for (double v : bench::TimeRepeated(per_round, onednn_step)) onednn_ms.push_back(v);
    settle();
  }
  RETURN_IF_ERROR(status);
  const double sm = bench::Median(session_ms), cm = bench::Median(cblas_ms);
  const double om = bench::Median(onednn_ms);
  const double gflop = 2.0 * n * n * n * 1e-9;
  const long long size = n;
  std::printf("matmul_%lld_session: %.3f ms\n", size, sm);
  std::printf("matmul_%lld_cblas: %.3f ms\n", size, cm);
  std::printf("matmul_%lld_onednn: %.3f ms\n", size, om);
  std::printf("matmul_%lld_session_gflops: %.1f GFLOP/s\n", size, gflop / (sm * 1e-3));
  std::printf("matmul_%lld_ratio: %.3f\n", size, cm / sm);
  std::printf("matmul_%lld_onednn_ratio: %.3f\n", size, om / sm);
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
