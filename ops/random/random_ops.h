// Random ops: RandomUniform, RandomStandardNormal, TruncatedNormal and
// RandomUniformInt (TensorFlow's names and attrs), their CPU kernels and typed
// graph-building wrappers.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output w0 = ops::TruncatedNormal(s, {784, 1024}, DT_FLOAT, {.seed = 42});
//   Output u = ops::RandomUniform(s, {3}, DT_DOUBLE);        // nondeterministic
//   Output k = ops::RandomUniformInt(s, {10}, 0, 6, {.seed = 1});
//
// Seeding: when `seed` or `seed2` is nonzero, each node's kernel draws from
// its own generator seeded from (seed, seed2), advanced by every run, so the
// same graph yields the same sequence of values in every session and process.
// When both are zero the generator is seeded from std::random_device.
// RandomUniform draws from [0, 1); RandomStandardNormal from N(0, 1);
// TruncatedNormal from N(0, 1) redrawing values beyond two standard
// deviations; RandomUniformInt from [minval, maxval).
//
// Errors: InvalidArgument for a shape that is not a vector of non-negative
// integers, or minval >= maxval. Thread-safety: kernels serialize draws on a
// per-kernel mutex; graph building is thread-compatible.
#ifndef SLUICE_OPS_RANDOM_RANDOM_OPS_H_
#define SLUICE_OPS_RANDOM_RANDOM_OPS_H_

#include <cstdint>
#include "base/source_location.h"

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterRandomOps(OpRegistry* ops);  // with RegisterStatelessRandomOps
absl::Status RegisterStatelessRandomOps(OpRegistry* ops);
void RegisterRandomKernels(KernelRegistry* kernels);

namespace ops {

struct RandomAttrs {
  int64_t seed = 0;
  int64_t seed2 = 0;
};

// `shape` is an int32 or int64 vector; `dtype` half, bfloat16, float or double.
Output RandomUniform(const Scope& scope, Input shape, DataType dtype, const RandomAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output RandomStandardNormal(const Scope& scope, Input shape, DataType dtype,
                            const RandomAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());
Output TruncatedNormal(const Scope& scope, Input shape, DataType dtype,
                       const RandomAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());
// TensorFlow's stateless draws (tf.random.stateless_uniform / _normal, and
// Keras 3's dropout through them): a seed of two int32 or int64 words gives
// a Philox key and counter (StatelessRandomGetKeyCounter), and those give
// the values, TensorFlow's bit for bit (normal draws with the same C
// library's sin, cos and log as TensorFlow's). Half and
// bfloat16 as TensorFlow: 10 and 7 random bits. Truncated normal draws keep
// values within two standard deviations; integer draws take minval plus
// Philox's bits modulo the range (int32, int64), or all bits (full-range
// draws, also uint32 and uint64). Only Philox (alg 1, and 3: the automatic
// choice) is taken; ThreeFry (2) is Unimplemented.
struct StatelessKeyCounter {
  Output key;      // uint64 [1]
  Output counter;  // uint64 [2]
};
StatelessKeyCounter StatelessRandomGetKeyCounter(
    const Scope& scope, Input seed, std::source_location loc = std::source_location::current());
Output StatelessRandomUniformV2(const Scope& scope, Input shape, const StatelessKeyCounter& kc,
                                DataType dtype = DT_FLOAT,
                                std::source_location loc = std::source_location::current());
Output StatelessRandomNormalV2(const Scope& scope, Input shape, const StatelessKeyCounter& kc,
                               DataType dtype = DT_FLOAT,
                               std::source_location loc = std::source_location::current());
Output StatelessTruncatedNormalV2(const Scope& scope, Input shape, const StatelessKeyCounter& kc,
                                  DataType dtype = DT_FLOAT,
                                  std::source_location loc = std::source_location::current());
// minval and maxval: int32 or int64 scalars of the output's type.
Output StatelessRandomUniformIntV2(const Scope& scope, Input shape, const StatelessKeyCounter& kc,
                                   Input minval, Input maxval,
                                   std::source_location loc = std::source_location::current());
Output StatelessRandomUniformFullIntV2(const Scope& scope, Input shape,
                                       const StatelessKeyCounter& kc, DataType dtype = ::tensorflow::DT_UINT64,
                                       std::source_location loc = std::source_location::current());

// Integers in [minval, maxval); minval and maxval are int32 or int64 scalars.
Output RandomUniformInt(const Scope& scope, Input shape, Input minval, Input maxval,
                        const RandomAttrs& attrs = {},
                        std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_RANDOM_OPS_H_
