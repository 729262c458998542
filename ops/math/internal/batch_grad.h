// The last step of the gradients of ops whose batch dimensions broadcast
// (BatchMatMulV2, MatrixTriangularSolve): each operand's gradient summed
// over the batch dimensions it was broadcast along and reshaped to the
// operand, as TensorFlow's math_grad.py and linalg_grad.py do. Skipped when
// both batch shapes are known and equal.
//
//   internal::SumOverBroadcastBatch(s, x, y, &gx, &gy);
//
// Internal to ops/. Builds nodes in `s`; errors stay in `s`.
#ifndef SLUICE_OPS_MATH_INTERNAL_BATCH_GRAD_H_
#define SLUICE_OPS_MATH_INTERNAL_BATCH_GRAD_H_

#include "graph/scope.h"

namespace sluice {
namespace internal {

void SumOverBroadcastBatch(const Scope& s, const Output& x, const Output& y, Output* gx,
                           Output* gy);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_BATCH_GRAD_H_
