#include "ops/math/internal/broadcast_grad.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/tensor_shape.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace internal {

// An int32 (int64 when a value needs it) vector constant.
Input IntList(const std::vector<int64_t>& values) {
  ::tensorflow::TensorProto proto;
  bool wide = false;
  for (int64_t v : values) wide |= v > INT32_MAX || v < INT32_MIN;
  proto.set_dtype(wide ? DT_INT64 : DT_INT32);
  proto.mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (int64_t v : values) {
    if (wide) {
      proto.add_int64_val(v);
    } else {
      proto.add_int_val(static_cast<int32_t>(v));
    }
  }
  return Input(std::move(proto));
}

namespace {

// The axes along which operand `a` was broadcast against `others`, when the
// shapes known now decide them. needs_reshape: a size-1 dimension of `a` is
// among them, so the sum must be reshaped back to a's shape.
struct StaticReduction {
  std::vector<int64_t> axes;
  bool needs_reshape = false;
};

std::optional<StaticReduction> PlanReduction(const TensorShape& a,
                                             absl::Span<const TensorShape> others) {
  if (a.unknown_rank()) return std::nullopt;
  int rank = a.rank();
  for (const TensorShape& o : others) {
    if (o.unknown_rank()) return std::nullopt;
    rank = std::max(rank, o.rank());
  }
  StaticReduction plan;
  for (int i = 0; i < rank; ++i) {
    const int ai = i - (rank - a.rank());
    if (ai < 0) {
      plan.axes.push_back(i);
      continue;
    }
    const int64_t ad = a.dim(ai);
    if (ad != 1 && ad != TensorShape::kUnknownDim) continue;  // never broadcast
    // Does any other operand make this output dimension other than 1?
    bool others_all_one = true;
    for (const TensorShape& o : others) {
      const int oi = i - (rank - o.rank());
      if (oi >= 0 && o.dim(oi) != 1) others_all_one = false;
    }
    if (others_all_one) continue;
    if (ad == TensorShape::kUnknownDim) return std::nullopt;  // 1 or not: decided at run time
    plan.axes.push_back(i);
    plan.needs_reshape = true;
  }
  return plan;
}

// Sums `grad` (of the broadcast output's shape) down to the shape of `a`.
}  // namespace

Output ReduceToOperand(const Scope& s, const Output& grad, const Output& a,
                       absl::Span<const Output> others) {
  if (!grad.valid()) return grad;
  std::vector<TensorShape> other_shapes;
  for (const Output& o : others) other_shapes.push_back(o.shape());
  std::optional<StaticReduction> plan = PlanReduction(a.shape(), other_shapes);
  if (plan.has_value()) {
    Output g = grad;
    if (!plan->axes.empty()) g = ops::Sum(s, g, IntList(plan->axes));
    if (plan->needs_reshape) {
      g = a.shape().IsFullyDefined() ? ops::Reshape(s, g, IntList(a.shape().dims()))
                                     : ops::Reshape(s, g, ops::Shape(s, a));
    }
    return g;
  }
  Output shape_a = ops::Shape(s, a);
  std::vector<Output> r =
      s.Op("BroadcastGradientArgs").Input(shape_a).Input(ops::Shape(s, grad)).FinalizeAll();
  if (r.size() != 2) return Output();
  return ops::Reshape(s, ops::Sum(s, grad, r[0]), shape_a);
}

}  // namespace internal
}  // namespace sluice
