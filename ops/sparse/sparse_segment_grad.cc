// Gradients of SegmentSum and the SparseSegment reductions (TensorFlow's math_grad.py
// _SparseSegment{Sum,Mean,SqrtN}Grad and their WithNumSegments forms): the
// Grad op with output_dim0 = the data's first dimension, w.r.t. data; none
// w.r.t. indices, segment_ids or num_segments.
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/sparse/sparse_segment_ops.h"

namespace sluice {
namespace {

GradFn ReductionGrad(std::string kind) {
  return [kind](const Scope& s, const Node& node,
                absl::Span<const Output> g) -> absl::StatusOr<std::vector<Output>> {
    const Output data = internal::InputOf(node, 0);
    const Output dim0 = ops::GatherV2(s, ops::Shape(s, data), ops::Const(s, 0), ops::Const(s, 0));
    std::vector<Output> grads(node.num_inputs());
    grads[0] = ops::SparseSegmentReductionGrad(s, kind, g[0], internal::InputOf(node, 1),
                                               internal::InputOf(node, 2), dim0);
    RETURN_IF_ERROR(s.status());
    return grads;
  };
}

// SegmentSum: each row of data gets its segment's gradient (TF's
// _SegmentSumGrad: gather(grad, segment_ids)).
absl::StatusOr<std::vector<Output>> SegmentSumGrad(const Scope& s, const Node& node,
                                                   absl::Span<const Output> g) {
  std::vector<Output> grads = {
      ops::GatherV2(s, g[0], internal::InputOf(node, 1), ops::Const(s, 0)), Output()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterSparseSegmentGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("SegmentSum", SegmentSumGrad));
  for (const std::string kind : {"Sum", "Mean", "SqrtN"}) {
    RETURN_IF_ERROR(ops->SetGradient("SparseSegment" + kind, ReductionGrad(kind)));
    RETURN_IF_ERROR(ops->SetGradient("SparseSegment" + kind + "WithNumSegments", ReductionGrad(kind)));
  }
  return absl::OkStatus();
}

}  // namespace sluice
