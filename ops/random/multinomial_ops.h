// Categorical draws (tf.random.categorical, tf.random.stateless_categorical,
// tf.compat.v1.multinomial): Multinomial and StatelessMultinomial, under
// TensorFlow's names, inputs and attrs. Each row of logits [batch,
// classes] gives num_samples class ids [batch, num_samples] (output_dtype
// int32 or int64), drawn as TensorFlow's CPU kernel draws them: an
// unnormalized CDF of exp(logit - max) in double over the finite logits
// (a non-finite logit is never drawn), searched for a uniform double times
// its total. The uniforms come from one Philox stream, two words each, row
// after row:
//   StatelessMultinomial  keyed by the seed input as TensorFlow's stateless
//                         ops (ops/gpu/stateless_philox.h FromSeed)
//   Multinomial           TensorFlow's generator of the seed and seed2
//                         attrs (key from seed, counter from seed2; both 0:
//                         a random seed), advanced by what each run reserves
// so a seeded draw gives TensorFlow's ids bit for bit as long as TensorFlow
// runs it as one shard (batch x (num_samples log2(classes) + classes) x 50
// under 10,000; beyond that TensorFlow splits rows by its thread count and
// its own ids change with it). CPU kernels for float and double logits; no
// gradient (as TensorFlow). Errors (InvalidArgument, TensorFlow's texts):
// logits not a matrix, no classes, num_samples not a non-negative scalar, a
// seed not of shape [2].
//
//   Output ids = ops::StatelessMultinomial(s, logits, ops::Const(s, 5), seed);
//
// Thread-safety: as Scope; Multinomial's generator advances under a mutex.
#ifndef SLUICE_OPS_RANDOM_MULTINOMIAL_OPS_H_
#define SLUICE_OPS_RANDOM_MULTINOMIAL_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterMultinomialOps(OpRegistry* ops);
void RegisterMultinomialKernels(KernelRegistry* kernels);

namespace ops {

Output Multinomial(const Scope& scope, Input logits, Input num_samples, int64_t seed = 0,
                   int64_t seed2 = 0, DataType output_dtype = DT_INT64,
                   std::source_location loc = std::source_location::current());
Output StatelessMultinomial(const Scope& scope, Input logits, Input num_samples, Input seed,
                            DataType output_dtype = DT_INT64,
                            std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_MULTINOMIAL_OPS_H_
