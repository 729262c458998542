// Gradients of the segment reductions, as TensorFlow's math_grad.py writes
// them (_SegmentMeanGrad, _SegmentMinOrMaxGrad, _SegmentProdGrad and their
// unsorted forms with _GatherDropNegatives): w.r.t. data only.
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"
#include "ops/sparse/segment_reduction_ops.h"
#include "ops/sparse/sparse_segment_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;

// What the backward pass reads of a segment reduction's node.
struct Segments {
  Output data, ids, num;  // num: unsorted only
  bool sorted;

  static Segments Of(const Node& node) {
    const bool sorted = node.num_inputs() == 2;
    return {InputOf(node, 0), InputOf(node, 1), sorted ? Output() : InputOf(node, 2), sorted};
  }

  // Per segment, the sum of x's rows.
  Output Sum(const Scope& s, Output x) const {
    return sorted ? ops::SegmentSum(s, x, ids) : ops::UnsortedSegmentSum(s, x, ids, num);
  }
  Output Prod(const Scope& s, Output x) const {
    return sorted ? ops::SegmentProd(s, x, ids) : ops::UnsortedSegmentProd(s, x, ids, num);
  }

  // Per data row, its segment's row of x; rows with a negative id get 0.
  Output Gather(const Scope& s, Output x) const {
    if (sorted) return ops::GatherV2(s, x, ids, ops::Const(s, 0));
    Output gathered = ops::GatherV2(s, x, ops::Maximum(s, ids, ops::ZerosLike(s, ids)),
                                    ops::Const(s, 0));
    return ops::SelectV2(s, Kept(s), gathered, ops::ZerosLike(s, gathered));
  }

  // Whether each data element's row has an id >= 0, shaped to broadcast
  // against data: ids' shape, then 1 for each dimension of data after it.
  Output Kept(const Scope& s) const {
    Output tail = ops::Slice(s, ops::Shape(s, data),
                             ops::Reshape(s, ops::Rank(s, ids), ops::Const(s, Tensor::FromVector<int32_t>({1}))),
                             ops::Const(s, Tensor::FromVector<int32_t>({-1})));
    Output shape = ops::ConcatV2(s, {ops::Shape(s, ids), ops::OnesLike(s, tail)}, ops::Const(s, 0));
    return ops::Reshape(s, ops::GreaterEqual(s, ids, ops::ZerosLike(s, ids)), shape);
  }
};

std::vector<Output> DataOnly(const Node& node, Output grad) {
  std::vector<Output> grads(node.num_inputs());
  grads[0] = grad;
  return grads;
}

// Each row gets its segment's gradient over the segment's row count.
absl::StatusOr<std::vector<Output>> SegmentMeanGrad(const Scope& s, const Node& node,
                                                    absl::Span<const Output> g) {
  const Segments seg = Segments::Of(node);
  Output counts = seg.Sum(s, ops::OnesLike(s, seg.data));
  Output grad = seg.Gather(s, ops::Div(s, g[0], counts));
  RETURN_IF_ERROR(s.status());
  return DataOnly(node, grad);
}

// The rows equal to their segment's result share its gradient.
absl::StatusOr<std::vector<Output>> MinOrMaxGrad(const Scope& s, const Node& node,
                                                 absl::Span<const Output> g) {
  const Segments seg = Segments::Of(node);
  Output selected = ops::Equal(s, seg.data, seg.Gather(s, OutputOf(node)));
  if (!seg.sorted) selected = ops::LogicalAnd(s, selected, seg.Kept(s));
  Output num_selected = seg.Sum(s, ops::Cast(s, selected, seg.data.dtype()));
  Output gathered = seg.Gather(s, ops::Div(s, g[0], num_selected));
  Output grad = ops::SelectV2(s, selected, gathered, ops::ZerosLike(s, gathered));
  RETURN_IF_ERROR(s.status());
  return DataOnly(node, grad);
}

// d prod / d x_i = the product of the others: prod / x_i, or at a segment's
// only zero the product of its non-zero rows; 0 where a segment has two
// zeros or more.
absl::StatusOr<std::vector<Output>> ProdGrad(const Scope& s, const Node& node,
                                             absl::Span<const Output> g) {
  const Segments seg = Segments::Of(node);
  Output zero = ops::ZerosLike(s, seg.data);
  Output is_zero = ops::Equal(s, seg.data, zero);
  Output num_zeros = seg.Sum(s, ops::Cast(s, is_zero, DT_INT32));
  Output grad = ops::SelectV2(s, ops::Greater(s, num_zeros, ops::Const(s, 1)),
                              ops::ZerosLike(s, g[0]), g[0]);
  Output non_zero = ops::SelectV2(s, is_zero, ops::OnesLike(s, seg.data), seg.data);
  Output non_zero_prod = seg.Gather(s, seg.Prod(s, non_zero));
  Output others = ops::Div(s, seg.Gather(s, OutputOf(node)), non_zero);
  Output partial = ops::SelectV2(s, is_zero, non_zero_prod, others);
  Output result = ops::Mul(s, seg.Gather(s, grad), partial);
  RETURN_IF_ERROR(s.status());
  return DataOnly(node, result);
}

}  // namespace

absl::Status RegisterSegmentReductionGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("SegmentMean", SegmentMeanGrad));
  for (const char* op : {"SegmentMax", "SegmentMin", "UnsortedSegmentMax", "UnsortedSegmentMin"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, MinOrMaxGrad));
  }
  RETURN_IF_ERROR(ops->SetGradient("SegmentProd", ProdGrad));
  RETURN_IF_ERROR(ops->SetGradient("UnsortedSegmentProd", ProdGrad));
  return absl::OkStatus();
}

}  // namespace sluice
