// The random family (ops/random/): the random number ops (random_ops.h) and
// RandomShuffle (random_shuffle_ops.h). One row of the built-in list
// (ops/op_families.h) names these two functions (no gradients); a new op
// library in this folder adds its calls here and nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterRandomFamilyOps(&ops));
//   RegisterRandomFamilyCpuKernels(&kernels);
//
// Errors: the first registration error. Thread-compatible: call during
// start-up, on registries the caller owns.
#ifndef SLUICE_OPS_RANDOM_RANDOM_FAMILY_H_
#define SLUICE_OPS_RANDOM_RANDOM_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterRandomFamilyOps(OpRegistry* ops);
void RegisterRandomFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_RANDOM_RANDOM_FAMILY_H_
