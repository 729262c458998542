// The gradient of LRN (TensorFlow's nn_grad.py _LRNGrad): LRNGrad with the
// forward node's attrs, its input and its output.
#include <vector>

#include "base/status_macros.h"
#include "ops/nn/nn_gradients.h"
#include "ops/internal/grad_util.h"
#include "ops/nn/lrn_ops.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Output>> LrnGrad(const Scope& s, const Node& node,
                                            absl::Span<const Output> g) {
  ops::LRNAttrs a;
  ASSIGN_OR_RETURN(a.depth_radius, node.GetAttr<int64_t>("depth_radius"));
  ASSIGN_OR_RETURN(a.bias, node.GetAttr<float>("bias"));
  ASSIGN_OR_RETURN(a.alpha, node.GetAttr<float>("alpha"));
  ASSIGN_OR_RETURN(a.beta, node.GetAttr<float>("beta"));
  std::vector<Output> grads = {
      ops::LRNGrad(s, g[0], internal::InputOf(node, 0), internal::OutputOf(node), a)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterLrnGradients(OpRegistry* ops) { return ops->SetGradient("LRN", LrnGrad); }

}  // namespace sluice
