// The control flow family (ops/control_flow/): Switch/Merge/loops, Cond and WhileLoop builders,
// stacks and tensor arrays.
// One row of the built-in list (ops/op_families.h) names these three
// functions; a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterControlFlowFamilyOps(&ops));
//   RETURN_IF_ERROR(RegisterControlFlowFamilyGradients(&ops));  // after every family's ops
//   RegisterControlFlowFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op,
// NotFound for a gradient of an unregistered op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_FAMILY_H_
#define SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterControlFlowFamilyOps(OpRegistry* ops);
// Gradient functions; the ops they differentiate must be registered.
absl::Status RegisterControlFlowFamilyGradients(OpRegistry* ops);
// CPU kernels.
void RegisterControlFlowFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_FAMILY_H_
