// One sample of a gamma, Poisson or binomial distribution, drawn as
// TensorFlow's CPU kernels draw it (in double, from an output's
// SampleDraws), so seeded, stateless and stateful draws give TensorFlow's
// values.
//
//   internal::SampleDraws draws(kc, i);
//   double g = internal::SampleGamma(alpha, draws);
//   double k = internal::SamplePoisson(rate, 2147483647.0, draws);
//   internal::BinomialPlan plan = internal::PlanBinomial<float>(count, prob);
//   double b = internal::SampleBinomial(plan, kc, i);
//
// SampleGamma: Gamma(alpha, 1). alpha == 1 is -log1p(-u); otherwise
// Marsaglia and Tsang's transformed rejection (ACM TOMS 26(3), 2000) from
// normal and uniform pairs, boosted by u^(1/alpha) for alpha < 1. alpha 0
// gives 0, alpha < 0 or NaN NaN, +inf +inf.
//
// SamplePoisson: below rate 10, Knuth's product of uniforms; above,
// Hormann's transformed rejection (PTRS, 1993). `highest`: the largest
// value the output type holds; larger draws are redrawn. A rate <= 0 gives
// 0 (after one uniform), +inf gives +inf. Where TensorFlow never returns
// (NaN; a rate far beyond `highest`) this gives NaN, and `highest` after
// 10,000 redraws in a row.
//
// Binomial(count, prob): PlanBinomial does TensorFlow's choice in the
// parameters' own type T (count * p compared with 10 in T, 1 - p in T):
// 0 for count <= 0 or p <= 0, count for p >= 1; otherwise inversion (42
// Philox calls reserved per output) or Kachitvichyanukul and Schmeiser's
// BTRS (256), of p or of 1 - p mirrored. A NaN p gives NaN; a NaN count
// NaN (TensorFlow never returns).
// Pure functions: thread-safe. Internal to ops/random.
#ifndef SLUICE_OPS_RANDOM_INTERNAL_SAMPLERS_H_
#define SLUICE_OPS_RANDOM_INTERNAL_SAMPLERS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "graph/types.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/random/internal/sample_draws.h"

namespace sluice {
namespace internal {

double SampleGamma(double alpha, SampleDraws& draws);

double SamplePoisson(double rate, double highest, SampleDraws& draws);

struct BinomialPlan {
  enum class Kind { kConstant, kInversion, kBtrs };
  Kind kind = Kind::kConstant;
  double value = 0;       // kConstant: the sample
  double n = 0, p = 0;    // otherwise: draw Binomial(n, p) ...
  bool mirrored = false;  // ... and give n minus it
};

double SampleBinomial(const BinomialPlan& plan, const stateless::KeyCounter& kc, uint64_t output);

// T's arithmetic as TensorFlow's kernel does it in T (Half: each result
// rounded to half).
template <typename T>
double ArithmeticOf(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<double>(Half::FromFloat(static_cast<float>(v)).ToFloat());
  } else {
    return static_cast<double>(static_cast<T>(v));
  }
}

// `count` and `prob` hold values of T (exact in double).
template <typename T>
BinomialPlan PlanBinomial(double count, double prob) {
  BinomialPlan plan;
  if (std::isnan(count)) {
    plan.value = std::numeric_limits<double>::quiet_NaN();
    return plan;
  }
  if (count <= 0 || prob <= 0) return plan;
  if (prob >= 1) {
    plan.value = count;
    return plan;
  }
  if (!(prob <= 0.5) && !(prob > 0.5)) {
    plan.value = std::numeric_limits<double>::quiet_NaN();
    return plan;
  }
  plan.mirrored = prob > 0.5;
  plan.n = count;
  plan.p = plan.mirrored ? ArithmeticOf<T>(ArithmeticOf<T>(1) - prob) : prob;
  plan.kind = ArithmeticOf<T>(count * plan.p) >= 10 ? BinomialPlan::Kind::kBtrs
                                                    : BinomialPlan::Kind::kInversion;
  return plan;
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_INTERNAL_SAMPLERS_H_
