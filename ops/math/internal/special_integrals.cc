#include "ops/math/internal/special_integrals.h"

#include <cmath>
#include <complex>
#include <limits>

namespace sluice {
namespace internal {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = 3.14159265358979323846;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// sum_k y^k / k^2, |y| <= 1/2.
double DilogSeries(double y) {
  double term = y, sum = 0;
  for (int k = 1; k < 200; ++k) {
    const double add = term / (static_cast<double>(k) * k);
    sum += add;
    if (std::fabs(add) <= kEps * std::fabs(sum)) break;
    term *= y;
  }
  return sum;
}

// Li2(y) for 0 <= y <= 1.
double DilogUnit(double y) {
  if (y <= 0.5) return DilogSeries(y);
  if (y == 1) return kPi * kPi / 6;
  // Euler's reflection: Li2(y) + Li2(1 - y) = pi^2/6 - log(y) log(1 - y).
  return kPi * kPi / 6 - std::log(y) * std::log1p(-y) - DilogSeries(1 - y);
}

}  // namespace

double Dawson(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  double value;
  if (ax < 6) {
    // e^(-x^2) sum_n x^(2n+1) / (n! (2n+1)): positive terms, no cancellation.
    const double x2 = ax * ax;
    double power = ax;  // x^(2n+1) / n!
    double sum = 0;
    for (int n = 0; n < 400; ++n) {
      const double add = power / (2 * n + 1);
      sum += add;
      if (add <= kEps * sum) break;
      power *= x2 / (n + 1);
    }
    value = std::exp(-x2) * sum;
  } else if (std::isinf(ax)) {
    value = 0;
  } else {
    // 1/(2x) sum_n (2n-1)!! / (2x^2)^n, until the terms stop shrinking.
    const double r = 1 / (2 * ax * ax);
    double term = 1, sum = 1;
    for (int n = 1; n < 200; ++n) {
      const double next = term * (2 * n - 1) * r;
      if (next >= term || next <= kEps * sum) break;
      term = next;
      sum += term;
    }
    value = sum / (2 * ax);
  }
  return x < 0 ? -value : value;
}

void Fresnel(double x, double* c, double* s) {
  if (std::isnan(x)) {
    *c = *s = x;
    return;
  }
  const double ax = std::fabs(x);
  double cv, sv;
  if (std::isinf(ax)) {
    cv = sv = 0.5;
  } else if (ax < 2) {
    // Power series: sum_n (-1)^n (pi/2)^(2n) x^(4n+1) / ((2n)! (4n+1)) and
    // the odd terms for S.
    const double t = kPi / 2 * ax * ax;
    double term = ax;  // (pi/2 x^2)^m x / m!
    cv = sv = 0;
    for (int m = 0; m < 200; ++m) {
      const double add = term / (2 * m + 1);
      if (m % 4 == 0) cv += add;
      if (m % 4 == 1) sv += add;
      if (m % 4 == 2) cv -= add;
      if (m % 4 == 3) sv -= add;
      if (m > 4 && add <= kEps * 1e-3) break;
      term *= t / (m + 1);
    }
  } else {
    // C + iS = (1+i)/2 erf(z), z = sqrt(pi)/2 (1-i) x, erf = 1 - erfc and
    // erfc(z) = e^(-z^2)/sqrt(pi) / (z + 1/2 / (z + 1 / (z + 3/2 / (z + ...)))),
    // the continued fraction evaluated by Lentz's method.
    using C = std::complex<double>;
    const C z = std::sqrt(kPi) / 2 * C(1, -1) * ax;
    const double tiny = 1e-300;
    C f = z, cc = z, d = 0;
    for (int n = 1; n < 5000; ++n) {
      const double a = n / 2.0;
      d = z + a * d;
      if (std::abs(d) < tiny) d = tiny;
      cc = z + a / cc;
      if (std::abs(cc) < tiny) cc = tiny;
      d = 1.0 / d;
      const C delta = cc * d;
      f *= delta;
      if (std::abs(delta - 1.0) < kEps) break;
    }
    const C erfc = std::exp(-z * z) / std::sqrt(kPi) / f;
    const C value = C(0.5, 0.5) * (1.0 - erfc);
    cv = value.real();
    sv = value.imag();
  }
  *c = x < 0 ? -cv : cv;
  *s = x < 0 ? -sv : sv;
}

double Spence(double x) {
  if (!(x >= 0) || std::isinf(x)) return kNaN;
  const double y = 1 - x;  // Li2(y)
  if (y >= 0) return DilogUnit(y);
  // Landen: Li2(y) = -Li2(y / (y - 1)) - log^2(1 - y) / 2, y / (y - 1) in (0, 1).
  const double log1my = std::log(x);
  return -DilogUnit(y / (y - 1)) - 0.5 * log1my * log1my;
}

}  // namespace internal
}  // namespace sluice
