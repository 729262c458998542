// Gradients of the activations in ops/nn/activation_ops.h, written as
// TensorFlow writes them (tensorflow/python/ops/nn_grad.py): each emits its
// helper op from ops/nn/activation_grad_ops.h (Relu6Grad, EluGrad, ...), as a
// TensorFlow-differentiated graph file holds them. At a kink (0, and 6 for
// Relu6) the gradient is that of the lower side, as TensorFlow's kernels
// (features > 0) give it. The helper ops have gradients too (second order,
// TensorFlow's _Relu6GradGrad, _EluGradGrad, ...): each is linear in its
// incoming gradient, so that part is the same op applied to the new one.
#include <vector>

#include "base/status_macros.h"
#include "ops/nn/activation_grad_ops.h"
#include "ops/nn/activation_ops.h"
#include "ops/array/array_ops.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

GradResult Done(const Scope& s, std::vector<Output> grads) {
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult Relu6Grad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::Relu6Grad(s, g[0], InputOf(node, 0))});
}
GradResult EluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::EluGrad(s, g[0], OutputOf(node))});
}
GradResult SeluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::SeluGrad(s, g[0], OutputOf(node))});
}
GradResult LeakyReluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(float alpha, node.GetAttr<float>("alpha"));
  return Done(s, {ops::LeakyReluGrad(s, g[0], InputOf(node, 0), {.alpha = alpha})});
}
GradResult SoftplusGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::SoftplusGrad(s, g[0], InputOf(node, 0))});
}
GradResult SoftsignGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::SoftsignGrad(s, g[0], InputOf(node, 0))});
}
GradResult L2LossGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::Mul(s, InputOf(node, 0), g[0])});
}

// Second order: node = XGrad(dy, v); g[0] is the gradient of its output.
GradResult Relu6GradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 1);
  return Done(s, {ops::Relu6Grad(s, g[0], x), ops::ZerosLike(s, x)});
}
GradResult LeakyReluGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(float alpha, node.GetAttr<float>("alpha"));
  const Output x = InputOf(node, 1);
  return Done(s, {ops::LeakyReluGrad(s, g[0], x, {.alpha = alpha}), ops::ZerosLike(s, x)});
}
// EluGrad and SeluGrad are dy * (y + c) below 0: d/dy there is dy.
Output BelowZeroSlope(const Scope& s, const Node& node, const Output& gg) {
  const Output y = InputOf(node, 1);
  return ops::SelectV2(s, ops::Less(s, y, 0.0), ops::Mul(s, gg, InputOf(node, 0)),
                       ops::ZerosLike(s, y));
}
GradResult EluGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::EluGrad(s, g[0], InputOf(node, 1)), BelowZeroSlope(s, node, g[0])});
}
GradResult SeluGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, {ops::SeluGrad(s, g[0], InputOf(node, 1)), BelowZeroSlope(s, node, g[0])});
}
// dy * sigmoid(x): d/dx = dy * sigmoid(x) * (1 - sigmoid(x)).
GradResult SoftplusGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output dy = InputOf(node, 0), x = InputOf(node, 1);
  Output dx = ops::SigmoidGrad(s, ops::Sigmoid(s, x), ops::Mul(s, g[0], dy));
  return Done(s, {ops::SoftplusGrad(s, g[0], x), dx});
}
// dy / (1 + |x|)^2: d/dx = -2 dy sign(x) / (1 + |x|)^3.
GradResult SoftsignGradGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output dy = InputOf(node, 0), x = InputOf(node, 1);
  Output d = ops::Add(s, ops::Abs(s, x), 1.0);
  Output num = ops::Mul(s, ops::Mul(s, g[0], dy), ops::Mul(s, ops::Sign(s, x), -2.0));
  Output dx = ops::RealDiv(s, num, ops::Mul(s, ops::Square(s, d), d));
  return Done(s, {ops::SoftsignGrad(s, g[0], x), dx});
}

}  // namespace

absl::Status RegisterActivationGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Relu6", Relu6Grad));
  RETURN_IF_ERROR(ops->SetGradient("Elu", EluGrad));
  RETURN_IF_ERROR(ops->SetGradient("Selu", SeluGrad));
  RETURN_IF_ERROR(ops->SetGradient("LeakyRelu", LeakyReluGrad));
  RETURN_IF_ERROR(ops->SetGradient("Softplus", SoftplusGrad));
  RETURN_IF_ERROR(ops->SetGradient("Softsign", SoftsignGrad));
  RETURN_IF_ERROR(ops->SetGradient("L2Loss", L2LossGrad));
  RETURN_IF_ERROR(ops->SetGradient("Relu6Grad", Relu6GradGrad));
  RETURN_IF_ERROR(ops->SetGradient("EluGrad", EluGradGrad));
  RETURN_IF_ERROR(ops->SetGradient("SeluGrad", SeluGradGrad));
  RETURN_IF_ERROR(ops->SetGradient("LeakyReluGrad", LeakyReluGradGrad));
  RETURN_IF_ERROR(ops->SetGradient("SoftplusGrad", SoftplusGradGrad));
  RETURN_IF_ERROR(ops->SetGradient("SoftsignGrad", SoftsignGradGrad));
  return absl::OkStatus();
}

}  // namespace sluice
