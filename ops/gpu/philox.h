// Philox4x32-10: the counter-based random generator of Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3" (SC'11), written once for
// the host (g++) and the device (nvcc): the GPU random kernels call it per
// thread, the host tests check it against the paper's known answers.
//
//   sluice::philox::Key key = sluice::philox::KeyFromU64(0x0123456789abcdefull);
//   sluice::philox::Counter c = sluice::philox::CounterFrom(block, attempt);
//   sluice::philox::Counter r = sluice::philox::Philox4x32_10(c, key);  // 128 random bits
//   float u = sluice::philox::Uint32ToUniformFloat(r.v[0]);            // in [0, 1)
//
// Plain C++ without CUDA (standard library only), so a .cu file may include
// it. Pure functions: thread-safe, no state, no ownership.
#ifndef SLUICE_OPS_GPU_PHILOX_H_
#define SLUICE_OPS_GPU_PHILOX_H_

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_PHILOX_FN __host__ __device__ __forceinline__
#else
#define SLUICE_PHILOX_FN inline
#endif

namespace sluice::philox {

struct Counter {
  uint32_t v[4];
};
struct Key {
  uint32_t v[2];
};

// The round multipliers and the Weyl key increments (golden ratio, sqrt(3)-1).
inline constexpr uint32_t kM0 = 0xD2511F53u;
inline constexpr uint32_t kM1 = 0xCD9E8D57u;
inline constexpr uint32_t kW0 = 0x9E3779B9u;
inline constexpr uint32_t kW1 = 0xBB67AE85u;

SLUICE_PHILOX_FN Key KeyFromU64(uint64_t k) {
  return Key{{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)}};
}

// The 128-bit counter (low word first): `block` in words 0-1, `attempt` in
// word 2 (redraws of a rejection loop), word 3 zero.
SLUICE_PHILOX_FN Counter CounterFrom(uint64_t block, uint32_t attempt) {
  return Counter{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), attempt, 0u}};
}

SLUICE_PHILOX_FN void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

SLUICE_PHILOX_FN Counter Round(const Counter& c, const Key& k) {
  uint32_t hi0, lo0, hi1, lo1;
  MulHiLo(kM0, c.v[0], &hi0, &lo0);
  MulHiLo(kM1, c.v[2], &hi1, &lo1);
  return Counter{{hi1 ^ c.v[1] ^ k.v[0], lo1, hi0 ^ c.v[3] ^ k.v[1], lo0}};
}

// Ten rounds, the key bumped between consecutive rounds.
SLUICE_PHILOX_FN Counter Philox4x32_10(Counter c, Key k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k.v[0] += kW0;
      k.v[1] += kW1;
    }
    c = Round(c, k);
  }
  return c;
}

// [0, 1) from the top 24 bits: every value exact in float.
SLUICE_PHILOX_FN float Uint32ToUniformFloat(uint32_t x) {
  return static_cast<float>(x >> 8) * 5.9604644775390625e-8f;  // 2^-24
}
// (0, 1]: for logarithms.
SLUICE_PHILOX_FN float Uint32ToUniformFloatOpenZero(uint32_t x) {
  return static_cast<float>((x >> 8) + 1u) * 5.9604644775390625e-8f;
}
// [0, 1) with `bits` significant bits (11 for half, 8 for bfloat16), so the
// value survives conversion to the narrow type exactly (never rounds to 1).
SLUICE_PHILOX_FN float Uint32ToUniformBits(uint32_t x, int bits) {
  return static_cast<float>(x >> (32 - bits)) / static_cast<float>(1u << bits);
}

}  // namespace sluice::philox

#undef SLUICE_PHILOX_FN

#endif  // SLUICE_OPS_GPU_PHILOX_H_
