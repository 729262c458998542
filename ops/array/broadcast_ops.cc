// BroadcastTo, EnsureShape, MatrixBandPart and Roll: definitions, shape
// functions, gradients (TensorFlow's array_grad.py) and wrappers. Kernels:
// broadcast_kernels.cc.
#include "ops/array/broadcast_ops.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/array_shape_fns.h"
#include "ops/internal/grad_util.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using internal::InputOf;
using GradResult = absl::StatusOr<std::vector<Output>>;

// InvalidArgument unless `from` broadcasts to `to`: aligned right, each of
// its dims 1 or to's (unknown dims pass).
absl::Status CheckBroadcastsTo(absl::string_view op, const TensorShape& from, const TensorShape& to) {
  if (from.rank() < 0 || to.rank() < 0) return absl::OkStatus();
  bool ok = from.rank() <= to.rank();
  for (int i = 1; ok && i <= from.rank(); ++i) {
    const int64_t f = from.dim(from.rank() - i), t = to.dim(to.rank() - i);
    ok = f == 1 || f < 0 || t < 0 || f == t;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(op, ": a tensor of shape ", from.DebugString(),
                                                 " does not broadcast to ", to.DebugString()));
}

absl::Status BroadcastToShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, c->InputAsInts(1));
  if (!dims.has_value()) {
    const TensorShape& shape = c->input(1);
    c->set_output(0, shape.rank() == 1 && shape.dim(0) >= 0 ? TensorShape::UnknownOfRank(shape.dim(0))
                                                            : TensorShape::Unknown());
    return absl::OkStatus();
  }
  TensorShape to(absl::MakeConstSpan(*dims));
  RETURN_IF_ERROR(CheckBroadcastsTo("BroadcastTo", c->input(0), to));
  c->set_output(0, std::move(to));
  return absl::OkStatus();
}

absl::Status EnsureShapeShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape want, c->GetAttr<TensorShape>("shape"));
  absl::StatusOr<TensorShape> merged = c->input(0).Merge(want);
  if (!merged.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("EnsureShape: the input's shape ",
                                                   c->input(0).DebugString(),
                                                   " is not compatible with ", want.DebugString()));
  }
  c->set_output(0, *std::move(merged));
  return absl::OkStatus();
}

absl::Status BandShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 0));
  RETURN_IF_ERROR(c->WithRank(2, 0));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// The gradient sums away the dims the input was broadcast along.
GradResult BroadcastToGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(2);
  if (!g[0].valid()) return grads;
  const Output x = InputOf(node, 0);
  const Output to = InputOf(node, 1);
  const Output x_shape = ops::Shape(s, x, {.out_type = BaseType(to.dtype())});
  const Output axes = ops::BroadcastGradientArgs(s, to, x_shape).r1;
  grads[0] = ops::Reshape(s, ops::Sum(s, g[0], axes, {.keep_dims = true}), x_shape);
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult EnsureShapeGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  return std::vector<Output>{g[0]};
}

GradResult BandGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  grads[0] = ops::MatrixBandPart(s, g[0], InputOf(node, 1), InputOf(node, 2));
  RETURN_IF_ERROR(s.status());
  return grads;
}

GradResult RollGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(3);
  if (!g[0].valid()) return grads;
  grads[0] = ops::Roll(s, g[0], ops::Neg(s, InputOf(node, 1)), InputOf(node, 2));
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterBroadcastOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("BroadcastTo")
                                    .Input("input: T")
                                    .Input("shape: Tidx")
                                    .Output("output: T")
                                    .Attr("T: type")
                                    .Attr("Tidx: {int32, int64} = DT_INT32")
                                    .SetShapeFn(BroadcastToShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("EnsureShape")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr("shape: shape")
                                    .Attr("T: type")
                                    .SetShapeFn(EnsureShapeShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixBandPart")
                                    .Input("input: T")
                                    .Input("num_lower: Tindex")
                                    .Input("num_upper: Tindex")
                                    .Output("band: T")
                                    .Attr("T: type")
                                    .Attr("Tindex: {int32, int64} = DT_INT64")
                                    .SetShapeFn(BandShape)));
  return ops->Register(OpDefBuilder("Roll")
                           .Input("input: T")
                           .Input("shift: Tshift")
                           .Input("axis: Taxis")
                           .Output("output: T")
                           .Attr("T: type")
                           .Attr("Tshift: {int32, int64}")
                           .Attr("Taxis: {int32, int64}")
                           .SetShapeFn(internal::UnchangedShape));
}

absl::Status RegisterBroadcastGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("BroadcastTo", BroadcastToGrad));
  RETURN_IF_ERROR(ops->SetGradient("EnsureShape", EnsureShapeGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixBandPart", BandGrad));
  return ops->SetGradient("Roll", RollGrad);
}

namespace ops {

Output BroadcastTo(const Scope& scope, Input input, Input shape, std::source_location loc) {
  return scope.Op("BroadcastTo", loc).Input(input).Input(shape).Finalize1();
}

Output EnsureShape(const Scope& scope, Input input, const TensorShape& shape,
                   std::source_location loc) {
  return scope.Op("EnsureShape", loc).Input(input).Attr("shape", shape).Finalize1();
}

Output MatrixBandPart(const Scope& scope, Input input, Input num_lower, Input num_upper,
                      std::source_location loc) {
  return scope.Op("MatrixBandPart", loc).Input(input).Input(num_lower).Input(num_upper).Finalize1();
}

Output Roll(const Scope& scope, Input input, Input shift, Input axis, std::source_location loc) {
  return scope.Op("Roll", loc).Input(input).Input(shift).Input(axis).Finalize1();
}

}  // namespace ops
}  // namespace sluice
