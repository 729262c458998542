// Host checks of the Philox generator and the per-block samplers that the GPU
// random kernels run (the same header code, compiled by g++ here).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ops/gpu/philox.h"
#include "ops/gpu/random_sampling.h"

namespace sluice::philox {
namespace {

void ExpectBlock(Counter c, Key k, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  const Counter r = Philox4x32_10(c, k);
  EXPECT_EQ(r.v[0], r0);
  EXPECT_EQ(r.v[1], r1);
  EXPECT_EQ(r.v[2], r2);
  EXPECT_EQ(r.v[3], r3);
}

// Known answers for Philox4x32-10 published with Random123 (Salmon et al.).
TEST(PhiloxTest, KnownAnswers) {
  ExpectBlock({{0, 0, 0, 0}}, {{0, 0}}, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u);
  ExpectBlock({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, {{0xffffffffu, 0xffffffffu}},
              0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  ExpectBlock({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, {{0xa4093822u, 0x299f31d0u}},
              0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(PhiloxTest, CounterAndKeyLayout) {
  const Counter c = CounterFrom(0x0123456789abcdefull, 7);
  EXPECT_EQ(c.v[0], 0x89abcdefu);
  EXPECT_EQ(c.v[1], 0x01234567u);
  EXPECT_EQ(c.v[2], 7u);
  EXPECT_EQ(c.v[3], 0u);
  const Key k = KeyFromU64(0xfedcba9876543210ull);
  EXPECT_EQ(k.v[0], 0x76543210u);
  EXPECT_EQ(k.v[1], 0xfedcba98u);
}

TEST(PhiloxTest, UniformConversionsStayBelowOne) {
  EXPECT_EQ(Uint32ToUniformFloat(0), 0.0f);
  EXPECT_LT(Uint32ToUniformFloat(0xffffffffu), 1.0f);
  EXPECT_GT(Uint32ToUniformFloatOpenZero(0), 0.0f);
  EXPECT_EQ(Uint32ToUniformFloatOpenZero(0xffffffffu), 1.0f);
  for (int bits : {8, 11, 24}) {
    const float top = Uint32ToUniformBits(0xffffffffu, bits);
    EXPECT_LT(top, 1.0f) << bits;
    // A whole number of 2^-bits steps: exact in a type with `bits` bits.
    const float steps = top * static_cast<float>(1u << bits);
    EXPECT_EQ(steps, std::floor(steps)) << bits;
    EXPECT_EQ(steps, static_cast<float>((1u << bits) - 1)) << bits;
  }
}

struct Moments {
  double mean = 0;
  double variance = 0;
};
Moments MomentsOf(const std::vector<float>& v) {
  Moments m;
  for (float x : v) m.mean += x;
  m.mean /= v.size();
  for (float x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= v.size();
  return m;
}

constexpr uint64_t kKey = 0x5eed5eed12345678ull;
constexpr int kBlocks = 50000;  // 200,000 values

TEST(RandomSamplingTest, UniformIsInRangeWithTheRightMoments) {
  std::vector<float> all;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    float u[4];
    UniformBlock(KeyFromU64(kKey), b, 24, u);
    for (float x : u) {
      ASSERT_GE(x, 0.0f);
      ASSERT_LT(x, 1.0f);
      all.push_back(x);
    }
  }
  const Moments m = MomentsOf(all);
  EXPECT_NEAR(m.mean, 0.5, 0.005);
  EXPECT_NEAR(m.variance, 1.0 / 12, 0.002);
}

TEST(RandomSamplingTest, NormalHasMeanZeroVarianceOne) {
  std::vector<float> all;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    float z[4];
    NormalBlock(KeyFromU64(kKey), b, z);
    for (float x : z) {
      ASSERT_TRUE(std::isfinite(x));
      ASSERT_LT(std::fabs(x), 6.0f);
      all.push_back(x);
    }
  }
  const Moments m = MomentsOf(all);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.variance, 1.0, 0.02);
}

TEST(RandomSamplingTest, TruncatedNormalStaysWithinTwoDeviations) {
  std::vector<float> all;
  uint32_t most_attempts = 0;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    float z[4];
    const uint32_t attempts = TruncatedNormalBlock(KeyFromU64(kKey), b, z);
    ASSERT_GE(attempts, 1u);
    ASSERT_LE(attempts, kMaxAttempts);
    most_attempts = std::max(most_attempts, attempts);
    for (float x : z) {
      ASSERT_LE(std::fabs(x), 2.0f);
      all.push_back(x);
    }
  }
  EXPECT_GE(most_attempts, 2u);  // some blocks needed a redraw
  const Moments m = MomentsOf(all);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  // Variance of N(0, 1) truncated to [-2, 2]: 1 - 4 phi(2) / (2 Phi(2) - 1).
  EXPECT_NEAR(m.variance, 0.7737, 0.015);
}

TEST(RandomSamplingTest, SameBlockSameValuesOtherBlocksDiffer) {
  float a[4], b[4], c[4];
  NormalBlock(KeyFromU64(kKey), 42, a);
  NormalBlock(KeyFromU64(kKey), 42, b);
  NormalBlock(KeyFromU64(kKey), 43, c);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(a[j], b[j]);
  EXPECT_NE(a[0], c[0]);
  float d[4];
  NormalBlock(KeyFromU64(kKey + 1), 42, d);
  EXPECT_NE(a[0], d[0]);
}

TEST(RandomSamplingTest, UniformIntCoversTheRangeEvenly) {
  constexpr uint64_t kRange = 10;
  std::vector<int> counts(kRange, 0);
  for (uint64_t b = 0; b < kBlocks; ++b) {
    uint64_t off[2];
    UniformIntBlock(KeyFromU64(kKey), b, kRange, off);
    for (uint64_t o : off) {
      ASSERT_LT(o, kRange);
      ++counts[o];
    }
  }
  for (int c : counts) EXPECT_NEAR(c, 2.0 * kBlocks / kRange, 0.05 * 2 * kBlocks / kRange);
  uint64_t one[2];
  UniformIntBlock(KeyFromU64(kKey), 7, 1, one);
  EXPECT_EQ(one[0], 0u);
  EXPECT_EQ(one[1], 0u);
}

TEST(RandomSamplingTest, UniformIntRejectsTheTopPartialMultiple) {
  // Half of all 64-bit values are rejected for this range: redraws happen,
  // results stay below it, and both halves of the range are hit.
  const uint64_t range = (uint64_t{1} << 63) + 1;
  int high = 0;
  for (uint64_t b = 0; b < 2000; ++b) {
    uint64_t off[2];
    UniformIntBlock(KeyFromU64(kKey), b, range, off);
    for (uint64_t o : off) {
      ASSERT_LT(o, range);
      high += o >= (uint64_t{1} << 62);
    }
  }
  EXPECT_NEAR(high, 2000, 200);
}

}  // namespace
}  // namespace sluice::philox
