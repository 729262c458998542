// The comparisons of LaunchBinary (cwise.cu.h): bool outputs, operands
// compared in their compute type (half and bfloat16 widen to float exactly).
#include <cstdint>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_binary_impl.cu.h"
#include "ops/gpu/cwise_impl.cu.h"

namespace sluice::gpu::cwise_impl {
namespace {

struct EqualF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a == b;
  }
};
struct NotEqualF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a != b;
  }
};
struct GreaterF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a > b;
  }
};
struct GreaterEqualF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a >= b;
  }
};
struct LessF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a < b;
  }
};
struct LessEqualF {
  template <typename C>
  __device__ bool operator()(C a, C b) const {
    return a <= b;
  }
};

template <typename F>
cudaError_t Equality(CwiseType type, const ToBool<F>& body) {
  return DispatchAmong<float, __half, __nv_bfloat16, double, int64_t, bool>(type, body);
}

}  // namespace

cudaError_t LaunchCompare(BinaryFn fn, CwiseType type, const CwiseLayout<2>& layout, const void* x,
                          const void* y, void* out, cudaStream_t stream) {
  switch (fn) {
    case BinaryFn::kEqual:
      return Equality(type, ToBool<EqualF>{layout, x, y, out, stream});
    case BinaryFn::kNotEqual:
      return Equality(type, ToBool<NotEqualF>{layout, x, y, out, stream});
    case BinaryFn::kGreater:
      return DispatchFloatInt64(type, ToBool<GreaterF>{layout, x, y, out, stream});
    case BinaryFn::kGreaterEqual:
      return DispatchFloatInt64(type, ToBool<GreaterEqualF>{layout, x, y, out, stream});
    case BinaryFn::kLess:
      return DispatchFloatInt64(type, ToBool<LessF>{layout, x, y, out, stream});
    case BinaryFn::kLessEqual:
      return DispatchFloatInt64(type, ToBool<LessEqualF>{layout, x, y, out, stream});
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace sluice::gpu::cwise_impl
