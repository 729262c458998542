// ApproximateEqual, Cross and NextAfter: definitions, CPU kernels,
// gradients and wrappers (ops/math/compat_math_ops.h).
#include "ops/math/compat_math_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/broadcast_grad.h"
#include "ops/math/internal/cpu_cwise_loops.h"
#include "ops/math/math_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

absl::Status CheckSameShape(OpKernelContext* ctx, const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(),
                                                   ": the inputs must have the same shape, got ",
                                                   a.shape().DebugString(), " and ",
                                                   b.shape().DebugString()));
  }
  return absl::OkStatus();
}

template <typename T>
class ApproximateEqualOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(tolerance_, ctx.GetAttr<float>("tolerance"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    RETURN_IF_ERROR(CheckSameShape(ctx, x, y));
    ASSIGN_OR_RETURN(Tensor * z, ctx->allocate_output(0, x.shape()));
    const T tol = static_cast<T>(tolerance_);
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const T d = x.data<T>()[i] - y.data<T>()[i];
      z->data<bool>()[i] = (d < 0 ? -d : d) < tol;
    }
    return absl::OkStatus();
  }

 private:
  float tolerance_ = 1e-5f;
};

template <typename T>
class CrossOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    RETURN_IF_ERROR(CheckSameShape(ctx, a, b));
    if (a.dims() < 1 || a.dim_size(a.dims() - 1) != 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Cross: the last dimension must be 3, got shape ", a.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, a.shape()));
    for (int64_t v = 0; v < a.NumElements() / 3; ++v) {
      const T* p = a.data<T>() + 3 * v;
      const T* q = b.data<T>() + 3 * v;
      T* r = out->data<T>() + 3 * v;
      r[0] = p[1] * q[2] - p[2] * q[1];
      r[1] = p[2] * q[0] - p[0] * q[2];
      r[2] = p[0] * q[1] - p[1] * q[0];
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<std::vector<Output>> CrossGrad(const Scope& s, const Node& node,
                                              absl::Span<const Output> dy) {
  std::vector<Output> grads(2);
  if (!dy[0].valid()) return grads;
  const Output a = internal::InputOf(node, 0), b = internal::InputOf(node, 1);
  grads[0] = s.Op("Cross").Input(b).Input(dy[0]).Finalize1();
  grads[1] = s.Op("Cross").Input(dy[0]).Input(a).Finalize1();
  RETURN_IF_ERROR(s.status());
  return grads;
}

template <typename T>
void RegisterFor(KernelRegistry* k) {
  const DataType t = DataTypeToEnum<T>::value;
  k->Register<ApproximateEqualOp<T>>(KernelDef("ApproximateEqual", kDeviceTypeCpu).TypeConstraint("T", t));
  k->Register<CrossOp<T>>(KernelDef("Cross", kDeviceTypeCpu).TypeConstraint("T", t));
}

constexpr char kRealTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}";

// The next representable value after x1 toward x2 (std::nextafter).
template <typename T> struct NextAfterF {
  static T Apply(T x1, T x2) { return std::nextafter(x1, x2); }
};

// TensorFlow's: the gradient passes to x1 (summed to its shape), none to x2.
absl::StatusOr<std::vector<Output>> NextAfterGrad(const Scope& s, const Node& node,
                                                  absl::Span<const Output> g) {
  const Output x1 = internal::InputOf(node, 0);
  const Output x2 = internal::InputOf(node, 1);
  std::vector<Output> out = {internal::ReduceToOperand(s, g[0], x1, {x2}), ops::ZerosLike(s, x2)};
  RETURN_IF_ERROR(s.status());
  return out;
}

}  // namespace

absl::Status RegisterCompatMathOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NextAfter")
                                    .Input("x1: T")
                                    .Input("x2: T")
                                    .Output("output: T")
                                    .Attr("T: {float64, float32} = DT_FLOAT")
                                    .SetShapeFn([](InferenceContext* c) -> absl::Status {
                                      ASSIGN_OR_RETURN(TensorShape out,
                                                       BroadcastShapes(c->input(0), c->input(1)));
                                      c->set_output(0, out);
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ApproximateEqual")
                                    .Input("x: T")
                                    .Input("y: T")
                                    .Output("z: bool")
                                    .Attr(kRealTypes)
                                    .Attr("tolerance: float = 1e-05")
                                    .SetIsCommutative()
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Cross")
                                    .Input("a: T")
                                    .Input("b: T")
                                    .Output("product: T")
                                    .Attr(kRealTypes)
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  return ops->SetNoGradient("ApproximateEqual");
}

absl::Status RegisterCompatMathGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("NextAfter", NextAfterGrad));
  return ops->SetGradient("Cross", CrossGrad);
}

void RegisterCompatMathKernels(KernelRegistry* k) {
  RegisterFor<float>(k);
  RegisterFor<double>(k);
  RegisterFor<int32_t>(k);
  RegisterFor<int64_t>(k);
  internal::RegisterCpuBinary<NextAfterF, float, double>(k, "NextAfter");
}

namespace ops {

Output ApproximateEqual(const Scope& s, Input x, Input y, float tolerance,
                        std::source_location loc) {
  return s.Op("ApproximateEqual", loc).Input(x).Input(y).Attr("tolerance", tolerance).Finalize1();
}

Output Cross(const Scope& s, Input a, Input b, std::source_location loc) {
  return s.Op("Cross", loc).Input(a).Input(b).Finalize1();
}

Output NextAfter(const Scope& s, Input x1, Input x2, std::source_location loc) {
  return s.Op("NextAfter", loc).Input(x1).Input(x2).Finalize1();
}

}  // namespace ops
}  // namespace sluice
