// Definitions, wrappers, CPU kernels and gradients of the Bessel functions.
// Why Boost.Math: the C++17 special functions (std::cyl_bessel_i, ...) are
// missing from libc++ and have no scaled forms; Boost's are well kept and
// header only. The scaled forms beyond x = 700 are their asymptotic series.
#include "ops/math/bessel_functions.h"

#include <boost/math/special_functions/bessel.hpp>

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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
// Beyond this e^x overflows I and underflows K; the scaled forms switch to
// their asymptotic series, exact in double there.
constexpr double kAsymptotic = 700;

using Policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

// sum_k (sign)^k a_k(nu) / x^k with a_k = prod_{j=1..k} (4 nu^2 - (2j-1)^2) / (k! 8^k):
// the asymptotic series of e^-x I_nu(x) sqrt(2 pi x) (sign -1) and of
// e^x K_nu(x) sqrt(2 x / pi) (sign +1).
double AsymptoticSum(int nu, double x, double sign) {
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 12; ++k) {
    term *= sign * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    sum += term;
  }
  return sum;
}

// e^-|x| I_nu(x).
double ScaledI(int nu, double x) {
  if (std::isnan(x)) return kNaN;
  const double ax = std::fabs(x);
  const double odd = (nu == 1 && x < 0) ? -1 : 1;
  if (std::isinf(x)) return odd * 0.0;
  if (ax <= kAsymptotic) return std::exp(-ax) * boost::math::cyl_bessel_i(nu, x, Policy());
  return odd * AsymptoticSum(nu, ax, -1) / std::sqrt(2 * kPi * ax);
}

// e^x K_nu(x).
double ScaledK(int nu, double x) {
  if (std::isnan(x)) return kNaN;
  if (x <= 0 || x == -kInf) return kInf;
  if (x == kInf) return 0;
  if (x <= kAsymptotic) return std::exp(x) * boost::math::cyl_bessel_k(nu, x, Policy());
  return AsymptoticSum(nu, x, 1) * std::sqrt(kPi / (2 * x));
}

double I(int nu, double x) {
  if (!std::isfinite(x)) return kNaN;
  return boost::math::cyl_bessel_i(nu, x, Policy());
}
double J(int nu, double x) {
  if (!std::isfinite(x)) return kNaN;
  return boost::math::cyl_bessel_j(nu, x, Policy());
}
double K(int nu, double x) {
  if (std::isnan(x)) return kNaN;
  if (x <= 0) return kInf;
  if (x == kInf) return 0;
  return boost::math::cyl_bessel_k(nu, x, Policy());
}
double Y(int nu, double x) {
  if (std::isnan(x) || x == kInf) return kNaN;
  if (x <= 0) return -kInf;
  return boost::math::cyl_neumann(nu, x, Policy());
}

template <typename T> struct I0F { static T Apply(T x) { return static_cast<T>(I(0, x)); } };
template <typename T> struct I1F { static T Apply(T x) { return static_cast<T>(I(1, x)); } };
template <typename T> struct I0eF { static T Apply(T x) { return static_cast<T>(ScaledI(0, x)); } };
template <typename T> struct I1eF { static T Apply(T x) { return static_cast<T>(ScaledI(1, x)); } };
template <typename T> struct K0F { static T Apply(T x) { return static_cast<T>(K(0, x)); } };
template <typename T> struct K1F { static T Apply(T x) { return static_cast<T>(K(1, x)); } };
template <typename T> struct K0eF { static T Apply(T x) { return static_cast<T>(ScaledK(0, x)); } };
template <typename T> struct K1eF { static T Apply(T x) { return static_cast<T>(ScaledK(1, x)); } };
template <typename T> struct J0F { static T Apply(T x) { return static_cast<T>(J(0, x)); } };
template <typename T> struct J1F { static T Apply(T x) { return static_cast<T>(J(1, x)); } };
template <typename T> struct Y0F { static T Apply(T x) { return static_cast<T>(Y(0, x)); } };
template <typename T> struct Y1F { static T Apply(T x) { return static_cast<T>(Y(1, x)); } };

// ---- Gradients -------------------------------------------------------------

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

GradResult Times(const Scope& s, const Output& grad, const Output& derivative) {
  Output g = ops::Mul(s, grad, derivative);
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{g};
}

Output OverX(const Scope& s, const Output& y, const Output& x) { return ops::Div(s, y, x); }
// `value`, or 1/2 where x is 0: the limit of I1' and J1' there.
Output AtZero(const Scope& s, const Output& x, const Output& value) {
  return ops::SelectV2(s, ops::Equal(s, x, ops::ZerosLike(s, x)),
                       ops::Cast(s, ops::Const(s, 0.5), x.dtype()), value);
}

}  // namespace

