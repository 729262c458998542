// The io family (ops/io/): checkpoint save/restore (SaveV2, RestoreV2, sharded
// checkpoints), summaries, and the file-write policy they obey.
// One row of the built-in list (ops/op_families.h) names these two
// functions (the family has no gradients); a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterIoFamilyOps(&ops));
//   RegisterIoFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_IO_IO_FAMILY_H_
#define SLUICE_OPS_IO_IO_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterIoFamilyOps(OpRegistry* ops);
// CPU kernels.
void RegisterIoFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_IO_IO_FAMILY_H_
