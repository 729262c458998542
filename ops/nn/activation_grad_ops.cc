#include "ops/nn/activation_grad_ops.h"

#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "ops/nn/activation_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";

// f(g, v): v is the features or the outputs, as each op's second input.
// Outside (0, 6) the gradient is g * 0, as TensorFlow's mask product: an
// infinite or NaN g gives NaN there, not 0.
template <typename T> struct Relu6GradF {
  T operator()(T g, T x) const { return x > T(0) && x < T(6) ? g : g * T(0); }
};
template <typename T> struct EluGradF {
  T operator()(T g, T y) const { return y > T(0) ? g : g * (y + T(1)); }
};
template <typename T> struct SeluGradF {
  T operator()(T g, T y) const {
    return y > T(0) ? g * T(kSeluScale) : g * (y + T(kSeluScale * kSeluAlpha));
  }
};
template <typename T> struct LeakyReluGradF {
  T alpha;
  T operator()(T g, T x) const { return x > T(0) ? g : g * alpha; }
};
template <typename T> struct SoftplusGradF {
  T operator()(T g, T x) const { return g / (T(1) + std::exp(-x)); }
};
template <typename T> struct SoftsignGradF {
  T operator()(T g, T x) const {
    const T d = T(1) + std::abs(x);
    return g / (d * d);
  }
};

template <typename T, typename F>
class ActivationGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if constexpr (std::is_same_v<F, LeakyReluGradF<T>>) {
      ASSIGN_OR_RETURN(float alpha, ctx.GetAttr<float>("alpha"));
      f_.alpha = static_cast<T>(alpha);
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& v = ctx->input(1);
    if (g.shape() != v.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": gradients and its second input must have the same shape, got ",
                       g.shape().DebugString(), " and ", v.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    const T* gp = g.data<T>();
    const T* vp = v.data<T>();
    T* op = out->data<T>();
    for (int64_t i = 0; i < g.NumElements(); ++i) op[i] = f_(gp[i], vp[i]);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  F f_{};
};

absl::Status SameShapes(InferenceContext* c) {
  absl::StatusOr<TensorShape> merged = c->input(0).Merge(c->input(1));
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": gradients and its second input must have the same shape, got ",
        c->input(0).DebugString(), " and ", c->input(1).DebugString()));
  }
  c->set_output(0, *merged);
  return absl::OkStatus();
}

OpDefBuilder GradBuilder(const char* name, const char* second) {
  OpDefBuilder b(name);
  b.Input("gradients: T")
      .Input(absl::StrCat(second, ": T"))
      .Output("backprops: T")
      .Attr(kFloatTypes)
      .SetShapeFn(SameShapes);
  return b;
}

template <template <typename> class F>
void RegisterGrad(KernelRegistry* k, const char* op) {
  k->Register<ActivationGradOp<float, F<float>>>(
      KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<ActivationGradOp<double, F<double>>>(
      KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

Output Binary(const Scope& scope, const char* op, Input a, Input b, std::source_location loc) {
  return scope.Op(op, loc).Input(a).Input(b).Finalize1();
}

}  // namespace

absl::Status RegisterActivationGradOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(GradBuilder("Relu6Grad", "features")));
  RETURN_IF_ERROR(ops->Register(GradBuilder("EluGrad", "outputs")));
  RETURN_IF_ERROR(ops->Register(GradBuilder("SeluGrad", "outputs")));
  // T defaults to float for LeakyReluGrad alone, as in TensorFlow.
  OpDefBuilder leaky = GradBuilder("LeakyReluGrad", "features");
  leaky.Attr("alpha: float = 0.2").SetAttrDefault("T", MakeAttr(DT_FLOAT));
  RETURN_IF_ERROR(ops->Register(leaky));
  RETURN_IF_ERROR(ops->Register(GradBuilder("SoftplusGrad", "features")));
  RETURN_IF_ERROR(ops->Register(GradBuilder("SoftsignGrad", "features")));
  return absl::OkStatus();
}

void RegisterActivationGradKernels(KernelRegistry* k) {
  RegisterGrad<Relu6GradF>(k, "Relu6Grad");
  RegisterGrad<EluGradF>(k, "EluGrad");
  RegisterGrad<SeluGradF>(k, "SeluGrad");
  RegisterGrad<LeakyReluGradF>(k, "LeakyReluGrad");
  RegisterGrad<SoftplusGradF>(k, "SoftplusGrad");
  RegisterGrad<SoftsignGradF>(k, "SoftsignGrad");
}

namespace ops {

Output Relu6Grad(const Scope& scope, Input gradients, Input features, std::source_location loc) {
  return Binary(scope, "Relu6Grad", gradients, features, loc);
}
Output EluGrad(const Scope& scope, Input gradients, Input outputs, std::source_location loc) {
  return Binary(scope, "EluGrad", gradients, outputs, loc);
}
Output SeluGrad(const Scope& scope, Input gradients, Input outputs, std::source_location loc) {
  return Binary(scope, "SeluGrad", gradients, outputs, loc);
}
Output LeakyReluGrad(const Scope& scope, Input gradients, Input features,
                     const LeakyReluGradAttrs& attrs, std::source_location loc) {
  return scope.Op("LeakyReluGrad", loc)
      .Input(gradients)
      .Input(features)
      .Attr("alpha", attrs.alpha)
      .Finalize1();
}
Output SoftplusGrad(const Scope& scope, Input gradients, Input features,
                    std::source_location loc) {
  return Binary(scope, "SoftplusGrad", gradients, features, loc);
}
Output SoftsignGrad(const Scope& scope, Input gradients, Input features,
                    std::source_location loc) {
  return Binary(scope, "SoftsignGrad", gradients, features, loc);
}

}  // namespace ops
}  // namespace sluice
