#include "ops/data_flow/data_flow_family.h"

#include "base/status_macros.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/data_flow/queue_ops.h"

namespace sluice {

absl::Status RegisterDataFlowFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterQueueOps(ops));
  RETURN_IF_ERROR(RegisterDataFlowOps(ops));
  return absl::OkStatus();
}

void RegisterDataFlowFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterQueueKernels(kernels);
  RegisterDataFlowKernels(kernels);
}

}  // namespace sluice
