// The array family (ops/array/): shapes, slicing, concatenation, layout (transpose,
// padding, one-hot), index ops (gather/scatter-nd, unique, top-k, stitch) and
// space/batch rearrangements.
// One row of the built-in list (ops/op_families.h) names these three
// functions; a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterArrayFamilyOps(&ops));
//   RETURN_IF_ERROR(RegisterArrayFamilyGradients(&ops));  // after every family's ops
//   RegisterArrayFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op,
// NotFound for a gradient of an unregistered op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_ARRAY_ARRAY_FAMILY_H_
#define SLUICE_OPS_ARRAY_ARRAY_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterArrayFamilyOps(OpRegistry* ops);
// Gradient functions; the ops they differentiate must be registered.
absl::Status RegisterArrayFamilyGradients(OpRegistry* ops);
// CPU kernels.
void RegisterArrayFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_FAMILY_H_
