#include "ops/control_flow/control_flow_family.h"

#include "base/status_macros.h"
#include "ops/control_flow/control_flow_gradients.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/control_flow/stack_ops.h"
#include "ops/control_flow/tensor_array_ops.h"
#include "ops/control_flow/tensor_list_ops.h"

namespace sluice {

absl::Status RegisterControlFlowFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterControlFlowOps(ops));
  RETURN_IF_ERROR(RegisterStackOps(ops));
  RETURN_IF_ERROR(RegisterTensorArrayOps(ops));
  RETURN_IF_ERROR(RegisterTensorListOps(ops));
  return absl::OkStatus();
}

absl::Status RegisterControlFlowFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterControlFlowGradients(ops));
  RETURN_IF_ERROR(RegisterTensorArrayGradients(ops));
  RETURN_IF_ERROR(RegisterTensorListGradients(ops));
  return absl::OkStatus();
}

void RegisterControlFlowFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterControlFlowKernels(kernels);
  RegisterStackKernels(kernels);
  RegisterTensorArrayKernels(kernels);
  RegisterTensorListKernels(kernels);
}

void RegisterControlFlowFamilyDeviceKernels(KernelRegistry* kernels,
                                            const std::string& device_type,
                                            const std::vector<DataType>& device_types,
                                            const TensorArrayDeviceOps* device_ops) {
  RegisterControlFlowDeviceKernels(kernels, device_type, device_types);
  RegisterStackDeviceKernels(kernels, device_type, device_types);
  RegisterTensorArrayDeviceKernels(kernels, device_type, device_types, device_ops);
  RegisterTensorListDeviceKernels(kernels, device_type, device_types, device_ops);
}

}  // namespace sluice
