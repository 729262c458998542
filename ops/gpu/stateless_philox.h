// TensorFlow's stateless random numbers (tf.random.stateless_uniform,
// stateless_normal, and through them Keras 3's dropout and initializers):
// the Philox key and counter TensorFlow derives from a two-word seed, the
// counter of each group of values, and its conversions of Philox's 32-bit
// words into values, so that Sluice draws TensorFlow's numbers bit for bit.
//
//   stateless::KeyCounter kc = stateless::FromSeed(7, 42);
//   float v[4];
//   stateless::FloatGroup(kc, g, /*normal=*/false, 23, v);  // values 4g..4g+3 of a float draw
//
// Group g of a draw is Philox of the counter advanced by g: 4 floats, or 2
// doubles (two words each); a normal draw pairs words by Box-Muller; integer
// draws take the words' bits (Int32Group, Int64Group). A truncated normal
// group (TruncatedFloatGroup, TruncatedDoubleGroup) starts 256 (128) Philox
// calls per group further on and rejects values beyond two.
// Written once for the host (g++: the CPU kernels, ops/random) and the
// device (nvcc: ops/gpu/stateless_random.cu), as philox.h. Pure functions:
// thread-safe.
#ifndef SLUICE_OPS_GPU_STATELESS_PHILOX_H_
#define SLUICE_OPS_GPU_STATELESS_PHILOX_H_

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/gpu/philox.h"

#if defined(__CUDACC__)
#define SLUICE_STATELESS_FN __host__ __device__ __forceinline__
#else
#define SLUICE_STATELESS_FN inline
#endif

namespace sluice::stateless {

// The bits of a float / double as the value (memcpy on the host, the
// reinterpreting intrinsics on the device).
SLUICE_STATELESS_FN float FloatFromBits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
#endif
}
SLUICE_STATELESS_FN double DoubleFromBits(uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
#endif
}

struct KeyCounter {
  philox::Key key;
  philox::Counter counter;
};

// TensorFlow's GenerateKey: the seed's words (an int32 seed sign-extended)
// as a counter through one Philox call under a fixed key; its first two
// words are the key, its last two the counter's high half.
SLUICE_STATELESS_FN KeyCounter FromSeed(uint64_t seed0, uint64_t seed1) {
  const philox::Counter c{{static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                           static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)}};
  const philox::Counter mix = philox::Philox4x32_10(c, philox::Key{{0x3ec8f720u, 0x02461e29u}});
  return KeyCounter{philox::Key{{mix.v[0], mix.v[1]}}, philox::Counter{{0u, 0u, mix.v[2], mix.v[3]}}};
}

// The key and counter as the V2 ops pass them: a uint64 key, and the
// counter as two uint64s, low first.
SLUICE_STATELESS_FN KeyCounter FromWords(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
  return KeyCounter{philox::KeyFromU64(key),
                    philox::Counter{{static_cast<uint32_t>(counter_lo),
                                     static_cast<uint32_t>(counter_lo >> 32),
                                     static_cast<uint32_t>(counter_hi),
                                     static_cast<uint32_t>(counter_hi >> 32)}}};
}

// The 128-bit counter advanced by n (PhiloxRandom::Skip).
SLUICE_STATELESS_FN philox::Counter Advance(philox::Counter c, uint64_t n) {
  const uint32_t lo = static_cast<uint32_t>(n);
  uint32_t hi = static_cast<uint32_t>(n >> 32);
  c.v[0] += lo;
  if (c.v[0] < lo) ++hi;
  c.v[1] += hi;
  if (c.v[1] < hi && ++c.v[2] == 0) ++c.v[3];
  return c;
}

// The four words of Philox at the counter advanced by `call`: group `call`
// of a fixed-size draw, and the integer draws' raw bits.
SLUICE_STATELESS_FN philox::Counter Words(const KeyCounter& kc, uint64_t call) {
  return philox::Philox4x32_10(Advance(kc.counter, call), kc.key);
}

// [0, 1) from the low 23 bits: 1.m - 1, as TensorFlow's Uint32ToFloat.
SLUICE_STATELESS_FN float ToFloat(uint32_t x) {
  return FloatFromBits((127u << 23) | (x & 0x7fffffu)) - 1.0f;
}

// [0, 1) from 52 bits, the high word's low 20 first (Uint64ToDouble).
SLUICE_STATELESS_FN double ToDouble(uint32_t x0, uint32_t x1) {
  return DoubleFromBits((uint64_t{1023} << 52) | (uint64_t{x0 & 0xfffffu} << 32) | x1) - 1.0;
}

// Half and bfloat16 take the low 10 and 7 bits (exact in the narrow type).
SLUICE_STATELESS_FN float ToHalfValue(uint32_t x) { return static_cast<float>(x & 0x3ffu) / 1024.0f; }
SLUICE_STATELESS_FN float ToBfloat16Value(uint32_t x) { return static_cast<float>(x & 0x7fu) / 128.0f; }

// Box-Muller as TensorFlow's BoxMullerFloat / BoxMullerDouble: the first
// uniform (at least 1e-7) gives the radius, the second the angle; sine
// first.
SLUICE_STATELESS_FN void BoxMuller(float u1, float u2, float* f0, float* f1) {
  const float r = std::sqrt(-2.0f * std::log(u1 < 1.0e-7f ? 1.0e-7f : u1));
  const float a = static_cast<float>(2.0 * M_PI * u2);  // in double, rounded once, as TF
  *f0 = std::sin(a) * r;
  *f1 = std::cos(a) * r;
}
SLUICE_STATELESS_FN void BoxMuller(double u1, double u2, double* f0, double* f1) {
  const double r = std::sqrt(-2.0 * std::log(u1 < 1.0e-7 ? 1.0e-7 : u1));
  const double a = 2.0 * M_PI * u2;
  *f0 = std::sin(a) * r;
  *f1 = std::cos(a) * r;
}

