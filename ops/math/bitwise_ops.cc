// Definitions, shapes, wrappers and CPU kernels of the bitwise ops.
#pragma GCC optimize("O3")  // the loops below vectorize (see math_kernels.cc)

#include "ops/math/bitwise_ops.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/math/internal/cpu_cwise_loops.h"

namespace sluice {
namespace {

constexpr char kIntegerTypes[] =
    "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}";

absl::Status Broadcast(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, out);
  return absl::OkStatus();
}

template <typename T> struct AndF { static T Apply(T a, T b) { return a & b; } };
template <typename T> struct OrF { static T Apply(T a, T b) { return a | b; } };
template <typename T> struct XorF { static T Apply(T a, T b) { return a ^ b; } };
template <typename T> struct InvertF { static T Apply(T x) { return static_cast<T>(~x); } };

template <typename T>
T ClampedShift(T y) {
  return std::clamp<T>(y, T(0), static_cast<T>(sizeof(T) * 8 - 1));
}
template <typename T> struct LeftShiftF {
  static T Apply(T x, T y) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) << ClampedShift(y)));
  }
};
template <typename T> struct RightShiftF {
  static T Apply(T x, T y) { return static_cast<T>(x >> ClampedShift(y)); }
};

}  // namespace

absl::Status RegisterBitwiseOps(OpRegistry* ops) {
  for (const char* name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift"}) {
    OpDefBuilder b(name);
    b.Input("x: T").Input("y: T").Output("z: T").Attr(kIntegerTypes);
    if (name[0] == 'B') b.SetIsCommutative();
    RETURN_IF_ERROR(ops->Register(b.SetShapeFn(Broadcast)));
    RETURN_IF_ERROR(ops->SetNoGradient(name));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Invert")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Attr(kIntegerTypes)
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  return ops->SetNoGradient("Invert");
}

void RegisterBitwiseKernels(KernelRegistry* k) {
  internal::RegisterCpuBinary<AndF, int8_t, uint8_t, int32_t, int64_t>(k, "BitwiseAnd");
  internal::RegisterCpuBinary<OrF, int8_t, uint8_t, int32_t, int64_t>(k, "BitwiseOr");
  internal::RegisterCpuBinary<XorF, int8_t, uint8_t, int32_t, int64_t>(k, "BitwiseXor");
  internal::RegisterCpuBinary<LeftShiftF, int8_t, uint8_t, int32_t, int64_t>(k, "LeftShift");
  internal::RegisterCpuBinary<RightShiftF, int8_t, uint8_t, int32_t, int64_t>(k, "RightShift");
  internal::RegisterCpuUnary<InvertF, int8_t, uint8_t, int32_t, int64_t>(k, "Invert");
}

namespace ops {

#define SLUICE_BITWISE_WRAPPER_(NAME)                                          \
  Output NAME(const Scope& s, Input x, Input y, std::source_location loc) { \
    return s.Op(#NAME, loc).Input(x).Input(y).Finalize1();                   \
  }
SLUICE_BITWISE_WRAPPER_(BitwiseAnd)
SLUICE_BITWISE_WRAPPER_(BitwiseOr)
SLUICE_BITWISE_WRAPPER_(BitwiseXor)
SLUICE_BITWISE_WRAPPER_(LeftShift)
SLUICE_BITWISE_WRAPPER_(RightShift)
#undef SLUICE_BITWISE_WRAPPER_

Output Invert(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Invert", loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
