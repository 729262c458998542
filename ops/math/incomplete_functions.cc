// Definitions, wrappers, CPU kernels and gradients of the incomplete gamma
// and beta functions. Why Boost.Math for Betainc: the regularized
// incomplete beta is in no C or C++ standard library; Boost's is well kept
// and header only.
#include "ops/math/incomplete_functions.h"

#include <boost/math/special_functions/beta.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/broadcast_grad.h"
#include "ops/math/internal/cpu_cwise_loops.h"
#include "ops/math/internal/incomplete_gamma.h"
#include "ops/math/math_ops.h"
#include "ops/math/special_functions.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

template <typename T> struct IgammaF {
  static T Apply(T a, T x) { return static_cast<T>(internal::Igamma(a, x)); }
};
template <typename T> struct IgammacF {
  static T Apply(T a, T x) { return static_cast<T>(internal::Igammac(a, x)); }
};
template <typename T> struct IgammaGradAF {
  static T Apply(T a, T x) { return static_cast<T>(internal::IgammaDerA(a, x)); }
};
template <typename T> struct RandomGammaGradF {
  static T Apply(T alpha, T sample) {
    return static_cast<T>(internal::GammaSampleDerAlpha(alpha, sample));
  }
};

// TensorFlow's values: NaN outside a, b > 0 (finite) and 0 <= x <= 1.
double IncompleteBeta(double a, double b, double x) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (!(a > 0) || !(b > 0) || std::isinf(a) || std::isinf(b) || !(x >= 0 && x <= 1)) return kNaN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  using Policy = boost::math::policies::policy<
      boost::math::policies::domain_error<boost::math::policies::ignore_error>,
      boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
      boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;
  return boost::math::ibeta(a, b, x, Policy());
}

// Betainc's a, b and x: one shape, or scalars (TensorFlow's rule and text).
template <typename T>
class BetaincOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor* in[3] = {&ctx->input(0), &ctx->input(1), &ctx->input(2)};
    const char* names[3] = {"a", "b", "x"};
    TensorShape shape;
    int shaped = -1;
    for (int i = 0; i < 3; ++i) {
      if (in[i]->dims() == 0) continue;
      if (shaped < 0) {
        shaped = i;
        shape = in[i]->shape();
      } else if (in[i]->shape() != shape) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Betainc: Shapes of ", names[shaped], " and ", names[i], " are inconsistent: ",
            shape.DebugString(), " vs. ", in[i]->shape().DebugString()));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    const T* a = in[0]->data<T>();
    const T* b = in[1]->data<T>();
    const T* x = in[2]->data<T>();
    const int64_t sa = in[0]->dims() == 0 ? 0 : 1, sb = in[1]->dims() == 0 ? 0 : 1,
                  sx = in[2]->dims() == 0 ? 0 : 1;
    T* o = out->data<T>();
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      o[i] = static_cast<T>(IncompleteBeta(a[i * sa], b[i * sb], x[i * sx]));
    }
    return absl::OkStatus();
  }
};

absl::Status BroadcastShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, out);
  return absl::OkStatus();
}

absl::Status BetaincShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    if (c->input(i).rank() != 0) {
      c->set_output(0, c->input(i));
      return absl::OkStatus();
    }
  }
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

// ---- Gradients -------------------------------------------------------------

using internal::InputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

// The Gamma(a, 1) density at x: d P(a, x) / d x.
Output GammaDensity(const Scope& s, const Output& a, const Output& x) {
  const Output one = ops::OnesLike(s, a);
  return ops::Exp(s, ops::Sub(s, ops::Mul(s, ops::Sub(s, a, one), ops::Log(s, x)),
                              ops::Add(s, x, ops::Lgamma(s, a))));
}

// Igamma's gradient, negated for Igammac.
GradResult IncompleteGammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g,
                               bool negate) {
  const Output a = InputOf(node, 0);
  const Output x = InputOf(node, 1);
  Output ga = ops::Mul(s, g[0], ops::IgammaGradA(s, a, x));
  Output gx = ops::Mul(s, g[0], GammaDensity(s, a, x));
  if (negate) {
    ga = ops::Neg(s, ga);
    gx = ops::Neg(s, gx);
  }
  std::vector<Output> out = {internal::ReduceToOperand(s, ga, a, {x}),
                             internal::ReduceToOperand(s, gx, x, {a})};
  RETURN_IF_ERROR(s.status());
  return out;
}

