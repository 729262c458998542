// Gradients of the activations in ops/activation_ops.h (TensorFlow's
// formulas, built from math ops): each passes the incoming gradient where
// its op is the identity and scales it elsewhere. At a kink (0, and 6 for
// Relu6) the gradient is that of the lower side, as TensorFlow's kernels
// (features > 0) give it.
#include <vector>

#include "base/status_macros.h"
#include "ops/activation_ops.h"
#include "ops/array_ops.h"
#include "ops/gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

GradResult Done(const Scope& s, const Output& grad) {
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{grad};
}

Output Positive(const Scope& s, const Node& node) { return ops::Greater(s, InputOf(node, 0), 0.0); }

GradResult Relu6Grad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output x = InputOf(node, 0);
  Output inside = ops::LogicalAnd(s, ops::Greater(s, x, 0.0), ops::Less(s, x, 6.0));
  return Done(s, ops::SelectV2(s, inside, g[0], ops::ZerosLike(s, g[0])));
}

GradResult EluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  // e^x = y + 1 below 0.
  return Done(s, ops::SelectV2(s, Positive(s, node), g[0],
                               ops::Mul(s, g[0], ops::Add(s, OutputOf(node), 1.0))));
}

GradResult SeluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  // scale * alpha * e^x = y + scale * alpha below 0.
  return Done(s, ops::SelectV2(s, Positive(s, node), ops::Mul(s, g[0], kSeluScale),
                               ops::Mul(s, g[0], ops::Add(s, OutputOf(node), kSeluScale * kSeluAlpha))));
}

GradResult LeakyReluGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(float alpha, node.GetAttr<float>("alpha"));
  return Done(s, ops::SelectV2(s, Positive(s, node), g[0],
                               ops::Mul(s, g[0], static_cast<double>(alpha))));
}

GradResult L2LossGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return Done(s, ops::Mul(s, InputOf(node, 0), g[0]));
}

}  // namespace

absl::Status RegisterActivationGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("Relu6", Relu6Grad));
  RETURN_IF_ERROR(ops->SetGradient("Elu", EluGrad));
  RETURN_IF_ERROR(ops->SetGradient("Selu", SeluGrad));
  RETURN_IF_ERROR(ops->SetGradient("LeakyRelu", LeakyReluGrad));
  RETURN_IF_ERROR(ops->SetGradient("L2Loss", L2LossGrad));
  return absl::OkStatus();
}

}  // namespace sluice
