#include "ops/sparse/sparse_family.h"

#include "ops/sparse/sparse_segment_ops.h"
#include "ops/sparse/sparse_tensor_ops.h"

namespace sluice {

absl::Status RegisterSparseFamilyOps(OpRegistry* ops) {
  absl::Status s = RegisterSparseSegmentOps(ops);
  return s.ok() ? RegisterSparseTensorOps(ops) : s;
}

absl::Status RegisterSparseFamilyGradients(OpRegistry* ops) {
  absl::Status s = RegisterSparseSegmentGradients(ops);
  return s.ok() ? RegisterSparseTensorGradients(ops) : s;
}

void RegisterSparseFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterSparseSegmentKernels(kernels);
  RegisterSparseTensorKernels(kernels);
}

}  // namespace sluice
