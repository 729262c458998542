#include "ops/math/scan_ops.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/array_shape_fns.h"
#include "ops/internal/index_tensors.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

template <typename T> struct SumScan {
  static T Identity() { return T(0); }
  static T Combine(T a, T b) { return a + b; }
};
template <typename T> struct ProdScan {
  static T Identity() { return T(1); }
  static T Combine(T a, T b) { return a * b; }
};

template <typename T, typename Op>
class ScanOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(exclusive_, ctx.GetAttr<bool>("exclusive"));
    ASSIGN_OR_RETURN(reverse_, ctx.GetAttr<bool>("reverse"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& axis_t = ctx->input(1);
    if (axis_t.dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": axis must be a scalar, got ",
                                                     axis_t.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(int64_t axis, internal::ReadScalar(axis_t, "axis"));
    const int rank = x.dims();
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": axis ", axis,
                                                     " is out of range for shape ",
                                                     x.shape().DebugString()));
    }
    if (axis < 0) axis += rank;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.dim_size(i);
    for (int i = static_cast<int>(axis) + 1; i < rank; ++i) inner *= x.dim_size(i);
    const int64_t len = x.dim_size(static_cast<int>(axis));
    const T* in = x.data<T>();
    T* o = out->data<T>();
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        T acc = Op::Identity();
        for (int64_t k = 0; k < len; ++k) {
          const int64_t j = reverse_ ? len - 1 - k : k;
          const int64_t at = (a * len + j) * inner + b;
          if (exclusive_) {
            o[at] = acc;
            acc = Op::Combine(acc, in[at]);
          } else {
            acc = Op::Combine(acc, in[at]);
            o[at] = acc;
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

template <template <typename> class Op, typename... Ts>
void RegisterScan(KernelRegistry* k, const char* name) {
  (k->Register<ScanOp<Ts, Op<Ts>>>(
       KernelDef(name, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<Ts>::value)),
   ...);
}

}  // namespace

absl::Status RegisterScanOps(OpRegistry* ops) {
  for (const char* name : {"Cumsum", "Cumprod"}) {
    RETURN_IF_ERROR(ops->Register(
        OpDefBuilder(name)
            .Input("x: T")
            .Input("axis: Tidx")
            .Output("out: T")
            .Attr("exclusive: bool = false")
            .Attr("reverse: bool = false")
            .Attr("T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, "
                  "uint16, complex128, half, uint32, uint64}")
            .Attr("Tidx: {int32, int64} = int32")
            .SetShapeFn(internal::UnchangedShape)));
  }
  return absl::OkStatus();
}

void RegisterScanKernels(KernelRegistry* kernels) {
  RegisterScan<SumScan, float, double, int32_t, int64_t>(kernels, "Cumsum");
  RegisterScan<ProdScan, float, double, int32_t, int64_t>(kernels, "Cumprod");
}

namespace ops {

Output Cumsum(const Scope& scope, Input x, Input axis, const ScanAttrs& attrs,
              std::source_location loc) {
  return scope.Op("Cumsum", loc)
      .Input(x)
      .Input(axis)
      .Attr("exclusive", attrs.exclusive)
      .Attr("reverse", attrs.reverse)
      .Finalize1();
}

Output Cumprod(const Scope& scope, Input x, Input axis, const ScanAttrs& attrs,
               std::source_location loc) {
  return scope.Op("Cumprod", loc)
      .Input(x)
      .Input(axis)
      .Attr("exclusive", attrs.exclusive)
      .Attr("reverse", attrs.reverse)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
