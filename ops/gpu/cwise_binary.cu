// Binary arithmetic and the *Grad helpers on the GPU (launchers:
// cwise.cu.h; the comparisons are in cwise_compare.cu). The functors
// mirror ops/math/math_kernels.cc, evaluated in the compute type (float for half
// and bfloat16).
#include <cstdint>
#include <type_traits>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_binary_impl.cu.h"
#include "ops/gpu/cwise_impl.cu.h"

namespace sluice::gpu {
namespace cwise_impl {
namespace {

struct AddF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a + b;
  }
};
struct SubF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a - b;
  }
};
struct MulF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a * b;
  }
};
struct DivF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a / b;
  }
};
struct FloorDivF {  // floating point only
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return Floor(a / b);
  }
};
// NaN when either operand is NaN (TensorFlow's tf.maximum; the CPU's too).
struct MaxF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a < b || b != b ? b : a;
  }
};
struct MinF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return b < a || b != b ? b : a;
  }
};
struct PowF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return Pow(a, b);
    } else {
      if (b < 0) return a == 1 ? C(1) : (a == -1 ? ((b & 1) ? C(-1) : C(1)) : C(0));
      using U = std::make_unsigned_t<C>;  // wraps on overflow, like the CPU loop
      U base = static_cast<U>(a);
      U result = 1;
      for (; b > 0; b >>= 1, base *= base) {
        if (b & 1) result *= base;
      }
      return static_cast<C>(result);
    }
  }
};

struct SquaredDifferenceF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    const C d = a - b;
    return d * d;
  }
};
struct DivNoNanF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return b == C(0) ? C(0) : a / b;
  }
};
// The remainder with the divisor's sign. Integers: a zero divisor gives 0
// (the CPU kernel refuses it; a device kernel cannot).
struct FloorModF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0 || b == C(-1)) return C(0);  // x mod -1 is 0 (and INT64_MIN % -1 overflows)
      const C r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      const C r = Fmod(a, b);
      return (r != C(0) && ((r < C(0)) != (b < C(0)))) ? r + b : r;
    }
  }
};

struct Atan2F {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return Atan2(a, b);
  }
};
struct XlogyF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a * Log(b);
  }
};
struct XdivyF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a / b;
  }
};
struct Xlog1pyF {
  template <typename C>
  __device__ C operator()(C a, C b) const {
    return a == C(0) ? C(0) : a * Log1p(b);
  }
};

// Gradient helpers: (y, dy).
struct TanhGradF {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * (C(1) - y * y);
  }
};
struct SigmoidGradF {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * y * (C(1) - y);
  }
};
struct SqrtGradF {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * C(0.5) / y;
  }
};
struct RsqrtGradF {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return dy * C(-0.5) * y * y * y;
  }
};
struct ReciprocalGradF {
  template <typename C>
  __device__ C operator()(C y, C dy) const {
    return -dy * y * y;
  }
};

}  // namespace
}  // namespace cwise_impl

cudaError_t LaunchBinary(BinaryFn fn, CwiseType type, const CwiseLayout<2>& layout, const void* x,
                         const void* y, void* out, cudaStream_t stream) {
  using namespace cwise_impl;  // NOLINT: the functors and dispatchers
  switch (fn) {
    case BinaryFn::kAdd:
      return DispatchFloatInt64(type, Same<AddF>{layout, x, y, out, stream});
    case BinaryFn::kSub:
      return DispatchFloatInt64(type, Same<SubF>{layout, x, y, out, stream});
    case BinaryFn::kMul:
      return DispatchFloatInt64(type, Same<MulF>{layout, x, y, out, stream});
    case BinaryFn::kRealDiv:
      return DispatchFloat(type, Same<DivF>{layout, x, y, out, stream});
    case BinaryFn::kFloorDiv:
      return DispatchFloat(type, Same<FloorDivF>{layout, x, y, out, stream});
    case BinaryFn::kMaximum:
      return DispatchFloatInt64(type, Same<MaxF>{layout, x, y, out, stream});
    case BinaryFn::kMinimum:
      return DispatchFloatInt64(type, Same<MinF>{layout, x, y, out, stream});
    case BinaryFn::kPow:
      return DispatchFloatInt64(type, Same<PowF>{layout, x, y, out, stream});
    case BinaryFn::kSquaredDifference:
      return DispatchFloatInt64(type, Same<SquaredDifferenceF>{layout, x, y, out, stream});
    case BinaryFn::kDivNoNan:
      return DispatchFloat(type, Same<DivNoNanF>{layout, x, y, out, stream});
    case BinaryFn::kFloorMod:
      return DispatchFloatInt64(type, Same<FloorModF>{layout, x, y, out, stream});
    case BinaryFn::kAtan2:
      return DispatchFloat(type, Same<Atan2F>{layout, x, y, out, stream});
    case BinaryFn::kXlogy:
      return DispatchFloat(type, Same<XlogyF>{layout, x, y, out, stream});
    case BinaryFn::kXdivy:
      return DispatchFloat(type, Same<XdivyF>{layout, x, y, out, stream});
    case BinaryFn::kXlog1py:
      return DispatchFloat(type, Same<Xlog1pyF>{layout, x, y, out, stream});
    case BinaryFn::kTanhGrad:
      return DispatchFloat(type, Same<TanhGradF>{layout, x, y, out, stream});
    case BinaryFn::kSigmoidGrad:
      return DispatchFloat(type, Same<SigmoidGradF>{layout, x, y, out, stream});
    case BinaryFn::kSqrtGrad:
      return DispatchFloat(type, Same<SqrtGradF>{layout, x, y, out, stream});
    case BinaryFn::kRsqrtGrad:
      return DispatchFloat(type, Same<RsqrtGradF>{layout, x, y, out, stream});
    case BinaryFn::kReciprocalGrad:
      return DispatchFloat(type, Same<ReciprocalGradF>{layout, x, y, out, stream});
    case BinaryFn::kEqual:
    case BinaryFn::kNotEqual:
    case BinaryFn::kGreater:
    case BinaryFn::kGreaterEqual:
    case BinaryFn::kLess:
    case BinaryFn::kLessEqual:
      return LaunchCompare(fn, type, layout, x, y, out, stream);
  }
  return cudaErrorNotSupported;
}

}  // namespace sluice::gpu
