#include "ops/internal/blas.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/compute_pool.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace internal {
namespace {

// C = op(A) op(B) + beta C by the definition, in double.
std::vector<float> Reference(bool ta, bool tb, int m, int n, int k, const std::vector<float>& a,
                             const std::vector<float>& b, const std::vector<float>& c0,
                             float beta) {
  const int lda = ta ? m : k, ldb = tb ? k : n;
  std::vector<float> c(c0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) {
        const float av = ta ? a[p * lda + i] : a[i * lda + p];
        const float bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        sum += double{av} * bv;
      }
      c[i * n + j] = static_cast<float>(sum + beta * c0[i * n + j]);
    }
  }
  return c;
}

std::vector<float> Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Every transposition and both betas, for a shape, on the current pool.
void CheckShape(int m, int n, int k) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f}) {
        SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " ta=" << ta
                                        << " tb=" << tb << " beta=" << beta);
        const std::vector<float> a = Random(size_t{1} * m * k, 1), b = Random(size_t{1} * k * n, 2);
        const std::vector<float> c0 = Random(size_t{1} * m * n, 3);
        std::vector<float> c(c0);
        Gemm(ta, tb, m, n, k, a.data(), ta ? m : k, b.data(), tb ? k : n, c.data(), n, beta);
        const std::vector<float> want = Reference(ta, tb, m, n, k, a, b, c0, beta);
        double worst = 0;
        for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, double{std::fabs(c[i] - want[i])});
        EXPECT_LT(worst, 1e-3) << "largest error";
      }
    }
  }
}

// Tall (split by rows), wide (split by columns), small (not split), and
// extents that the blocks do not divide.
const int kShapes[][3] = {{300, 70, 130}, {64, 333, 120}, {16, 16, 16}, {257, 129, 200}};

constexpr SgemmLibrary kLibraries[] = {SgemmLibrary::kOneDnn, SgemmLibrary::kOpenBlas};

// Selects a float GEMM library for one test, then the default again.
class ScopedSgemmLibrary {
 public:
  explicit ScopedSgemmLibrary(SgemmLibrary library) { SetSgemmLibrary(library); }
  ~ScopedSgemmLibrary() { SetSgemmLibrary(SgemmLibrary::kOneDnn); }
};

TEST(GemmTest, SplitOverADevicePoolEqualsTheDefinition) {
  for (SgemmLibrary library : kLibraries) {
    SCOPED_TRACE(SgemmLibraryName(library));
    ScopedSgemmLibrary scoped_library(library);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool("gemm_test", threads);
      ScopedComputePool scoped(&pool);
      for (const auto& s : kShapes) CheckShape(s[0], s[1], s[2]);
    }
  }
}

TEST(GemmTest, OneDnnIsTheDefault) {
  if (std::getenv("SLUICE_SGEMM") != nullptr) GTEST_SKIP() << "SLUICE_SGEMM is set";
  EXPECT_EQ(CurrentSgemmLibrary(), SgemmLibrary::kOneDnn);
}

TEST(GemmTest, OutsideADeviceUsesTheDefaultPool) {
  ASSERT_EQ(CurrentComputePool(), nullptr);
  for (const auto& s : kShapes) CheckShape(s[0], s[1], s[2]);
}

TEST(GemmTest, TwoDevicesMultiplyAtOnce) {
  // Two "devices" of one thread each, each running GEMMs in its own thread
  // at the same time (no process-wide lock): both results stay right.
  const int m = 200, n = 180, k = 160;
  const std::vector<float> a = Random(m * k, 4), b = Random(k * n, 5), zero(m * n, 0.0f);
  const std::vector<float> want = Reference(false, false, m, n, k, a, b, zero, 0.0f);
  auto run = [&](std::vector<float>* out) {
    ThreadPool pool("device", 1);
    ScopedComputePool scoped(&pool);
    for (int i = 0; i < 20; ++i) {
      Gemm(false, false, m, n, k, a.data(), k, b.data(), n, out->data(), n);
    }
  };
  std::vector<float> c1(m * n), c2(m * n);
  std::thread t1(run, &c1), t2(run, &c2);
  t1.join();
  t2.join();
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(c1[i], want[i], 1e-3) << i;
    ASSERT_NEAR(c2[i], want[i], 1e-3) << i;
  }
}

