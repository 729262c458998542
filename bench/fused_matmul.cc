// The two ways _FusedMatMul's CPU kernel can apply its bias and ReLU
// (ops/nn/internal/fused_gemm.h), at the MLP's forward shapes (batch 256:
// 784 -> 1024 and 1024 -> 1024), against the unfused GEMM + BiasAdd + ReLU
// passes each into a fresh buffer, as the separate kernels run them:
//
//   bazel run //bench:fused_matmul [-- --reps=200 --rounds=5]
//
// Prints `fused_matmul_<m>x<k>x<n>_<way>: X ms` (median over alternating
// rounds of --reps calls each) for way in epilogue, beta_one, unfused.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/bench_util.h"
#include "ops/nn/internal/fused_gemm.h"
#include "runtime/thread_pool.h"

ABSL_FLAG(int, reps, 200, "calls per round");
ABSL_FLAG(int, rounds, 5, "alternating rounds");

namespace sluice {
namespace {

std::vector<float> Filled(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>((i * 7919) % 97) - 0.5f;
  return v;
}

void Unfused(const internal::FusedGemmArgs& g, ThreadPool* pool, std::vector<float>& biased,
             std::vector<float>& relu) {
  internal::FusedGemmArgs plain = g;
  plain.bias = nullptr;
  plain.activation = internal::Activation::kNone;
  internal::FusedGemm(plain, pool, internal::BiasPlacement::kEpilogue);  // the GEMM alone
  const int64_t n = g.n;
  pool->ParallelFor(g.m, 32, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      for (int64_t j = 0; j < n; ++j) biased[r * n + j] = g.out[r * n + j] + g.bias[j];
    }
  });
  pool->ParallelFor(g.m, 32, [&](int64_t b, int64_t e) {
    for (int64_t i = b * n; i < e * n; ++i) relu[i] = biased[i] < 0 ? 0 : biased[i];
  });
}

absl::Status Main() {
  ThreadPool pool("bench", static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const int m = 256;
  for (const auto& [k, n] : std::vector<std::pair<int, int>>{{784, 1024}, {1024, 1024}}) {
    std::vector<float> a = Filled(size_t(m) * k, 0.01f), b = Filled(size_t(k) * n, 0.01f);
    std::vector<float> bias = Filled(n, 0.01f), out(size_t(m) * n);
    std::vector<float> biased(out.size()), relu(out.size());
    internal::FusedGemmArgs g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a.data();
    g.lda = k;
    g.b = b.data();
    g.ldb = n;
    g.bias = bias.data();
    g.activation = internal::Activation::kRelu;
    g.out = out.data();
    const char* names[3] = {"epilogue", "beta_one", "unfused"};
    std::vector<double> medians[3];
    const int reps = absl::GetFlag(FLAGS_reps);
    for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
      for (int j = 0; j < 3; ++j) {
        const int way = (r + j) % 3;
        medians[way].push_back(bench::Median(bench::TimeRepeated(reps, [&] {
          if (way == 0) internal::FusedGemm(g, &pool, internal::BiasPlacement::kEpilogue);
          if (way == 1) internal::FusedGemm(g, &pool, internal::BiasPlacement::kBetaOne);
          if (way == 2) Unfused(g, &pool, biased, relu);
        })));
      }
    }
    for (int way = 0; way < 3; ++way) {
      std::printf("fused_matmul_%dx%dx%d_%s: %.4f ms\n", m, k, n, names[way],
                  bench::Median(medians[way]));
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::bench::BenchMain(argc, argv, "fused_matmul", sluice::Main);
}
