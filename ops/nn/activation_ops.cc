#include "ops/nn/activation_ops.h"

#include <cmath>
#include <type_traits>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";

template <typename T> struct Relu6F {
  T operator()(T x) const { return x < T(0) ? T(0) : (x > T(6) ? T(6) : x); }
};
template <typename T> struct EluF {
  T operator()(T x) const { return x > T(0) ? x : std::expm1(x); }
};
template <typename T> struct SeluF {
  T operator()(T x) const {
    return x > T(0) ? T(kSeluScale) * x : T(kSeluScale * kSeluAlpha) * std::expm1(x);
  }
};
template <typename T> struct LeakyReluF {
  T alpha;
  T operator()(T x) const { return x > T(0) ? x : alpha * x; }
};

// An element-wise activation; F is built from the node (LeakyRelu's alpha).
template <typename T, typename F>
class ActivationOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if constexpr (std::is_same_v<F, LeakyReluF<T>>) {
      ASSIGN_OR_RETURN(float alpha, ctx.GetAttr<float>("alpha"));
      f_.alpha = static_cast<T>(alpha);
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = f_(in[i]);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  F f_{};
};

template <typename T>
class L2LossOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    double sum = 0;  // accumulated in double, as a float sum of squares loses digits
    for (T v : t.flat<T>()) sum += static_cast<double>(v) * v;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    out->scalar<T>() = static_cast<T>(sum / 2);
    return absl::OkStatus();
  }
};

template <template <typename> class F>
void RegisterActivation(KernelRegistry* k, const char* op) {
  k->Register<ActivationOp<float, F<float>>>(
      KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<ActivationOp<double, F<double>>>(
      KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

}  // namespace

absl::Status RegisterActivationOps(OpRegistry* ops) {
  for (const char* name : {"Relu6", "Elu", "Selu"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("features: T")
                                      .Output("activations: T")
                                      .Attr(kFloatTypes)
                                      .SetShapeFn(internal::UnchangedShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LeakyRelu")
                                    .Input("features: T")
                                    .Output("activations: T")
                                    .Attr("alpha: float = 0.2")
                                    .Attr("T: {bfloat16, half, float, double} = DT_FLOAT")
                                    .SetShapeFn(internal::UnchangedShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("L2Loss")
                                    .Input("t: T")
                                    .Output("output: T")
                                    .Attr(kFloatTypes)
                                    .SetShapeFn(internal::ScalarShape)));
  return absl::OkStatus();
}

void RegisterActivationKernels(KernelRegistry* k) {
  RegisterActivation<Relu6F>(k, "Relu6");
  RegisterActivation<EluF>(k, "Elu");
  RegisterActivation<SeluF>(k, "Selu");
  RegisterActivation<LeakyReluF>(k, "LeakyRelu");
  k->Register<L2LossOp<float>>(KernelDef("L2Loss", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<L2LossOp<double>>(KernelDef("L2Loss", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

namespace ops {

Output Relu6(const Scope& scope, Input features, std::source_location loc) {
  return scope.Op("Relu6", loc).Input(features).Finalize1();
}
Output Elu(const Scope& scope, Input features, std::source_location loc) {
  return scope.Op("Elu", loc).Input(features).Finalize1();
}
Output Selu(const Scope& scope, Input features, std::source_location loc) {
  return scope.Op("Selu", loc).Input(features).Finalize1();
}
Output LeakyRelu(const Scope& scope, Input features, const LeakyReluAttrs& attrs,
                 std::source_location loc) {
  return scope.Op("LeakyRelu", loc).Input(features).Attr("alpha", attrs.alpha).Finalize1();
}
Output L2Loss(const Scope& scope, Input t, std::source_location loc) {
  return scope.Op("L2Loss", loc).Input(t).Finalize1();
}

}  // namespace ops
}  // namespace sluice