TEST(GemmTest, BetaZeroNeverReadsC) {
  // A fresh output buffer may hold anything, NaN included.
  for (SgemmLibrary library : kLibraries) {
    SCOPED_TRACE(SgemmLibraryName(library));
    ScopedSgemmLibrary scoped_library(library);
    for (const auto& s : kShapes) {
      const int m = s[0], n = s[1], k = s[2];
      const std::vector<float> a = Random(size_t{1} * m * k, 9);
      const std::vector<float> b = Random(size_t{1} * k * n, 10);
      std::vector<float> c(size_t{1} * m * n, std::nanf(""));
      Gemm(false, false, m, n, k, a.data(), k, b.data(), n, c.data(), n);
      const std::vector<float> want =
          Reference(false, false, m, n, k, a, b, std::vector<float>(c.size(), 0.0f), 0.0f);
      for (size_t i = 0; i < c.size(); ++i) {
        ASSERT_NEAR(c[i], want[i], 1e-3) << m << "x" << n << " " << i;
      }
    }
  }
}

TEST(GemmTest, EmptyContractionScalesCByBeta) {
  // k = 0: the product is zero, so C = beta * C (BLAS's rule).
  const float a = 0, b = 0;
  for (SgemmLibrary library : kLibraries) {
    ScopedSgemmLibrary scoped_library(library);
    for (float beta : {0.0f, 0.5f}) {
      std::vector<float> c = {4.0f, -2.0f, 6.0f, 8.0f};
      Gemm(false, false, 2, 2, 0, &a, 1, &b, 2, c.data(), 2, beta);
      EXPECT_EQ(c, (std::vector<float>{4 * beta, -2 * beta, 6 * beta, 8 * beta}))
          << SgemmLibraryName(library) << " beta=" << beta;
    }
  }
}

TEST(GemmTest, ScaledGemmAccumulatesAlphaTimesTheProduct) {
  // An SGD step W -= lr * Xt dY, split over a two-thread device.
  const int m = 96, n = 80, k = 64;
  const std::vector<float> x = Random(k * m, 6), dy = Random(k * n, 7), w0 = Random(m * n, 8);
  const std::vector<float> product =
      Reference(true, false, m, n, k, x, dy, std::vector<float>(m * n, 0.0f), 0.0f);
  ThreadPool pool("device", 2);
  ScopedComputePool scoped(&pool);
  std::vector<float> w(w0);
  ScaledGemm(true, false, m, n, k, -0.5f, x.data(), m, dy.data(), n, 1.0f, w.data(), n);
  for (size_t i = 0; i < w.size(); ++i) ASSERT_NEAR(w[i], w0[i] - 0.5f * product[i], 1e-4) << i;
}

TEST(ComputePoolTest, ScopesNestAndRestore) {
  ThreadPool outer("outer", 1), inner("inner", 1);
  EXPECT_EQ(CurrentComputePool(), nullptr);
  {
    ScopedComputePool a(&outer);
    EXPECT_EQ(CurrentComputePool(), &outer);
    {
      ScopedComputePool b(&inner);
      EXPECT_EQ(CurrentComputePool(), &inner);
    }
    EXPECT_EQ(CurrentComputePool(), &outer);
    std::thread([] { EXPECT_EQ(CurrentComputePool(), nullptr); }).join();  // per thread
  }
  EXPECT_EQ(CurrentComputePool(), nullptr);
}

}  // namespace
}  // namespace internal
}  // namespace sluice
