// Draws from gamma, Poisson and binomial distributions (tf.random.gamma,
// tf.random.poisson, tf.random.stateless_gamma / _poisson / _binomial and
// tf.random.Generator.binomial), under TensorFlow's names, inputs and
// attrs:
//   RandomGamma(shape, alpha)              seed, seed2 attrs
//   RandomPoisson(shape, rate), RandomPoissonV2(shape, rate)
//   StatelessRandomGammaV2(shape, seed, alpha)
//   StatelessRandomGammaV3(shape, key, counter, alg, alpha)
//   StatelessRandomPoisson(shape, seed, lam)
//   StatelessRandomBinomial(shape, seed, counts, probs)
//   StatefulRandomBinomial(resource, algorithm, shape, counts, probs)
// The seeded forms' output is shape ++ the parameter's shape (one draw of
// `shape` per parameter); the stateless and stateful forms' output is
// `shape`, whose trailing dimensions the parameters broadcast to. Each
// output draws from its own run of 256 Philox calls of the op's key and
// counter, in double, by TensorFlow's algorithms (internal/samplers.h),
// so a seeded or stateless draw gives TensorFlow's values. CPU kernels
// for half, float and double (gamma), and half, float, double, int32 and
// int64 rates, counts and outputs (Poisson, binomial).
//
// RandomGamma and StatelessRandomGammaV2/V3 have TensorFlow's gradient
// w.r.t. alpha: the implicit reparameterization d sample / d alpha
// (RandomGammaGrad, ops/math/incomplete_functions.h) times the incoming gradient,
// summed over the sample dimensions. The others have none.
//
//   Output g = ops::RandomGamma(s, ops::Const(s, {100}), alpha, {.seed = 7});
//
// Errors (InvalidArgument): a shape that is not a vector of non-negative
// integers, an empty parameter tensor for the seeded forms, parameters that
// do not broadcast to the shape, a bad seed, key, counter or algorithm.
// Thread-safety: as Scope; seeded kernels reserve their draws under a mutex.
#ifndef SLUICE_OPS_RANDOM_DISTRIBUTION_OPS_H_
#define SLUICE_OPS_RANDOM_DISTRIBUTION_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/random/random_ops.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDistributionOps(OpRegistry* ops);
void RegisterDistributionKernels(KernelRegistry* kernels);

namespace ops {

Output RandomGamma(const Scope& scope, Input shape, Input alpha, const RandomAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());
// `dtype`: the output's type; the rate's is its own.
Output RandomPoissonV2(const Scope& scope, Input shape, Input rate, DataType dtype = DT_INT64,
                       const RandomAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());
Output StatelessRandomGammaV2(const Scope& scope, Input shape, Input seed, Input alpha,
                              std::source_location loc = std::source_location::current());
Output StatelessRandomPoisson(const Scope& scope, Input shape, Input seed, Input lam,
                              DataType dtype, std::source_location loc = std::source_location::current());
Output StatelessRandomBinomial(const Scope& scope, Input shape, Input seed, Input counts,
                               Input probs, DataType dtype = DT_INT64,
                               std::source_location loc = std::source_location::current());
// `resource`: an int64 RNG state variable (ops/random/stateful_random_ops.h).
Output StatefulRandomBinomial(const Scope& scope, Input resource, Input shape, Input counts,
                              Input probs, DataType dtype = DT_INT64, int64_t algorithm = 1,
                              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_DISTRIBUTION_OPS_H_