// Group g of a draw (TensorFlow's UniformDistribution and
// NormalDistribution over Philox): the words of Philox at the counter
// advanced by g, as 4 floats or 2 doubles. A float uniform keeps
// `mantissa_bits` random bits (23 for float, 10 for half, 7 for bfloat16);
// narrow normals are float normals the caller rounds.
SLUICE_STATELESS_FN void FloatGroup(const KeyCounter& kc, int64_t g, bool normal,
                                    int mantissa_bits, float v[4]) {
  const philox::Counter w = Words(kc, g);
  if (normal) {
    BoxMuller(ToFloat(w.v[0]), ToFloat(w.v[1]), &v[0], &v[1]);
    BoxMuller(ToFloat(w.v[2]), ToFloat(w.v[3]), &v[2], &v[3]);
    return;
  }
  for (int j = 0; j < 4; ++j) {
    v[j] = mantissa_bits == 10  ? ToHalfValue(w.v[j])
           : mantissa_bits == 7 ? ToBfloat16Value(w.v[j])
                                : ToFloat(w.v[j]);
  }
}
SLUICE_STATELESS_FN void DoubleGroup(const KeyCounter& kc, int64_t g, bool normal, double v[2]) {
  const philox::Counter w = Words(kc, g);
  v[0] = ToDouble(w.v[0], w.v[1]);
  v[1] = ToDouble(w.v[2], w.v[3]);
  if (normal) BoxMuller(v[0], v[1], &v[0], &v[1]);
}

// Integer group g (TensorFlow's UniformDistribution and
// UniformFullIntDistribution over Philox): 4 values of 32 bits, or 2 of 64
// bits (low word first), each the bits modulo `range` (0: all bits). The
// caller adds minval in unsigned arithmetic, as TensorFlow's SignedAdd.
SLUICE_STATELESS_FN void Int32Group(const KeyCounter& kc, int64_t g, uint32_t range,
                                    uint32_t v[4]) {
  const philox::Counter w = Words(kc, g);
  for (int j = 0; j < 4; ++j) v[j] = range == 0 ? w.v[j] : w.v[j] % range;
}
SLUICE_STATELESS_FN void Int64Group(const KeyCounter& kc, int64_t g, uint64_t range,
                                    uint64_t v[2]) {
  const philox::Counter w = Words(kc, g);
  for (int j = 0; j < 2; ++j) {
    const uint64_t bits = w.v[2 * j] | (uint64_t{w.v[2 * j + 1]} << 32);
    v[j] = range == 0 ? bits : bits % range;
  }
}

// TensorFlow's truncated normal (TruncatedNormalDistribution over a
// SingleSampleAdapter): the words of Philox taken one at a time, pairs (four
// words for a double) through Box-Muller, values with |x| < 2 kept in order.
// Group g starts at the counter advanced by 256 Philox calls per group (128
// for doubles): the room TensorFlow reserves for each group's rejections,
// so groups are independent and may be made in parallel.
class WordStream {
 public:
  SLUICE_STATELESS_FN WordStream(const KeyCounter& kc, uint64_t first_call)
      : kc_(kc), call_(first_call), used_(4) {}
  SLUICE_STATELESS_FN uint32_t Next() {
    if (used_ == 4) {
      words_ = Words(kc_, call_++);
      used_ = 0;
    }
    return words_.v[used_++];
  }

 private:
  KeyCounter kc_;
  uint64_t call_;
  philox::Counter words_{};
  int used_;
};

inline constexpr uint64_t kTruncatedCallsPerFloatGroup = 256;
inline constexpr uint64_t kTruncatedCallsPerDoubleGroup = 128;

SLUICE_STATELESS_FN void TruncatedFloatGroup(const KeyCounter& kc, int64_t g, float v[4]) {
  WordStream words(kc, static_cast<uint64_t>(g) * kTruncatedCallsPerFloatGroup);
  int kept = 0;
  while (true) {
    const uint32_t x0 = words.Next();
    const uint32_t x1 = words.Next();
    float f[2];
    BoxMuller(ToFloat(x0), ToFloat(x1), &f[0], &f[1]);
    for (float x : f) {
      if (std::fabs(x) < 2.0f) {
        v[kept++] = x;
        if (kept == 4) return;
      }
    }
  }
}
SLUICE_STATELESS_FN void TruncatedDoubleGroup(const KeyCounter& kc, int64_t g, double v[2]) {
  WordStream words(kc, static_cast<uint64_t>(g) * kTruncatedCallsPerDoubleGroup);
  int kept = 0;
  while (true) {
    const uint32_t x0 = words.Next(), x1 = words.Next(), x2 = words.Next(), x3 = words.Next();
    double d[2];
    BoxMuller(ToDouble(x0, x1), ToDouble(x2, x3), &d[0], &d[1]);
    for (double x : d) {
      if (std::fabs(x) < 2.0) {
        v[kept++] = x;
        if (kept == 2) return;
      }
    }
  }
}

}  // namespace sluice::stateless

#undef SLUICE_STATELESS_FN

#endif  // SLUICE_OPS_GPU_STATELESS_PHILOX_H_