// W.r.t. x only: x^(a-1) (1-x)^(b-1) / B(a, b), summed to x's shape.
GradResult BetaincGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output a = InputOf(node, 0);
  const Output b = InputOf(node, 1);
  const Output x = InputOf(node, 2);
  const Output one = ops::OnesLike(s, a);
  const Output log_beta =
      ops::Sub(s, ops::Add(s, ops::Lgamma(s, a), ops::Lgamma(s, b)), ops::Lgamma(s, ops::Add(s, a, b)));
  const Output partial = ops::Exp(
      s, ops::Sub(s,
                  ops::Add(s, ops::Xlog1py(s, ops::Sub(s, b, ops::OnesLike(s, b)), ops::Neg(s, x)),
                           ops::Xlogy(s, ops::Sub(s, a, one), x)),
                  log_beta));
  const Output gx = ops::Mul(s, g[0], partial);
  // The output has the shape of whichever input is not a scalar.
  Output sum = internal::ReduceToOperand(s, gx, x, {a, b});
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), Output(), sum};
}

}  // namespace

absl::Status RegisterIncompleteFunctionOps(OpRegistry* ops) {
  for (const char* name : {"Igamma", "Igammac"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("a: T")
                                      .Input("x: T")
                                      .Output("z: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn(BroadcastShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("IgammaGradA")
                                    .Input("a: T")
                                    .Input("x: T")
                                    .Output("z: T")
                                    .Attr("T: {float, double}")
                                    .SetShapeFn(BroadcastShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RandomGammaGrad")
                                    .Input("alpha: T")
                                    .Input("sample: T")
                                    .Output("output: T")
                                    .Attr("T: {float, double}")
                                    .SetShapeFn(BroadcastShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Betainc")
                                    .Input("a: T")
                                    .Input("b: T")
                                    .Input("x: T")
                                    .Output("z: T")
                                    .Attr("T: {float, double}")
                                    .SetShapeFn(BetaincShape)));
  RETURN_IF_ERROR(ops->SetGradient(
      "Igamma", [](const Scope& s, const Node& n, absl::Span<const Output> g) {
        return IncompleteGammaGrad(s, n, g, /*negate=*/false);
      }));
  RETURN_IF_ERROR(ops->SetGradient(
      "Igammac", [](const Scope& s, const Node& n, absl::Span<const Output> g) {
        return IncompleteGammaGrad(s, n, g, /*negate=*/true);
      }));
  RETURN_IF_ERROR(ops->SetGradient("Betainc", BetaincGrad));
  RETURN_IF_ERROR(ops->SetNoGradient("IgammaGradA"));
  return ops->SetNoGradient("RandomGammaGrad");
}

void RegisterIncompleteFunctionKernels(KernelRegistry* k) {
  internal::RegisterCpuBinary<IgammaF, float, double>(k, "Igamma");
  internal::RegisterCpuBinary<IgammacF, float, double>(k, "Igammac");
  internal::RegisterCpuBinary<IgammaGradAF, float, double>(k, "IgammaGradA");
  internal::RegisterCpuBinary<RandomGammaGradF, float, double>(k, "RandomGammaGrad");
  k->Register<BetaincOp<float>>(
      KernelDef("Betainc", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  k->Register<BetaincOp<double>>(
      KernelDef("Betainc", kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

namespace ops {

Output Igamma(const Scope& s, Input a, Input x, std::source_location loc) {
  return s.Op("Igamma", loc).Input(a).Input(x).Finalize1();
}
Output Igammac(const Scope& s, Input a, Input x, std::source_location loc) {
  return s.Op("Igammac", loc).Input(a).Input(x).Finalize1();
}
Output IgammaGradA(const Scope& s, Input a, Input x, std::source_location loc) {
  return s.Op("IgammaGradA", loc).Input(a).Input(x).Finalize1();
}
Output RandomGammaGrad(const Scope& s, Input alpha, Input sample, std::source_location loc) {
  return s.Op("RandomGammaGrad", loc).Input(alpha).Input(sample).Finalize1();
}
Output Betainc(const Scope& s, Input a, Input b, Input x, std::source_location loc) {
  return s.Op("Betainc", loc).Input(a).Input(b).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
