// The values of one Philox block (ops/gpu/philox.h) for each distribution of
// the random ops: the GPU kernels (ops/gpu/random.cu) call these per thread,
// and being plain C++ they run on the host too, where tests check them.
//
//   float v[4];
//   sluice::philox::NormalBlock(key, base + b, v);   // values 4b .. 4b+3 of a fill
//
// Block b of a fill gives float values 4b..4b+3 (integer values 2b, 2b+1);
// redraws use counter word 2 (the attempt), so they never collide with
// another block. Pure functions: thread-safe, no ownership.
#ifndef SLUICE_OPS_GPU_RANDOM_SAMPLING_H_
#define SLUICE_OPS_GPU_RANDOM_SAMPLING_H_

#include <cmath>
#include <cstdint>

#include "ops/gpu/philox.h"

#if defined(__CUDACC__)
#define SLUICE_SAMPLING_FN __host__ __device__ __forceinline__
#else
#define SLUICE_SAMPLING_FN inline
#endif

namespace sluice::philox {

// Rounds of redraws before a rejection loop gives up (truncated normal: each
// round yields 4 candidates, 95.4% accepted; integers: a candidate is
// rejected with probability < range / 2^64). Giving up is astronomically
// unlikely; the fallback values stay in range.
inline constexpr uint32_t kMaxAttempts = 16;
inline constexpr float kTwoPi = 6.28318530717958647692f;
// Truncated normals keep |z| <= 2 standard deviations.
inline constexpr float kTruncationBound = 2.0f;

// Four uniforms in [0, 1) with `bits` significant bits: 24 for float, 11 for
// half, 8 for bfloat16 (exact in the output type, never rounding up to 1).
SLUICE_SAMPLING_FN void UniformBlock(Key key, uint64_t block, int bits, float u[4]) {
  const Counter r = Philox4x32_10(CounterFrom(block, 0), key);
  for (int j = 0; j < 4; ++j) u[j] = Uint32ToUniformBits(r.v[j], bits);
}

// Four N(0, 1) from one 128-bit draw: two Box-Muller pairs, u1 in (0, 1] so
// the logarithm is finite (|z| <= sqrt(2 * 24 ln 2) ~ 5.77).
SLUICE_SAMPLING_FN void BoxMuller(const Counter& r, float z[4]) {
  for (int p = 0; p < 2; ++p) {
    const float u1 = Uint32ToUniformFloatOpenZero(r.v[2 * p]);
    const float u2 = Uint32ToUniformFloat(r.v[2 * p + 1]);
    const float radius = sqrtf(-2.0f * logf(u1));
    const float theta = kTwoPi * u2;
    z[2 * p] = radius * cosf(theta);
    z[2 * p + 1] = radius * sinf(theta);
  }
}

SLUICE_SAMPLING_FN void NormalBlock(Key key, uint64_t block, float z[4]) {
  BoxMuller(Philox4x32_10(CounterFrom(block, 0), key), z);
}

// Four N(0, 1) values within [-2, 2]: candidates from attempt 0, 1, ... of
// the block, taken in order, those outside the bound skipped. Returns the
// attempts used (kMaxAttempts + 1 when it gave up and filled with zeros).
SLUICE_SAMPLING_FN uint32_t TruncatedNormalBlock(Key key, uint64_t block, float z[4]) {
  int got = 0;
  uint32_t attempt = 0;
  for (; attempt < kMaxAttempts && got < 4; ++attempt) {
    float c[4];
    BoxMuller(Philox4x32_10(CounterFrom(block, attempt), key), c);
    for (int j = 0; j < 4; ++j) {
      if (got < 4 && fabsf(c[j]) <= kTruncationBound) z[got++] = c[j];
    }
  }
  if (got < 4) {
    for (; got < 4; ++got) z[got] = 0.0f;
    return kMaxAttempts + 1;
  }
  return attempt;
}

// Two offsets uniform in [0, range) (range >= 1), each from 64 bits (words
// 2j, 2j+1) with rejection of the top partial multiple of `range`.
SLUICE_SAMPLING_FN void UniformIntBlock(Key key, uint64_t block, uint64_t range,
                                        uint64_t offset[2]) {
  const uint64_t kMax = ~uint64_t{0};
  const uint64_t limit = kMax - kMax % range;  // accepted: x < limit
  uint64_t x[2] = {0, 0};
  bool done[2] = {false, false};
  for (uint32_t attempt = 0; attempt < kMaxAttempts && !(done[0] && done[1]); ++attempt) {
    const Counter r = Philox4x32_10(CounterFrom(block, attempt), key);
    for (int j = 0; j < 2; ++j) {
      if (done[j]) continue;
      x[j] = static_cast<uint64_t>(r.v[2 * j]) | (static_cast<uint64_t>(r.v[2 * j + 1]) << 32);
      done[j] = x[j] < limit;
    }
  }
  for (int j = 0; j < 2; ++j) offset[j] = x[j] % range;
}

}  // namespace sluice::philox

#undef SLUICE_SAMPLING_FN

#endif  // SLUICE_OPS_GPU_RANDOM_SAMPLING_H_
