// The values of a Philox draw from a key and counter, group by group, as
// TensorFlow's stateless and tf.random.Generator draws produce them (the
// GPU kernel runs the same groups: ops/gpu/stateless_philox.h). The
// stateless kernels (key and counter from a seed or given) and the stateful
// ones (from an RNG state variable) both fill through these.
//
//   internal::FillStateless(kc, RandomDistribution::kNormal, out->data<float>(), n);
//   internal::FillStatelessInts<int64_t>(kc, lo, range, out->data<int64_t>(), n);
//
// T: float, double, Half, BFloat16 (FillStateless); int32/64 and their
// unsigned forms (FillStatelessInts; range 0 means every value of T).
// Thread-safe: pure functions. Internal to ops/random.
#ifndef SLUICE_OPS_RANDOM_INTERNAL_STATELESS_FILL_H_
#define SLUICE_OPS_RANDOM_INTERNAL_STATELESS_FILL_H_

#include <cstdint>
#include <type_traits>

#include "graph/types.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/random_kernels.h"

namespace sluice {
namespace internal {

template <typename T>
inline void StoreDrawn(T* out, int64_t i, float v) {
  if constexpr (std::is_same_v<T, float>) {
    out[i] = v;
  } else {
    out[i] = T::FromFloat(v);
  }
}

// The draw's values, group by group (stateless_philox.h: the GPU kernel
// runs the same groups).
template <typename T>
void FillStateless(const stateless::KeyCounter& kc, RandomDistribution dist, T* out, int64_t n) {
  const bool normal = dist == RandomDistribution::kNormal;
  const bool truncated = dist == RandomDistribution::kTruncatedNormal;
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t g = 0; 2 * g < n; ++g) {
      double v[2];
      if (truncated) {
        stateless::TruncatedDoubleGroup(kc, g, v);
      } else {
        stateless::DoubleGroup(kc, g, normal, v);
      }
      for (int j = 0; j < 2 && 2 * g + j < n; ++j) out[2 * g + j] = v[j];
    }
  } else {
    constexpr int kBits = std::is_same_v<T, Half> ? 10 : std::is_same_v<T, BFloat16> ? 7 : 23;
    for (int64_t g = 0; 4 * g < n; ++g) {
      float v[4];
      if (truncated) {
        stateless::TruncatedFloatGroup(kc, g, v);
      } else {
        stateless::FloatGroup(kc, g, normal, kBits, v);
      }
      for (int j = 0; j < 4 && 4 * g + j < n; ++j) StoreDrawn(out, 4 * g + j, v[j]);
    }
  }
}

// Integers: minval plus the bits modulo the range (0: all bits, the full
// range of T), added in unsigned arithmetic as TensorFlow's SignedAdd.
template <typename T>
void FillStatelessInts(const stateless::KeyCounter& kc, T lo, uint64_t range, T* out, int64_t n) {
  using U = std::make_unsigned_t<T>;
  if constexpr (sizeof(T) == 4) {
    for (int64_t g = 0; 4 * g < n; ++g) {
      uint32_t v[4];
      stateless::Int32Group(kc, g, static_cast<uint32_t>(range), v);
      for (int j = 0; j < 4 && 4 * g + j < n; ++j) out[4 * g + j] = static_cast<T>(static_cast<U>(lo) + v[j]);
    }
  } else {
    for (int64_t g = 0; 2 * g < n; ++g) {
      uint64_t v[2];
      stateless::Int64Group(kc, g, range, v);
      for (int j = 0; j < 2 && 2 * g + j < n; ++j) out[2 * g + j] = static_cast<T>(static_cast<U>(lo) + v[j]);
    }
  }
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_INTERNAL_STATELESS_FILL_H_
