// Gradients of BatchMatMul and BatchMatMulV2 (TensorFlow's math_grad.py):
// the two products of the incoming gradient with the other operand that
// undo each adjoint, then, for V2, a sum over the batch dimensions an
// operand was broadcast along (internal/batch_grad.h).
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/math/math_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/internal/batch_grad.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;

absl::StatusOr<std::vector<Output>> BatchMatMulGrad(const Scope& s, const Node& node,
                                                    absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  ASSIGN_OR_RETURN(bool adj_x, node.GetAttr<bool>("adj_x"));
  ASSIGN_OR_RETURN(bool adj_y, node.GetAttr<bool>("adj_y"));
  const Output x = InputOf(node, 0);
  const Output y = InputOf(node, 1);
  const Output& dz = g[0];
  Output gx, gy;
  if (!adj_x && !adj_y) {
    gx = ops::BatchMatMulV2(s, dz, y, {.adj_y = true});
    gy = ops::BatchMatMulV2(s, x, dz, {.adj_x = true});
  } else if (!adj_x && adj_y) {
    gx = ops::BatchMatMulV2(s, dz, y);
    gy = ops::BatchMatMulV2(s, dz, x, {.adj_x = true});
  } else if (adj_x && !adj_y) {
    gx = ops::BatchMatMulV2(s, y, dz, {.adj_y = true});
    gy = ops::BatchMatMulV2(s, x, dz);
  } else {
    gx = ops::BatchMatMulV2(s, y, dz, {.adj_x = true, .adj_y = true});
    gy = ops::BatchMatMulV2(s, dz, x, {.adj_x = true, .adj_y = true});
  }
  if (node.op() == "BatchMatMulV2") internal::SumOverBroadcastBatch(s, x, y, &gx, &gy);
  grads[0] = gx;
  grads[1] = gy;
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterBatchMatMulGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("BatchMatMul", BatchMatMulGrad));
  RETURN_IF_ERROR(ops->SetGradient("BatchMatMulV2", BatchMatMulGrad));
  return absl::OkStatus();
}

}  // namespace sluice
