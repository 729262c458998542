#include "ops/math/composite_ops.h"

#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/lowering.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Node*>> LowerEuclideanNorm(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(bool keep_dims, node->GetAttr<bool>("keep_dims"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  Output sum = ops::Sum(l.scope, ops::Square(l.scope, l.inputs[0]), l.inputs[1], {keep_dims});
  return FinishLowering(l, {ops::Sqrt(l.scope, sum)}, /*done=*/nullptr);
}

absl::StatusOr<std::vector<Node*>> LowerCumulativeLogsumexp(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(bool exclusive, node->GetAttr<bool>("exclusive"));
  ASSIGN_OR_RETURN(bool reverse, node->GetAttr<bool>("reverse"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  const Scope& s = l.scope;
  const Output x = l.inputs[0];
  Output m = ops::StopGradient(s, ops::Max(s, x, l.inputs[1], {/*keep_dims=*/true}));
  Output sums = ops::Cumsum(s, ops::Exp(s, ops::Sub(s, x, m)), l.inputs[1], {exclusive, reverse});
  return FinishLowering(l, {ops::Add(s, ops::Log(s, sums), m)}, /*done=*/nullptr);
}

}  // namespace

absl::Status RegisterCompositeOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetLowering("EuclideanNorm", LowerEuclideanNorm));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("CumulativeLogsumexp")
                                    .Input("x: T")
                                    .Input("axis: Tidx")
                                    .Output("out: T")
                                    .Attr("exclusive: bool = false")
                                    .Attr("reverse: bool = false")
                                    .Attr("T: {bfloat16, half, float, double}")
                                    .Attr("Tidx: {int32, int64} = DT_INT32")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, c->input(0));
                                      return absl::OkStatus();
                                    })));
  return ops->SetLowering("CumulativeLogsumexp", LowerCumulativeLogsumexp);
}

namespace ops {

Output EuclideanNorm(const Scope& s, Input input, Input axis, bool keep_dims,
                     std::source_location loc) {
  return s.Op("EuclideanNorm", loc)
      .Input(input)
      .Input(axis)
      .Attr("keep_dims", keep_dims)
      .Finalize1();
}

Output CumulativeLogsumexp(const Scope& s, Input x, Input axis, const ScanAttrs& attrs,
                           std::source_location loc) {
  return s.Op("CumulativeLogsumexp", loc)
      .Input(x)
      .Input(axis)
      .Attr("exclusive", attrs.exclusive)
      .Attr("reverse", attrs.reverse)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
