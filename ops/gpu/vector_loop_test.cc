#include "ops/gpu/vector_loop.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace sluice::gpu {
namespace {

// Runs every thread of a grid of `threads` over n elements the way a kernel
// does, and counts how often each element is written.
template <int kVec>
std::vector<int> Coverage(int64_t n, int64_t threads) {
  std::vector<int> writes(static_cast<size_t>(n), 0);
  for (int64_t t = 0; t < threads; ++t) {
    ForEachVectorized<kVec>(
        n, t, threads,
        [&](int64_t p) {
          for (int k = 0; k < kVec; ++k) ++writes[static_cast<size_t>(p * kVec + k)];
        },
        [&](int64_t i) { ++writes[static_cast<size_t>(i)]; });
  }
  return writes;
}

// The grids the launchers use: one thread per pack (rounded up), or a capped
// grid whose threads stride over the rest.
template <int kVec>
void ExpectEveryElementOnce(int64_t n) {
  const int64_t full = (n + kVec - 1) / kVec;
  for (int64_t threads : {full, int64_t{1}, int64_t{3}, int64_t{256}}) {
    if (threads <= 0) continue;
    std::vector<int> writes = Coverage<kVec>(n, threads);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(writes[static_cast<size_t>(i)], 1)
          << "element " << i << " of " << n << ", kVec " << kVec << ", " << threads << " threads";
    }
  }
}

TEST(VectorLoopTest, UnvectorizedWalksEveryElement) {
  // The instance a rank-0 tensor, 1 to 3 floats or an unaligned view takes.
  for (int64_t n = 1; n <= 40; ++n) ExpectEveryElementOnce<1>(n);
  ExpectEveryElementOnce<1>(1 << 12);
}

TEST(VectorLoopTest, VectorizedWalksPacksAndTail) {
  for (int64_t n = 1; n <= 40; ++n) {
    ExpectEveryElementOnce<2>(n);
    ExpectEveryElementOnce<4>(n);
    ExpectEveryElementOnce<8>(n);
  }
  ExpectEveryElementOnce<4>((1 << 12) + 3);
}

TEST(VectorLoopTest, Split) {
  EXPECT_EQ(SplitForVectors(3, 1).tail_begin, 0);
  EXPECT_EQ(SplitForVectors(3, 1).packs, 0);
  EXPECT_EQ(SplitForVectors(7, 4).packs, 1);
  EXPECT_EQ(SplitForVectors(7, 4).tail_begin, 4);
  EXPECT_EQ(SplitForVectors(8, 4).tail_begin, 8);
  EXPECT_EQ(SplitForVectors(0, 4).packs, 0);
}

TEST(VectorLoopTest, EmptyWalksNothing) {
  int calls = 0;
  ForEachVectorized<4>(0, 0, 1, [&](int64_t) { ++calls; }, [&](int64_t) { ++calls; });
  ForEachVectorized<1>(0, 0, 1, [&](int64_t) { ++calls; }, [&](int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace sluice::gpu
