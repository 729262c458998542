// The data flow family (ops/data_flow/): queues (FIFOQueueV2, RandomShuffleQueueV2)
// and the synchronous-training resources (gradient accumulators, token
// queue).
// One row of the built-in list (ops/op_families.h) names these two
// functions (the family has no gradients); a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterDataFlowFamilyOps(&ops));
//   RegisterDataFlowFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_DATA_FLOW_DATA_FLOW_FAMILY_H_
#define SLUICE_OPS_DATA_FLOW_DATA_FLOW_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterDataFlowFamilyOps(OpRegistry* ops);
// CPU kernels.
void RegisterDataFlowFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_DATA_FLOW_FAMILY_H_