absl::Status RegisterBesselFunctionOps(OpRegistry* ops) {
  for (const char* name : {"BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselK0",
                           "BesselK0e", "BesselK1", "BesselK1e", "BesselJ0", "BesselJ1",
                           "BesselY0", "BesselY1"}) {
    RETURN_IF_ERROR(ops->Register(OpDefBuilder(name)
                                      .Input("x: T")
                                      .Output("y: T")
                                      .Attr("T: {bfloat16, half, float, double}")
                                      .SetShapeFn([](InferenceContext* c) {
                                        c->set_output(0, c->input(0));
                                        return absl::OkStatus();
                                      })));
  }
  using Span = absl::Span<const Output>;
  RETURN_IF_ERROR(ops->SetGradient("BesselI0", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::BesselI1(s, InputOf(n, 0)));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselI0e", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0], ops::Sub(s, ops::BesselI1e(s, x), ops::Mul(s, ops::Sign(s, x), OutputOf(n))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselI1", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0], AtZero(s, x, ops::Sub(s, ops::BesselI0(s, x), OverX(s, OutputOf(n), x))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselI1e", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    const Output y = OutputOf(n);
    return Times(s, g[0],
                 AtZero(s, x,
                        ops::Sub(s, ops::BesselI0e(s, x),
                                 ops::Mul(s, y, ops::Add(s, ops::Sign(s, x), ops::Reciprocal(s, x))))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselK0", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Neg(s, ops::BesselK1(s, InputOf(n, 0))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselK0e", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Sub(s, OutputOf(n), ops::BesselK1e(s, InputOf(n, 0))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselK1", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0], ops::Neg(s, ops::Add(s, ops::BesselK0(s, x), OverX(s, OutputOf(n), x))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselK1e", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    const Output y = OutputOf(n);
    return Times(s, g[0],
                 ops::Sub(s, ops::Mul(s, y, ops::Sub(s, ops::OnesLike(s, x), ops::Reciprocal(s, x))),
                          ops::BesselK0e(s, x)));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselJ0", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Neg(s, ops::BesselJ1(s, InputOf(n, 0))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselJ1", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0], AtZero(s, x, ops::Sub(s, ops::BesselJ0(s, x), OverX(s, OutputOf(n), x))));
  }));
  RETURN_IF_ERROR(ops->SetGradient("BesselY0", [](const Scope& s, const Node& n, Span g) {
    return Times(s, g[0], ops::Neg(s, ops::BesselY1(s, InputOf(n, 0))));
  }));
  return ops->SetGradient("BesselY1", [](const Scope& s, const Node& n, Span g) {
    const Output x = InputOf(n, 0);
    return Times(s, g[0], ops::Sub(s, ops::BesselY0(s, x), OverX(s, OutputOf(n), x)));
  });
}

void RegisterBesselFunctionKernels(KernelRegistry* k) {
  internal::RegisterCpuUnary<I0F, float, double>(k, "BesselI0");
  internal::RegisterCpuUnary<I0eF, float, double>(k, "BesselI0e");
  internal::RegisterCpuUnary<I1F, float, double>(k, "BesselI1");
  internal::RegisterCpuUnary<I1eF, float, double>(k, "BesselI1e");
  internal::RegisterCpuUnary<K0F, float, double>(k, "BesselK0");
  internal::RegisterCpuUnary<K0eF, float, double>(k, "BesselK0e");
  internal::RegisterCpuUnary<K1F, float, double>(k, "BesselK1");
  internal::RegisterCpuUnary<K1eF, float, double>(k, "BesselK1e");
  internal::RegisterCpuUnary<J0F, float, double>(k, "BesselJ0");
  internal::RegisterCpuUnary<J1F, float, double>(k, "BesselJ1");
  internal::RegisterCpuUnary<Y0F, float, double>(k, "BesselY0");
  internal::RegisterCpuUnary<Y1F, float, double>(k, "BesselY1");
}

namespace ops {

Output BesselI0(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselI0", loc).Input(x).Finalize1();
}

Output BesselI0e(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselI0e", loc).Input(x).Finalize1();
}

Output BesselI1(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselI1", loc).Input(x).Finalize1();
}

Output BesselI1e(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselI1e", loc).Input(x).Finalize1();
}

Output BesselK0(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselK0", loc).Input(x).Finalize1();
}

Output BesselK0e(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselK0e", loc).Input(x).Finalize1();
}

Output BesselK1(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselK1", loc).Input(x).Finalize1();
}

Output BesselK1e(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselK1e", loc).Input(x).Finalize1();
}

Output BesselJ0(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselJ0", loc).Input(x).Finalize1();
}

Output BesselJ1(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselJ1", loc).Input(x).Finalize1();
}

Output BesselY0(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselY0", loc).Input(x).Finalize1();
}

Output BesselY1(const Scope& s, Input x, std::source_location loc) {
  return s.Op("BesselY1", loc).Input(x).Finalize1();
}

}  // namespace ops
}  // namespace sluice
