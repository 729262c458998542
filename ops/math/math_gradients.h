// Gradient functions of the math ops (math_ops.h, scan_ops.h, check_ops.h, batch_matmul_ops.h),
// registered into an OpRegistry that already holds their definitions. RegisterMathFamilyGradients
// (ops/math/math_family.h) calls them all; a test may call one on a private registry.
//
//   RETURN_IF_ERROR(RegisterMathGradients(&ops));
//
// Each gradient builds its nodes with the typed wrappers, in the scope it is
// given (AddGradients names it "gradients/<node>_grad"). NotFound when an op
// they differentiate is not registered yet.
//
// Registration is thread-compatible (call during start-up); the registered
// functions only build nodes in the scope they are given.
#ifndef SLUICE_OPS_MATH_MATH_GRADIENTS_H_
#define SLUICE_OPS_MATH_MATH_GRADIENTS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterMathGradients(OpRegistry* ops);
absl::Status RegisterScanAndCheckGradients(OpRegistry* ops);
absl::Status RegisterBatchMatMulGradients(OpRegistry* ops);

}  // namespace sluice

#endif  // SLUICE_OPS_MATH_MATH_GRADIENTS_H_
