// Gradients of FusedBatchNorm, V2 and V3 (NHWC), from the batch-norm
// backward formulas TensorFlow's FusedBatchNormGrad kernels compute, written
// with math ops. With r = 1 / sqrt(var + epsilon), xhat = (x - mean) * r and
// means over N, H, W:
//   training:  dx = scale * r * (dy - mean(dy) - xhat * mean(dy * xhat)),
//              mean and var being the batch's (reserve_space_1 and _2);
//   inference: dx = scale * r * dy, with the mean and variance inputs;
//   both:      dscale = sum(dy * xhat), doffset = sum(dy).
// The mean and variance inputs get no gradient (as in TensorFlow).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/nn/batch_norm_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;

absl::StatusOr<std::vector<Output>> FusedBatchNormGrad(const Scope& s, const Node& node,
                                                       absl::Span<const Output> g) {
  std::vector<Output> grads(5);
  if (!g[0].valid()) return grads;
  ASSIGN_OR_RETURN(std::string format, node.GetAttr<std::string>("data_format"));
  if (format != "NHWC") {
    return absl::UnimplementedError(absl::StrCat("the gradient of ", node.DebugName(),
                                                 " with data_format ", format));
  }
  ASSIGN_OR_RETURN(bool training, node.GetAttr<bool>("is_training"));
  ASSIGN_OR_RETURN(float epsilon, node.GetAttr<float>("epsilon"));
  const Output x = InputOf(node, 0);
  const Output scale = InputOf(node, 1);
  const Output mean = training ? OutputOf(node, 3) : InputOf(node, 3);
  const Output var = training ? OutputOf(node, 4) : InputOf(node, 4);
  const Output dy = g[0];
  const Input axes = {0, 1, 2};
  Output r = ops::Rsqrt(s, ops::Add(s, var, epsilon));
  Output xhat = ops::Mul(s, ops::Sub(s, x, mean), r);
  Output dy_xhat = ops::Mul(s, dy, xhat);
  Output inner = dy;
  if (training) {
    inner = ops::Sub(s, ops::Sub(s, dy, ops::Mean(s, dy, axes)),
                     ops::Mul(s, xhat, ops::Mean(s, dy_xhat, axes)));
  }
  grads[0] = ops::Mul(s, ops::Mul(s, scale, r), inner);
  grads[1] = ops::Sum(s, dy_xhat, axes);
  grads[2] = ops::Sum(s, dy, axes);
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterBatchNormGradients(OpRegistry* ops) {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, FusedBatchNormGrad));
  }
  // The backward ops (ops/nn/batch_norm_grad_ops.h): no second-order gradient
  // through them; Sluice's own gradient above uses math ops instead.
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
