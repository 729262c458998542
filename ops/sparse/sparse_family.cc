#include "ops/sparse/sparse_family.h"

#include "ops/sparse/sparse_segment_ops.h"

namespace sluice {

absl::Status RegisterSparseFamilyOps(OpRegistry* ops) { return RegisterSparseSegmentOps(ops); }

absl::Status RegisterSparseFamilyGradients(OpRegistry* ops) {
  return RegisterSparseSegmentGradients(ops);
}

void RegisterSparseFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterSparseSegmentKernels(kernels);
}

}  // namespace sluice
