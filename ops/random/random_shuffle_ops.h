// RandomShuffle (TensorFlow's name, input and attrs: value: T, seed, seed2):
// the rows of a tensor (along its first dimension) in a random order. CPU
// kernel for every dtype a tensor holds (strings too); no gradient, as in
// TensorFlow.
//
//   Output shuffled = ops::RandomShuffle(s, filenames, {.seed = 7});
//
// Seeding as the other random ops (ops/random/random_ops.h): with seed or
// seed2 nonzero each node's kernel draws from its own generator seeded from
// them and advanced by every run, so a seeded graph repeats its sequence of
// permutations in every session; both zero seed from std::random_device.
// The permutations are not TensorFlow's (it draws from Philox). A scalar is
// returned as is. Thread-safety: draws serialize on a per-kernel mutex.
// Ownership: nodes belong to the scope's graph.
#ifndef SLUICE_OPS_RANDOM_RANDOM_SHUFFLE_OPS_H_
#define SLUICE_OPS_RANDOM_RANDOM_SHUFFLE_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterRandomShuffleOps(OpRegistry* ops);
void RegisterRandomShuffleKernels(KernelRegistry* kernels);

namespace ops {

struct RandomShuffleAttrs {
  int64_t seed = 0;
  int64_t seed2 = 0;
};
Output RandomShuffle(const Scope& scope, Input value, const RandomShuffleAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_RANDOM_SHUFFLE_OPS_H_
