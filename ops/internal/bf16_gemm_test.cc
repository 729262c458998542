#include "ops/internal/bf16_gemm.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace internal {
namespace {

std::vector<BFloat16> Bf16(const std::vector<float>& v) {
  std::vector<BFloat16> out(v.size());
  FloatToBf16(v.data(), out.data(), static_cast<int64_t>(v.size()));
  return out;
}

// Values exact in bfloat16 (8 significant bits), so products and their
// float sums are exact too and the GEMM must equal the float reference.
std::vector<float> Exact(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed) % 17 - 8) / 4.0f;
  return v;
}

TEST(Bf16GemmTest, EveryTransposeAndBetaMatchesAFloatReference) {
  const int64_t m = 5, n = 7, k = 9;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f, 0.5f}) {
        const std::vector<float> a = Exact(m * k, 1), b = Exact(k * n, 2);
        std::vector<float> c = Exact(m * n, 3), want = c;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float sum = 0;
            for (int64_t p = 0; p < k; ++p) {
              sum += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            }
            want[i * n + j] = sum + beta * want[i * n + j];
          }
        }
        const std::vector<BFloat16> ab = Bf16(a), bb = Bf16(b);
        Bf16Gemm(ta, tb, m, n, k, ab.data(), ta ? m : k, bb.data(), tb ? k : n, beta, c.data(), n);
        for (int64_t i = 0; i < m * n; ++i) {
          ASSERT_FLOAT_EQ(c[i], want[i])
              << "ta " << ta << " tb " << tb << " beta " << beta << " at " << i;
        }
      }
    }
  }
}

TEST(Bf16GemmTest, ConversionsRoundToNearestEvenAndKeepNan) {
  const std::vector<float> in = {1.0f, 1.00390625f, 1.01171875f, -2.5f, NAN, INFINITY};
  std::vector<BFloat16> b(in.size());
  FloatToBf16(in.data(), b.data(), static_cast<int64_t>(in.size()));
  std::vector<float> back(in.size());
  Bf16ToFloat(b.data(), back.data(), static_cast<int64_t>(in.size()));
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], 1.0f);       // halfway: to even
  EXPECT_EQ(back[2], 1.015625f);  // halfway: to even (up)
  EXPECT_EQ(back[3], -2.5f);
  EXPECT_TRUE(std::isnan(back[4]));
  EXPECT_EQ(back[5], INFINITY);
  // The same bits as BFloat16's own conversions, over many values.
  std::vector<float> many;
  for (uint32_t bits = 0; bits < 0xffffffffu - 40503u; bits += 40503u) {
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    many.push_back(f);
  }
  std::vector<BFloat16> fast(many.size());
  FloatToBf16(many.data(), fast.data(), static_cast<int64_t>(many.size()));
  for (size_t i = 0; i < many.size(); ++i) {
    ASSERT_EQ(fast[i].bits, BFloat16::FromFloat(many[i]).bits) << many[i];
    float f;
    Bf16ToFloat(&fast[i], &f, 1);
    const float want = fast[i].ToFloat();
    ASSERT_EQ(std::memcmp(&f, &want, sizeof(f)), 0);
  }
}

TEST(Bf16GemmTest, NativeWhereTheCpuHasAvx512Bf16) {
  std::printf("native bf16 GEMM on this CPU: %s\n", CpuHasNativeBf16Gemm() ? "yes" : "no");
  EXPECT_EQ(CpuHasNativeBf16Gemm(), __builtin_cpu_supports("avx512bf16") != 0);
}

}  // namespace
}  // namespace internal
}  // namespace sluice
