// Compiled like ops/math/matmul_kernels.cc: -O3 without FP traps, so the row loops
// vectorize; set before any include.
#pragma GCC optimize("O3", "no-trapping-math")

#include "ops/nn/internal/fused_gemm.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include "ops/internal/blas.h"

namespace sluice {
namespace internal {
namespace {

// Rows per block: about 128 Ki elements, so a block pays for its hand-off.
void ForRowBlocks(ThreadPool* pool, int m, int n, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t min_rows = std::max<int64_t>(1, (int64_t{1} << 17) / std::max(n, 1));
  if (pool == nullptr || m < 2 * min_rows) {
    fn(0, m);
    return;
  }
  pool->ParallelFor(m, min_rows, fn);
}

void AddBiasRow(const float* __restrict bias, float* __restrict row, int n, bool relu) {
  if (relu) {
    for (int j = 0; j < n; ++j) {
      const float v = row[j] + bias[j];
      row[j] = v < 0.0f ? 0.0f : v;
    }
  } else {
    for (int j = 0; j < n; ++j) row[j] += bias[j];
  }
}

void ReluRow(float* row, int n) {
  for (int j = 0; j < n; ++j) row[j] = row[j] < 0.0f ? 0.0f : row[j];
}

void Epilogue(const FusedGemmArgs& g, ThreadPool* pool) {
  const bool relu = g.activation == Activation::kRelu;
  if (g.bias == nullptr && !relu) return;
  ForRowBlocks(pool, g.m, g.n, [&g, relu](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = g.out + r * g.n;
      if (g.bias != nullptr) {
        AddBiasRow(g.bias, row, g.n, relu);
      } else {
        ReluRow(row, g.n);
      }
    }
  });
}

void BetaOne(const FusedGemmArgs& g, ThreadPool* pool) {
  ForRowBlocks(pool, g.m, g.n, [&g](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* row = g.out + r * g.n;
      if (g.bias != nullptr) {
        std::copy(g.bias, g.bias + g.n, row);
      } else {
        std::fill(row, row + g.n, 0.0f);
      }
    }
  });
  if (g.k > 0) {
    ScaledGemm(g.transpose_a, g.transpose_b, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 1.0f,
               g.out, g.n);
  }
  if (g.activation != Activation::kRelu) return;
  ForRowBlocks(pool, g.m, g.n, [&g](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) ReluRow(g.out + r * g.n, g.n);
  });
}

}  // namespace

void FusedGemm(const FusedGemmArgs& g, ThreadPool* pool, BiasPlacement placement) {
  if (placement == BiasPlacement::kBetaOne) {
    BetaOne(g, pool);
    return;
  }
  if (g.k > 0) {
    Gemm(g.transpose_a, g.transpose_b, g.m, g.n, g.k, g.a, g.lda, g.b, g.ldb, g.out, g.n);
  } else {
    std::fill(g.out, g.out + int64_t{g.m} * g.n, 0.0f);  // an empty sum
  }
  Epilogue(g, pool);
}

}  // namespace internal
}  // namespace sluice
