#include "ops/array/array_family.h"

#include "base/status_macros.h"
#include "ops/array/array_gradients.h"
#include "ops/array/array_layout_ops.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_rearrange_ops.h"
#include "ops/array/broadcast_ops.h"
#include "ops/array/compat_array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/array/legacy_top_k_ops.h"
#include "ops/array/matrix_diag_ops.h"
#include "ops/array/sorted_search_ops.h"
#include "ops/array/unique_ops.h"

namespace sluice {

absl::Status RegisterArrayFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterArrayOps(ops));
  RETURN_IF_ERROR(RegisterArrayLayoutOps(ops));
  RETURN_IF_ERROR(RegisterIndexOps(ops));
  RETURN_IF_ERROR(RegisterArrayRearrangeOps(ops));
  RETURN_IF_ERROR(RegisterBroadcastOps(ops));
  RETURN_IF_ERROR(RegisterUniqueOps(ops));
  RETURN_IF_ERROR(RegisterMatrixDiagOps(ops));
  RETURN_IF_ERROR(RegisterLegacyTopKOps(ops));
  RETURN_IF_ERROR(RegisterSortedSearchOps(ops));
  RETURN_IF_ERROR(RegisterCompatArrayOps(ops));
  return absl::OkStatus();
}

absl::Status RegisterArrayFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterArrayGradients(ops));
  RETURN_IF_ERROR(RegisterArrayLayoutGradients(ops));
  RETURN_IF_ERROR(RegisterIndexGradients(ops));
  RETURN_IF_ERROR(RegisterArrayRearrangeGradients(ops));
  RETURN_IF_ERROR(RegisterBroadcastGradients(ops));
  RETURN_IF_ERROR(RegisterUniqueGradients(ops));
  RETURN_IF_ERROR(RegisterMatrixDiagGradients(ops));
  RETURN_IF_ERROR(RegisterCompatArrayGradients(ops));
  return absl::OkStatus();
}

void RegisterArrayFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterArrayKernels(kernels);
  RegisterArrayLayoutKernels(kernels);
  RegisterIndexKernels(kernels);
  RegisterArrayRearrangeKernels(kernels);
  RegisterBroadcastKernels(kernels);
  RegisterUniqueKernels(kernels);
  RegisterMatrixDiagKernels(kernels);
  RegisterSortedSearchKernels(kernels);
  RegisterCompatArrayKernels(kernels);
}

}  // namespace sluice
