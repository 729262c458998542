// tf.random.Generator's ops: draws and skips over an RNG state held in a
// resource variable (int64 [3] for Philox: the 128-bit counter's low and
// high words, then the key), under TensorFlow's names, inputs and attrs.
//   RngReadAndSkip(resource, alg: int32, delta: uint64) -> value: int64 [3]
//       the state before, then the counter advanced by delta * 256: what a
//       TF 2.5+ Generator runs before each Stateless*V2 draw
//   RngSkip(resource, algorithm: int64, delta: int64)   the advance alone
//   StatefulUniform, StatefulStandardNormalV2, StatefulTruncatedNormal
//       (resource, algorithm: int64, shape) -> output: dtype (half,
//       bfloat16, float, double), StatefulUniformInt (+ minval, maxval;
//       int32, int64), StatefulUniformFullInt (int32/64, uint32/64): the
//       draws of older Generators; StatefulStandardNormal (resource, shape),
//       the first form, whose state starts with the algorithm
//   NonDeterministicInts(shape) -> output: dtype (int32/64, uint32/64) from
//       the operating system's entropy
// A draw of n values uses the state's key and counter exactly as the
// stateless draws use theirs (ops/random/random_ops.h), so the values are
// TensorFlow's bit for bit, and advances the counter by n * 256, as
// TensorFlow does. Algorithms: Philox (1) and auto-select (3, which is
// Philox); ThreeFry (2) is Unimplemented. The state is updated under the
// variable's lock, copy-on-write (a value read before keeps its bits).
//
//   Output state = ops::VarHandleOp(s, DT_INT64, TensorShape({3}));   // + its initializer
//   Output u = ops::StatefulUniform(s, state, {2, 3}, DT_FLOAT);
//
// Errors: InvalidArgument for a state that is not int64 of rank 1 with
// room for the algorithm's words, an unknown algorithm, a bad shape or
// bounds; FailedPrecondition for an uninitialized state variable. No
// gradients. Thread-safety: as Scope; kernels lock the state variable.
#ifndef SLUICE_OPS_RANDOM_STATEFUL_RANDOM_OPS_H_
#define SLUICE_OPS_RANDOM_STATEFUL_RANDOM_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/gpu/stateless_philox.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStatefulRandomOps(OpRegistry* ops);
void RegisterStatefulRandomKernels(KernelRegistry* kernels);

namespace internal {

// For other draws over an RNG state (StatefulRandomBinomial:
// ops/random/distribution_ops.h): with the state variable at input 0 and
// the algorithm at input 1, checks the algorithm and returns the Philox key
// and counter, advancing the counter by `advance` under the variable's lock.
absl::StatusOr<stateless::KeyCounter> ReadAndAdvanceRngState(OpKernelContext* ctx,
                                                             uint64_t advance);

}  // namespace internal

namespace ops {

// algorithm: 1 (Philox) or 3 (auto-select).
Output RngReadAndSkip(const Scope& scope, Input resource, Input alg, Input delta,
                      std::source_location loc = std::source_location::current());
Node* RngSkip(const Scope& scope, Input resource, Input algorithm, Input delta,
              std::source_location loc = std::source_location::current());
Output StatefulUniform(const Scope& scope, Input resource, Input shape, DataType dtype,
                       int64_t algorithm = 1,
                       std::source_location loc = std::source_location::current());
Output StatefulStandardNormalV2(const Scope& scope, Input resource, Input shape, DataType dtype,
                                int64_t algorithm = 1,
                                std::source_location loc = std::source_location::current());
Output StatefulTruncatedNormal(const Scope& scope, Input resource, Input shape, DataType dtype,
                               int64_t algorithm = 1,
                               std::source_location loc = std::source_location::current());
Output StatefulUniformInt(const Scope& scope, Input resource, Input shape, Input minval,
                          Input maxval, int64_t algorithm = 1,
                          std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_STATEFUL_RANDOM_OPS_H_
