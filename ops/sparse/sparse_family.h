// The sparse family (ops/op_families.h): sparse_segment_ops.h and
// sparse_tensor_ops.h.
#ifndef SLUICE_OPS_SPARSE_SPARSE_FAMILY_H_
#define SLUICE_OPS_SPARSE_SPARSE_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSparseFamilyOps(OpRegistry* ops);
absl::Status RegisterSparseFamilyGradients(OpRegistry* ops);
void RegisterSparseFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_SPARSE_FAMILY_H_
