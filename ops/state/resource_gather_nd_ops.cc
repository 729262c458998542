// Definition, lowering, gradient and wrapper of ResourceGatherNd
// (ops/state/resource_gather_nd_ops.h).
#include "ops/state/resource_gather_nd_ops.h"

#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/internal/lowering.h"
#include "ops/state/resource_variable_ops.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Node*>> LowerResourceGatherNd(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(DataType dtype, node->GetAttr<DataType>("dtype"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  Output value = ops::ReadVariableOp(l.scope, l.inputs[0], dtype);
  return FinishLowering(l, {ops::GatherNd(l.scope, value, l.inputs[1])}, /*done=*/nullptr);
}

// To the variable: the incoming gradient scattered into its shape.
absl::StatusOr<std::vector<Output>> ResourceGatherNdGrad(const Scope& s, const Node& node,
                                                         absl::Span<const Output> g) {
  const Output resource = internal::InputOf(node, 0);
  const Output indices = internal::InputOf(node, 1);
  const Output shape = s.Op("VariableShape").Input(resource).Attr("out_type", indices.dtype()).Finalize1();
  Output grad = ops::ScatterNd(s, indices, g[0], shape);
  RETURN_IF_ERROR(s.status());
  return std::vector<Output>{grad, Output()};
}

}  // namespace

absl::Status RegisterResourceGatherNdOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResourceGatherNd")
                                    .Input("resource: resource")
                                    .Input("indices: Tindices")
                                    .Output("output: dtype")
                                    .Attr("dtype: type")
                                    .Attr("Tindices: {int32, int64}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      c->set_output(0, TensorShape::Unknown());
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->SetLowering("ResourceGatherNd", LowerResourceGatherNd));
  return ops->SetGradient("ResourceGatherNd", ResourceGatherNdGrad);
}

namespace ops {

Output ResourceGatherNd(const Scope& s, Input resource, Input indices, DataType dtype, std::source_location loc) {
  return s.Op("ResourceGatherNd", loc).Input(resource).Input(indices).Attr("dtype", dtype).Finalize1();
}

}  // namespace ops
}  // namespace sluice
