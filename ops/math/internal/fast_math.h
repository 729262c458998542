// Float exp written with arithmetic, selects and bit operations only, so that
// loops over it vectorize (libm's expf is scalar). One template serves plain
// floats and GCC vector types:
//
//   float y = internal::ExpApprox<float, int32_t>(x);
//   Vec<float> v = internal::ExpApprox<Vec<float>, VecInt32>(xs);  // 8 lanes
//
// Method: e^x = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2)/2; e^r by
// a degree-6 minimax polynomial; 2^n built in the exponent bits as two normal
// factors, so results down to the subnormal range are right. Relative error
// below 3e-7 for normal results; +inf above 88.72, 0 below -104, NaN stays NaN.
// Thread-safe: pure functions.
#ifndef SLUICE_OPS_MATH_INTERNAL_FAST_MATH_H_
#define SLUICE_OPS_MATH_INTERNAL_FAST_MATH_H_

#include <bit>
#include <cstdint>
#include <limits>

namespace sluice {
namespace internal {

// V: float or a GCC vector of floats; I: int32_t or the matching int vector.
template <typename V, typename I>
inline V ExpApprox(V x) {
  const V lo = V{} + -104.0f, hi = V{} + 88.7228f;
  V c = x < lo ? lo : x;
  c = c > hi ? hi : c;
  // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
  const V shifted = c * 1.44269504088896341f + 12582912.0f;
  const V n = shifted - 12582912.0f;
  V r = c - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // n runs from -150 to 128: split 2^n into two normal factors.
  const I ni = std::bit_cast<I>(shifted) - 0x4B400000;
  const I n1 = ni >> 1;
  const I n2 = ni - n1;
  V result = p * std::bit_cast<V>((n1 + 127) << 23) * std::bit_cast<V>((n2 + 127) << 23);
  result = x > hi ? V{} + std::numeric_limits<float>::infinity() : result;
  return x < lo ? V{} : result;
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_FAST_MATH_H_
