// The row-major to column-major mapping of the GPU GEMMs, checked on the
// CPU: a naive column-major BLAS (reading memory as cuBLAS does) given
// ToColumnMajor's operands computes the row-major product, and its first
// operand reduced over k (cuBLASLt's BGRADA) is the column sums of op(B).
#include "ops/gpu/internal/blas_layout.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::internal {
namespace {

// op(x)[i][j] of a column-major operand.
double At(const std::vector<double>& x, const ColumnMajorOperand& o, int64_t i, int64_t j) {
  const int64_t r = o.transposed ? j : i, c = o.transposed ? i : j;
  EXPECT_LT(r, o.rows);
  EXPECT_LT(c, o.cols);
  EXPECT_LE(o.rows, o.ld);  // a column fits its leading dimension
  return x[c * o.ld + r];
}

TEST(BlasLayoutTest, ColumnMajorGemmComputesTheRowMajorProduct) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-4, 4);
  for (int64_t m : {1, 3, 5})
    for (int64_t n : {1, 2, 7})
      for (int64_t k : {1, 4})
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            // Row-major A ([m,k] or [k,m]) and B ([k,n] or [n,k]).
            const int64_t lda = ta ? m : k, ldb = tb ? k : n;
            std::vector<double> a(m * k), b(k * n);
            for (double& v : a) v = d(rng);
            for (double& v : b) v = d(rng);
            auto op_a = [&](int64_t i, int64_t j) { return ta ? a[j * lda + i] : a[i * lda + j]; };
            auto op_b = [&](int64_t i, int64_t j) { return tb ? b[j * ldb + i] : b[i * ldb + j]; };
            const ColumnMajorGemm g = ToColumnMajor(ta, tb, m, n, k, lda, ldb);
            ASSERT_EQ(g.k, k);
            std::vector<double> c(m * n, 0.0);  // written column-major [g.m, g.n], ldc
            for (int64_t i = 0; i < g.m; ++i)
              for (int64_t j = 0; j < g.n; ++j) {
                double s = 0;
                for (int64_t l = 0; l < g.k; ++l) s += At(b, g.first, i, l) * At(a, g.second, l, j);
                c[j * g.ldc + i] = s;
              }
            // Read row-major: C[i][j] = sum op(A)[i][l] op(B)[l][j].
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double want = 0;
                for (int64_t l = 0; l < k; ++l) want += op_a(i, l) * op_b(l, j);
                EXPECT_EQ(c[i * n + j], want) << m << "x" << k << "x" << n << " ta=" << ta
                                              << " tb=" << tb;
              }
            // BGRADA: the first operand summed over k, one value per output
            // row (g.m = n of them), is op(B)'s column sums.
            for (int64_t i = 0; i < g.m; ++i) {
              double bgrad = 0, want = 0;
              for (int64_t l = 0; l < g.k; ++l) bgrad += At(b, g.first, i, l);
              for (int64_t l = 0; l < k; ++l) want += op_b(l, i);
              EXPECT_EQ(bgrad, want);
            }
          }
}

}  // namespace
}  // namespace sluice::internal
