// Definitions, wrappers, CPU kernels and gradients of the special functions.
// Why Boost.Math: digamma, polygamma, the exponential integral and the
// inverse error functions are in no C or C++ standard library; Boost's are
// well kept and header only. Hurwitz's zeta is not in Boost (only
// Riemann's): it is summed here.
#include "ops/math/special_functions.h"

#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/expint.hpp>
#include <boost/math/special_functions/polygamma.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/broadcast_grad.h"
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

// Ei(x) for x > 0 (TensorFlow's Expint: -inf at 0, NaN below).
template <typename T> struct ExpintF {
  static T Apply(T x) {
    if (x == T(0)) return -std::numeric_limits<T>::infinity();
    if (!(x > T(0))) return std::numeric_limits<T>::quiet_NaN();
    return static_cast<T>(boost::math::expint(static_cast<double>(x), Policy()));
  }
};

// (2k)! / B_2k for k = 1..12: the Euler-Maclaurin correction terms of the
// Hurwitz zeta function.
constexpr double kZetaTerms[] = {12.0,
                                 -720.0,
                                 30240.0,
                                 -1209600.0,
                                 47900160.0,
                                 -1.8924375803183791606e9,
                                 7.47242496e10,
                                 -2.950130727918164224e12,
                                 1.1646782814350067249e14,
                                 -4.5979787224074726105e15,
                                 1.8152105401943546773e17,
                                 -7.1661652561756670113e18};

// Hurwitz's zeta(x, q) = sum_k (q + k)^-x by the Euler-Maclaurin formula:
// the sum's first terms (at least 9, and up to q + k > 9), the integral of
// the rest, and Bernoulli corrections. TensorFlow's domain: inf at x = 1
// and at q a non-positive integer; NaN for x < 1, and for q < 0 with x not
// an integer.
double HurwitzZeta(double x, double q) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  if (x == 1) return std::numeric_limits<double>::infinity();
  if (x < 1) return std::numeric_limits<double>::quiet_NaN();
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();
    if (x != std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  }
  if (q == std::numeric_limits<double>::infinity()) return 0;
  double sum = std::pow(q, -x);
  double a = q;
  double b = 0;
  for (int i = 0; i < 9 || a <= 9;) {
    ++i;
    a += 1;
    b = std::pow(a, -x);
    sum += b;
    if (std::fabs(b / sum) < kEps) return sum;
  }
  const double w = a;
  sum += b * w / (x - 1) - 0.5 * b;
  double rising = 1;  // x (x + 1) ... (x + 2j)
  double k = 0;
  for (double term_scale : kZetaTerms) {
    rising *= x + k;
    b /= w;
    const double t = rising * b / term_scale;
    sum += t;
    if (std::fabs(t / sum) < kEps) break;
    k += 1;
    rising *= x + k;
    b /= w;
    k += 1;
  }
  return sum;
}
template <typename T> struct ZetaF {
  static T Apply(T x, T q) { return static_cast<T>(HurwitzZeta(x, q)); }
};

absl::Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status BroadcastShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, out);
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
  Output gx = internal::ReduceToOperand(s, partial, x, {a});
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), gx};
}

// W.r.t. q only: -x zeta(x + 1, q), summed to q's shape.
GradResult ZetaGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  const Output q = InputOf(node, 1);
  Output partial = ops::Mul(
      s, g[0], ops::Neg(s, ops::Mul(s, x, ops::Zeta(s, ops::Add(s, x, ops::OnesLike(s, x)), q))));
  Output gq = internal::ReduceToOperand(s, partial, q, {x});
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{Output(), gq};
}
GradResult ExpintGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  return Only(s, ops::Mul(s, g[0], ops::Div(s, ops::Exp(s, x), x)));
}

}  // namespace

absl::Status RegisterSpecialFunctionOps(OpRegistry* ops) {
  for (const char* name : {"Lgamma", "Digamma", "Erfinv", "Ndtri", "Expint"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: T")
                                      .Output("y: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn(SameShape)));
  }
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Polygamma")
                                    .Input("a: T")
                                    .Input("x: T")
                                    .Output("z: T")
                                    .Attr("T: {float, double}")
                                    .SetShapeFn(BroadcastShape)));
  return ops->Register(OpDefBuilder("Zeta")
                           .Input("x: T")
                           .Input("q: T")
                           .Output("z: T")
                           .Attr("T: {float, double}")
                           .SetShapeFn(BroadcastShape));
}

absl::Status RegisterSpecialFunctionGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Lgamma", LgammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Digamma", DigammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Polygamma", PolygammaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Erfinv", ErfinvGrad));
  RETURN_IF_ERROR(ops->SetGradient("Zeta", ZetaGrad));
  RETURN_IF_ERROR(ops->SetGradient("Expint", ExpintGrad));
  return ops->SetGradient("Ndtri", NdtriGrad);
}

void RegisterSpecialFunctionKernels(KernelRegistry* k) {
  internal::RegisterCpuUnary<LgammaF, float, double>(k, "Lgamma");
  internal::RegisterCpuUnary<DigammaF, float, double>(k, "Digamma");
  internal::RegisterCpuUnary<ErfinvF, float, double>(k, "Erfinv");
  internal::RegisterCpuUnary<NdtriF, float, double>(k, "Ndtri");
  internal::RegisterCpuBinary<PolygammaF, float, double>(k, "Polygamma");
  internal::RegisterCpuBinary<ZetaF, float, double>(k, "Zeta");
  internal::RegisterCpuUnary<ExpintF, float, double>(k, "Expint");
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
Output Zeta(const Scope& s, Input x, Input q, std::source_location loc) {
  return s.Op("Zeta", loc).Input(x).Input(q).Finalize1();
}
Output Expint(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Expint", loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
