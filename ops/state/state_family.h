// The state family (ops/state/): reference variables (Variable, Assign*),
// resource variables and the Scatter* updates.
// One row of the built-in list (ops/op_families.h) names these two
// functions (the family has no gradients); a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterStateFamilyOps(&ops));
//   RegisterStateFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_STATE_STATE_FAMILY_H_
#define SLUICE_OPS_STATE_STATE_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterStateFamilyOps(OpRegistry* ops);
// CPU kernels.
void RegisterStateFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_STATE_STATE_FAMILY_H_
