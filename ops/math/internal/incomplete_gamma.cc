// Why not Boost.Math alone: it has P and Q but not their derivative in a,
// which IgammaGradA and RandomGammaGrad need; the series and the continued
// fraction are carried with that derivative here, and P and Q come from
// the same code so the pair stays consistent.
#include "ops/math/internal/incomplete_gamma.h"

#include <boost/math/special_functions/digamma.hpp>

#include <cmath>
#include <limits>
#include <optional>

namespace sluice {
namespace internal {
namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxTerms = 2000;

// A value and its derivative in a.
struct Dual {
  double v;
  double d;
};
Dual operator+(Dual x, Dual y) { return {x.v + y.v, x.d + y.d}; }
Dual operator-(Dual x, Dual y) { return {x.v - y.v, x.d - y.d}; }
Dual operator*(Dual x, Dual y) { return {x.v * y.v, x.d * y.v + x.v * y.d}; }
Dual operator/(Dual x, Dual y) { return {x.v / y.v, (x.d * y.v - x.v * y.d) / (y.v * y.v)}; }
Dual Scale(Dual x, double k) { return {x.v * k, x.d * k}; }

double LogGamma(double a) {
  int sign;
  return ::lgamma_r(a, &sign);
}
double Digamma(double a) { return boost::math::digamma(a); }

// P(a, x) and dP/da by the power series
//   P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)).
Dual LowerSeries(double a, double x) {
  Dual term{1, 0};
  Dual sum{1, 0};
  for (int n = 1; n < kMaxTerms; ++n) {
    const double an = a + n;
    term = term * Dual{x / an, -x / (an * an)};
    sum = sum + term;
    if (std::fabs(term.v) <= kEpsilon * std::fabs(sum.v) &&
        std::fabs(term.d) <= kEpsilon * std::fabs(sum.d)) {
      break;
    }
  }
  const double log_prefix = a * std::log(x) - x - LogGamma(a + 1);
  const double prefix = std::exp(log_prefix);
  const double dlog_prefix = std::log(x) - Digamma(a + 1);
  return {prefix * sum.v, prefix * (dlog_prefix * sum.v + sum.d)};
}

// Q(a, x) and dQ/da by the continued fraction
//   Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)),
// evaluated by its convergents p_k / q_k, rescaled when they grow large.
Dual UpperFraction(double a, double x) {
  constexpr double kBig = 4503599627370496.0;  // 2^52
  constexpr double kBigInverse = 1 / kBig;
  Dual y{1 - a, -1};
  Dual z = y + Dual{x + 1, 0};
  double c = 0;
  Dual p_prev{1, 0};
  Dual q_prev{x, 0};
  Dual p = Dual{x + 1, 0};
  Dual q = z * Dual{x, 0};
  Dual ratio = p / q;
  for (int n = 0; n < kMaxTerms; ++n) {
    c += 1;
    y = y + Dual{1, 0};
    z = z + Dual{2, 0};
    const Dual yc = Scale(y, c);
    const Dual p_next = p * z - p_prev * yc;
    const Dual q_next = q * z - q_prev * yc;
    bool converged = false;
    if (q_next.v != 0) {
      const Dual r = p_next / q_next;
      converged = std::fabs(ratio.v - r.v) <= kEpsilon * std::fabs(r.v) &&
                  std::fabs(ratio.d - r.d) <= kEpsilon * std::fabs(r.d);
      ratio = r;
    }
    p_prev = p;
    q_prev = q;
    p = p_next;
    q = q_next;
    if (std::fabs(p.v) > kBig) {
      p_prev = Scale(p_prev, kBigInverse);
      q_prev = Scale(q_prev, kBigInverse);
      p = Scale(p, kBigInverse);
      q = Scale(q, kBigInverse);
    }
    if (converged) break;
  }
  const double log_prefix = a * std::log(x) - x - LogGamma(a);
  const double prefix = std::exp(log_prefix);
  const double dlog_prefix = std::log(x) - Digamma(a);
  return {prefix * ratio.v, prefix * (dlog_prefix * ratio.v + ratio.d)};
}

// The value at an edge: x == 0, outside the domain (NaN), a == inf, x == inf.
struct EdgeValues {
  double zero_x;
  double infinite_a;
  double infinite_x;
};

std::optional<double> AtEdge(double a, double x, const EdgeValues& values) {
  if (x == 0) return values.zero_x;
  if (!(x >= 0) || !(a > 0)) return kNaN;
  if (std::isinf(a)) return values.infinite_a;
  if (std::isinf(x)) return values.infinite_x;
  return std::nullopt;
}

// P and dP/da away from the edges.
Dual LowerWithDerivative(double a, double x) {
  if (x <= 1 || x <= a) return LowerSeries(a, x);
  const Dual q = UpperFraction(a, x);
  return {1 - q.v, -q.d};
}

constexpr EdgeValues kDerivativeEdges = {0, 0, -0.0};

}  // namespace

double Igamma(double a, double x) {
  if (std::optional<double> edge = AtEdge(a, x, {0, 0, 1})) return *edge;
  if (x <= 1 || x <= a) return LowerSeries(a, x).v;
  return 1 - UpperFraction(a, x).v;
}

double Igammac(double a, double x) {
  if (std::optional<double> edge = AtEdge(a, x, {1, 1, 0})) return *edge;
  if (x <= 1 || x <= a) return 1 - LowerSeries(a, x).v;
  return UpperFraction(a, x).v;
}

double IgammaDerA(double a, double x) {
  if (std::optional<double> edge = AtEdge(a, x, kDerivativeEdges)) return *edge;
  return LowerWithDerivative(a, x).d;
}

double GammaSampleDerAlpha(double a, double x) {
  if (std::optional<double> edge = AtEdge(a, x, kDerivativeEdges)) return *edge;
  // dP/dx: the Gamma(a, 1) density at x.
  const double density = std::exp(-x + (a - 1) * std::log(x) - LogGamma(a));
  return -LowerWithDerivative(a, x).d / density;
}

}  // namespace internal
}  // namespace sluice
