// The data family (ops/data/): tf.data's dataset and iterator ops
// (dataset_ops.h) with their CPU kernels, and the C++ builder over them
// (dataset_builder.h). One row of the built-in list (ops/op_families.h)
// names these two functions (the family has no gradients).
//
//   RETURN_IF_ERROR(RegisterDataFamilyOps(&ops));
//   RegisterDataFamilyCpuKernels(&kernels);
//
// Errors: the first registration error. Thread-compatible: call during
// start-up, on registries the caller owns.
#ifndef SLUICE_OPS_DATA_DATA_FAMILY_H_
#define SLUICE_OPS_DATA_DATA_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDataFamilyOps(OpRegistry* ops);
void RegisterDataFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_DATA_FAMILY_H_
