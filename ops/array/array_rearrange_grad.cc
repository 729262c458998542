// Gradients of ops/array/array_rearrange_ops.h, after TensorFlow's array_grad.py:
// MirrorPad's gradient is MirrorPadGrad of it and MirrorPadGrad's is
// MirrorPad (same paddings and mode); SpaceToBatchND and BatchToSpaceND are
// each other's gradient (same block_shape, paddings as crops);
// ReverseSequence reverses the gradient with the same lengths.
// ParallelConcat's gradient splits it into its rows (TensorFlow registers
// none, since it rewrites the op away; each value is one row of the output).
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_rearrange_ops.h"
#include "ops/array/array_gradients.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

using internal::InputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

GradResult Done(const Scope& s, std::vector<Output> grads) {
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult MirrorPadGradient(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  ASSIGN_OR_RETURN(std::string mode, node.GetAttr<std::string>("mode"));
  const Output paddings = InputOf(node, 1);
  grads[0] = node.op() == "MirrorPad" ? ops::MirrorPadGrad(s, g[0], paddings, mode)
                                      : ops::MirrorPad(s, g[0], paddings, mode);
  return Done(s, std::move(grads));
}

GradResult SpaceBatchGradient(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  const Output block = InputOf(node, 1);
  const Output pads = InputOf(node, 2);
  grads[0] = node.op() == "SpaceToBatchND" ? ops::BatchToSpaceND(s, g[0], block, pads)
                                           : ops::SpaceToBatchND(s, g[0], block, pads);
  return Done(s, std::move(grads));
}

GradResult ReverseSequenceGradient(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  ASSIGN_OR_RETURN(int64_t seq_dim, node.GetAttr<int64_t>("seq_dim"));
  ASSIGN_OR_RETURN(int64_t batch_dim, node.GetAttr<int64_t>("batch_dim"));
  grads[0] = ops::ReverseSequence(s, g[0], InputOf(node, 1), seq_dim, {.batch_dim = batch_dim});
  return Done(s, std::move(grads));
}

GradResult ParallelConcatGradient(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const int n = node.num_inputs();
  std::vector<Output> grads(n);
  if (!g[0].valid()) return grads;
  if (n == 1) {
    grads[0] = g[0];
    return grads;
  }
  grads = ops::Split(s, 0, g[0], n);
  return Done(s, std::move(grads));
}

}  // namespace

absl::Status RegisterArrayRearrangeGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("MirrorPad", MirrorPadGradient));
  RETURN_IF_ERROR(ops->SetGradient("MirrorPadGrad", MirrorPadGradient));
  RETURN_IF_ERROR(ops->SetGradient("SpaceToBatchND", SpaceBatchGradient));
  RETURN_IF_ERROR(ops->SetGradient("BatchToSpaceND", SpaceBatchGradient));
  RETURN_IF_ERROR(ops->SetGradient("ReverseSequence", ReverseSequenceGradient));
  RETURN_IF_ERROR(ops->SetGradient("ParallelConcat", ParallelConcatGradient));
  return absl::OkStatus();
}

}  // namespace sluice
