#include "ops/state/state_family.h"

#include "base/status_macros.h"
#include "ops/state/resource_gather_nd_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/scatter_nd_ops.h"
#include "ops/state/scatter_ops.h"
#include "ops/state/state_ops.h"
#include "ops/state/variable_slice_ops.h"

namespace sluice {

absl::Status RegisterStateFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterResourceVariableOps(ops));
  RETURN_IF_ERROR(RegisterResourceGatherNdOps(ops));
  RETURN_IF_ERROR(RegisterStateOps(ops));
  RETURN_IF_ERROR(RegisterScatterOps(ops));
  RETURN_IF_ERROR(RegisterScatterNdOps(ops));
  RETURN_IF_ERROR(RegisterVariableSliceOps(ops));
  return absl::OkStatus();
}

void RegisterStateFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterResourceVariableKernels(kernels);
  RegisterStateKernels(kernels);
  RegisterScatterKernels(kernels);
  RegisterScatterNdKernels(kernels);
  RegisterVariableSliceKernels(kernels);
}

}  // namespace sluice
