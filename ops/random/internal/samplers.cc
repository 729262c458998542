#include "ops/random/internal/samplers.h"

#include <cmath>
#include <limits>

namespace sluice {
namespace internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Redraws in a row after which a Poisson sampler gives up (TensorFlow's
// loops forever where no draw fits the output type).
constexpr int kMaxPoissonRedraws = 10000;

double LogGamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

// Knuth: the number of uniforms whose running product stays above e^-rate.
double PoissonByProducts(double rate, double highest, SampleDraws& draws) {
  const double limit = std::exp(-rate);
  double product = 1;
  double x = 0;
  while (true) {
    product *= draws.Uniform();
    if (product <= limit && x <= highest) return x;
    x += 1;
  }
}

// Hormann's PTRS (transformed rejection with squeeze), for rate >= 10.
double PoissonByRejection(double rate, double highest, SampleDraws& draws) {
  const double log_rate = std::log(rate);
  const double b = 0.931 + 2.53 * std::sqrt(rate);
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  int misfits = 0;  // draws in a row beyond `highest`
  while (true) {
    const double u = draws.Uniform() - 0.5;
    const double v = draws.Uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + rate + 0.43);
    if (k > highest) {
      if (++misfits == kMaxPoissonRedraws) return highest;
      continue;
    }
    misfits = 0;
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    const double s = std::log(v * inv_alpha / (a / (us * us) + b));
    const double t = -rate + k * log_rate - LogGamma(k + 1);
    if (s <= t) return k;
  }
}

// Inversion: geometric gaps between successes until past n.
double BinomialByInversion(double n, double p, SampleDraws& draws) {
  const double log_q = std::log1p(-p);
  double sum = 0;
  double successes = 0;
  while (true) {
    sum += std::ceil(std::log(draws.Uniform()) / log_q);
    if (sum > n) return successes;
    successes += 1;
  }
}

// log(k!) - Stirling's approximation of it, exact for small k.
double StirlingTail(double k) {
  static constexpr double kTail[] = {0.0810614667953272,  0.0413406959554092,
                                     0.0276779256849983,  0.02079067210376509,
                                     0.0166446911898211,  0.0138761288230707,
                                     0.0118967099458917,  0.0104112652619720,
                                     0.00925546218271273, 0.00833056343336287};
  if (k <= 9) return kTail[static_cast<int>(k)];
  const double kp1_sq = (k + 1) * (k + 1);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1_sq) / kp1_sq) / (k + 1);
}

// BTRS (Kachitvichyanukul and Schmeiser 1989 / Hormann 1993), n p >= 10.
double BinomialByRejection(double n, double p, SampleDraws& draws) {
  const double sd = std::sqrt(n * p * (1 - p));
  const double b = 1.15 + 2.53 * sd;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p;
  const double c = n * p + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = p / (1 - p);
  const double alpha = (2.83 + 5.1 / b) * sd;
  const double m = std::floor((n + 1) * p);
  while (true) {
    double u = draws.Uniform();
    double v = draws.Uniform();
    u -= 0.5;
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || k > n) continue;
    v = std::log(v * alpha / (a / (us * us) + b));
    const double upper = (m + 0.5) * std::log((m + 1) / (r * (n - m + 1))) +
                         (n + 1) * std::log((n - m + 1) / (n - k + 1)) +
                         (k + 0.5) * std::log(r * (n - k + 1) / (k + 1)) + StirlingTail(m) +
                         StirlingTail(n - m) - StirlingTail(k) - StirlingTail(n - k);
    if (v <= upper) return k;
  }
}

}  // namespace

double SampleGamma(double alpha, SampleDraws& draws) {
  if (alpha < 0) return kNaN;
  if (alpha == 1.0) return -std::log1p(-draws.Uniform());
  // Below 1: a draw of Gamma(alpha + 1) times u^(1 / alpha).
  const bool boost = alpha < 1;
  const double d = alpha + (boost ? 2.0 / 3 : -1.0 / 3);
  const double c = 1.0 / 3 / std::sqrt(d);
  while (true) {
    const double x = draws.Normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = draws.Uniform();
    // The squeeze first: it spares the logs for most draws.
    if (u < 1 - 0.0331 * (x * x) * (x * x) || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) {
      double sample = d * v;
      if (boost) sample *= std::pow(draws.Uniform(), 1 / alpha);
      return sample;
    }
  }
}

double SamplePoisson(double rate, double highest, SampleDraws& draws) {
  if (std::isnan(rate)) return kNaN;
  if (rate < 10) return PoissonByProducts(rate, highest, draws);
  if (rate == kInf) return kInf;
  return PoissonByRejection(rate, highest, draws);
}

double SampleBinomial(const BinomialPlan& plan, const stateless::KeyCounter& kc, uint64_t output) {
  if (plan.kind == BinomialPlan::Kind::kConstant) return plan.value;
  double k;
  if (plan.kind == BinomialPlan::Kind::kBtrs) {
    SampleDraws draws(kc, output, 256);
    k = BinomialByRejection(plan.n, plan.p, draws);
  } else {
    SampleDraws draws(kc, output, 42);
    k = BinomialByInversion(plan.n, plan.p, draws);
  }
  return plan.mirrored ? plan.n - k : k;
}

}  // namespace internal
}  // namespace sluice
