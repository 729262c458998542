// Definitions, wrappers, CPU kernels and gradients of the special functions.
// Why Boost.Math: digamma, polygamma and the inverse error functions are in
// no C or C++ standard library; Boost's are well kept and header only.
#include "ops/math/special_functions.h"

#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/polygamma.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/cpu_cwise_loops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

// NaN and inf instead of exceptions; float computed in float, as
// TensorFlow's kernels.
using Policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::promote_float<false>, boost::math::policies::promote_double<false>>;

template <typename T> struct LgammaF {
  static T Apply(T x) {
    int sign;
    if constexpr (std::is_same_v<T, float>) {
      return ::lgammaf_r(x, &sign);
    } else {
      return ::lgamma_r(x, &sign);
    }
  }
};
template <typename T> struct DigammaF {
  static T Apply(T x) {
    if (x <= T(0) && x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
    return boost::math::digamma(x, Policy());
  }
};
template <typename T> struct PolygammaF {
  static T Apply(T a, T x) {
    if (!(a >= T(0)) || a != std::floor(a)) return std::numeric_limits<T>::quiet_NaN();
    const int n = static_cast<int>(a);
    if (n == 0) return DigammaF<T>::Apply(x);
    if (x <= T(0) && x == std::floor(x)) {  // a pole: (-1)^(n+1) n! zeta(n+1, x) -> +-inf
      return n % 2 == 1 ? std::numeric_limits<T>::infinity()
                        : -std::numeric_limits<T>::infinity();
    }
    return boost::math::polygamma(n, x, Policy());
  }
};
template <typename T> struct ErfinvF {
  static T Apply(T x) { return boost::math::erf_inv(x, Policy()); }
};
// ndtri(p) = -sqrt(2) erfc^-1(2p).
template <typename T> struct NdtriF {
  static T Apply(T p) {
    return -std::sqrt(T(2)) * boost::math::erfc_inv(T(2) * p, Policy());
  }
};

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// ---- Gradients -------------------------------------------------------------

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

Output Scalar(const Scope& s, double value, const Output& like) {
  return ops::Cast(s, ops::Const(s, value), like.dtype());
}

GradResult Only(const Scope& s, Output grad) {
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{grad};
}

GradResult LgammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Only(s, ops::Mul(s, g[0], ops::Digamma(s, InputOf(node, 0))));
}
GradResult DigammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  return Only(s, ops::Mul(s, g[0], ops::Polygamma(s, ops::OnesLike(s, x), x)));
}
GradResult ErfinvGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = OutputOf(node);
  return Only(s, ops::Mul(s, ops::Mul(s, g[0], Scalar(s, 0.88622692545275801, y)),  // sqrt(pi)/2
                          ops::Exp(s, ops::Square(s, y))));
}
GradResult NdtriGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output y = OutputOf(node);
  return Only(s, ops::Mul(s, ops::Mul(s, g[0], Scalar(s, 2.5066282746310002, y)),  // sqrt(2 pi)
                          ops::Exp(s, ops::Mul(s, ops::Square(s, y), Scalar(s, 0.5, y)))));
}
// W.r.t. x only, summed over the dimensions a broadcasts x along.
GradResult PolygammaGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output a = InputOf(node, 0);
  const Output x = InputOf(node, 1);
  Output partial = ops::Mul(s, g[0], ops::Polygamma(s, ops::Add(s, a, ops::OnesLike(s, a)), x));
  ops::BroadcastGradientArgsOutputs r =
      ops::BroadcastGradientArgs(s, ops::Shape(s, a), ops::Shape(s, x));
  Output gx = ops::Reshape(s, ops::Sum(s, partial, r.r1), ops::Shape(s, x));
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), gx};
}

}  // namespace

absl::Status RegisterSpecialFunctionOps(OpRegistry* ops) {
  for (const char* name : {"Lgamma", "Digamma", "Erfinv", "Ndtri"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: T")
                                      .Output("y: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn(SameShape)));
  }
  return ops->Register(OpDefBuilder("Polygamma")
                           .Input("a: T")
                           .Input("x: T")
                           .Output("z: T")
                           .Attr("T: {float, double}")
                           .SetShapeFn([](InferenceContext* c) -> absl::Status {
                             ASSIGN_OR_RETURN(TensorShape out,
                                              BroadcastShapes(c->input(0), c->input(1)));
                             c->set_output(0, out);
                             return absl::OkStatus();
                           }));
}

absl::Status RegisterSpecialFunctionGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Lgamma", LgammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Digamma", DigammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Polygamma", PolygammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Erfinv", ErfinvGrad));
  return ops->SetGradient("Ndtri", NdtriGrad);
}

void RegisterSpecialFunctionKernels(KernelRegistry* k) {
  internal::RegisterCpuUnary<LgammaF, float, double>(k, "Lgamma");
  internal::RegisterCpuUnary<DigammaF, float, double>(k, "Digamma");
  internal::RegisterCpuUnary<ErfinvF, float, double>(k, "Erfinv");
  internal::RegisterCpuUnary<NdtriF, float, double>(k, "Ndtri");
  internal::RegisterCpuBinary<PolygammaF, float, double>(k, "Polygamma");
}

namespace ops {

Output Lgamma(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Lgamma", loc).Input(x).Finalize1();
}
Output Digamma(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Digamma", loc).Input(x).Finalize1();
}
Output Polygamma(const Scope& s, Input a, Input x, std::source_location loc) {
  return s.Op("Polygamma", loc).Input(a).Input(x).Finalize1();
}
Output Erfinv(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Erfinv", loc).Input(x).Finalize1();
}
Output Ndtri(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Ndtri", loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
