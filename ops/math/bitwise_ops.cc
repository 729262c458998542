// Definitions, shapes, wrappers and CPU kernels of the bitwise ops.
#pragma GCC optimize("O3")  // the loops below vectorize (see math_kernels.cc)

#include "ops/math/bitwise_ops.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
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

constexpr char kBitcastTypes[] =
    "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16}";

// Bitcast's output shape: the same when the element sizes match; one more
// dimension (in / out) from a wider type; the last dimension (out / in)
// dropped into a wider type. Rank -1 in `in` means unknown.
absl::StatusOr<TensorShape> BitcastShape(const TensorShape& in, int in_size, int out_size) {
  if (in.unknown_rank()) return TensorShape::Unknown();
  std::vector<int64_t> dims = in.dims();
  if (in_size > out_size) {
    dims.push_back(in_size / out_size);
  } else if (in_size < out_size) {
    if (dims.empty() || (dims.back() >= 0 && dims.back() != out_size / in_size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Cannot bitcast from a shape of ", in.DebugString(), " with ", in_size,
          "-byte elements to ", out_size, "-byte elements: the last dimension must be ",
          out_size / in_size));
    }
    dims.pop_back();
  }
  return TensorShape(dims);
}

// PopulationCount: the set bits of each element, as uint8.
template <typename T>
class PopulationCountOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    using U = std::make_unsigned_t<T>;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      y->data<uint8_t>()[i] = static_cast<uint8_t>(__builtin_popcountll(static_cast<U>(x.data<T>()[i])));
    }
    return absl::OkStatus();
  }
};

// Bitcast: the input's bytes, reinterpreted (copied into the output).
class BitcastOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(type_, ctx.GetAttr<DataType>("type"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    ASSIGN_OR_RETURN(TensorShape shape,
                     BitcastShape(in.shape(), DataTypeSize(in.dtype()), DataTypeSize(type_)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (in.TotalBytes() > 0) std::memcpy(out->raw_data(), in.raw_data(), in.TotalBytes());
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  DataType type_ = DT_INVALID;
};

}  // namespace

absl::Status RegisterBitwiseOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("Bitcast")
          .Input("input: T")
          .Output("output: type")
          .Attr(absl::StrCat("T: ", kBitcastTypes))
          .Attr(absl::StrCat("type: ", kBitcastTypes))
          .SetShapeFn([](InferenceContext* c) -> absl::Status {
            ASSIGN_OR_RETURN(DataType in, c->GetAttr<DataType>("T"));
            ASSIGN_OR_RETURN(DataType out, c->GetAttr<DataType>("type"));
            ASSIGN_OR_RETURN(TensorShape shape,
                             BitcastShape(c->input(0), DataTypeSize(in), DataTypeSize(out)));
            c->set_output(0, shape);
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->SetNoGradient("Bitcast"));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("PopulationCount")
          .Input("x: T")
          .Output("y: uint8")
          .Attr("T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}")
          .SetShapeFn([](InferenceContext* c) {
            c->set_output(0, c->input(0));
            return absl::OkStatus();
          })));
  RETURN_IF_ERROR(ops->SetNoGradient("PopulationCount"));
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
  k->Register<BitcastOp>(KernelDef("Bitcast", kDeviceTypeCpu));
  auto popcount = [](DataType t) {
    return KernelDef("PopulationCount", kDeviceTypeCpu).TypeConstraint("T", t);
  };
  k->Register<PopulationCountOp<int8_t>>(popcount(DT_INT8));
  k->Register<PopulationCountOp<int16_t>>(popcount(DT_INT16));
  k->Register<PopulationCountOp<int32_t>>(popcount(DT_INT32));
  k->Register<PopulationCountOp<int64_t>>(popcount(DT_INT64));
  k->Register<PopulationCountOp<uint8_t>>(popcount(DT_UINT8));
  k->Register<PopulationCountOp<uint16_t>>(popcount(DT_UINT16));
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

Output Bitcast(const Scope& s, Input input, DataType type, std::source_location loc) {
  return s.Op("Bitcast", loc).Input(input).Attr("type", type).Finalize1();
}

Output Invert(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Invert", loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
