#include "ops/sparse/sparse_family.h"

#include "base/status_macros.h"
#include "ops/sparse/edit_distance_ops.h"
#include "ops/sparse/segment_reduction_ops.h"
#include "ops/sparse/sparse_segment_ops.h"
#include "ops/sparse/sparse_tensor_ops.h"

namespace sluice {

absl::Status RegisterSparseFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterSparseSegmentOps(ops));
  RETURN_IF_ERROR(RegisterSegmentReductionOps(ops));
  RETURN_IF_ERROR(RegisterEditDistanceOps(ops));
  return RegisterSparseTensorOps(ops);
}

absl::Status RegisterSparseFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterSparseSegmentGradients(ops));
  RETURN_IF_ERROR(RegisterSegmentReductionGradients(ops));
  return RegisterSparseTensorGradients(ops);
}

void RegisterSparseFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterSparseSegmentKernels(kernels);
  RegisterSegmentReductionKernels(kernels);
  RegisterSparseTensorKernels(kernels);
  RegisterEditDistanceKernels(kernels);
}

}  // namespace sluice
