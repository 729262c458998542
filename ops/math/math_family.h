// The math family (ops/math/): element-wise math, reductions, MatMul and BatchMatMul,
// cumulative sums/products (scan) and run-time checks (Assert,
// CheckNumerics).
// One row of the built-in list (ops/op_families.h) names these three
// functions; a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterMathFamilyOps(&ops));
//   RETURN_IF_ERROR(RegisterMathFamilyGradients(&ops));  // after every family's ops
//   RegisterMathFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op,
// NotFound for a gradient of an unregistered op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_MATH_MATH_FAMILY_H_
#define SLUICE_OPS_MATH_MATH_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterMathFamilyOps(OpRegistry* ops);
// Gradient functions; the ops they differentiate must be registered.
absl::Status RegisterMathFamilyGradients(OpRegistry* ops);
// CPU kernels.
void RegisterMathFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_MATH_MATH_FAMILY_H_
