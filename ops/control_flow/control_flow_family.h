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

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "ops/control_flow/tensor_array.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterControlFlowFamilyOps(OpRegistry* ops);
// Gradient functions; the ops they differentiate must be registered.
absl::Status RegisterControlFlowFamilyGradients(OpRegistry* ops);
// CPU kernels.
void RegisterControlFlowFamilyCpuKernels(KernelRegistry* kernels);
// The same kernels for a device with its own memory (a GPU backend calls
// this): loops, stacks and TensorArrays with values of `device_types` in
// device memory and counters, predicates and handles in host memory
// (control_flow_ops.h, stack_ops.h, tensor_array_ops.h say which).
void RegisterControlFlowFamilyDeviceKernels(KernelRegistry* kernels,
                                            const std::string& device_type,
                                            const std::vector<DataType>& device_types,
                                            const TensorArrayDeviceOps* device_ops);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_FAMILY_H_
