#include "ops/functional/symbolic_gradient.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/gradients.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/functional/functional_ops.h"
#include "ops/internal/lowering.h"

namespace sluice {
namespace {

// Each gradient is shaped as its argument (the first Tout inputs).
absl::Status GradientShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, i < c->num_inputs() ? c->input(i) : TensorShape::Unknown());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Node*>> LowerSymbolicGradient(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(NameAttrList f, node->GetAttr<NameAttrList>("f"));
  const int n = node->num_outputs();  // f's arguments
  const int m = node->num_inputs() - n;
  if (m < 0) {
    return absl::InvalidArgumentError(absl::StrCat("takes ", node->num_inputs(),
                                                   " inputs: fewer than its ", n,
                                                   " gradients (one per argument of ",
                                                   f.name(), ")"));
  }
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  // Copies of the arguments: a tensor passed twice gets its own gradient
  // for each place, as f's arguments are distinct.
  std::vector<Output> xs;
  for (int i = 0; i < n; ++i) xs.push_back(ops::Identity(l.scope.WithOpName("arg"), l.inputs[i]));
  std::vector<Output> ys = ops::CallFunction(l.scope.WithOpName("forward"), f, xs);
  RETURN_IF_ERROR(l.scope.status());
  if (static_cast<int>(ys.size()) != m) {
    return absl::InvalidArgumentError(absl::StrCat("is given ", m, " gradients of ", f.name(),
                                                   "'s results, which are ", ys.size()));
  }
  const std::vector<Output> dys(l.inputs.begin() + n, l.inputs.end());
  ASSIGN_OR_RETURN(std::vector<Output> dxs, AddGradients(l.scope, ys, xs, dys));
  for (int i = 0; i < n; ++i) {
    if (!dxs[i].valid()) dxs[i] = ops::ZerosLike(l.scope.WithOpName("no_gradient"), xs[i]);
  }
  RETURN_IF_ERROR(l.scope.status());
  return FinishLowering(l, dxs, /*done=*/nullptr);
}

}  // namespace

absl::Status RegisterSymbolicGradientOp(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SymbolicGradient")
                                    .Input("input: Tin")
                                    .Output("output: Tout")
                                    .Attr("Tin: list(type)")
                                    .Attr("Tout: list(type)")
                                    .Attr("f: func")
                                    .SetShapeFn(GradientShapes)));
  return ops->SetLowering("SymbolicGradient", LowerSymbolicGradient);
}

namespace ops {

std::vector<Output> SymbolicGradient(const Scope& scope, absl::Span<const Output> inputs,
                                     const NameAttrList& f, const std::vector<DataType>& tout,
                                     std::source_location loc) {
  OpBuilder b = scope.Op("SymbolicGradient", loc);
  std::vector<DataType> tin;
  for (const Output& x : inputs) tin.push_back(x.valid() ? BaseType(x.dtype()) : DT_INVALID);
  return b.InputList(inputs).Attr("Tin", tin).Attr("Tout", tout).Attr("f", f).FinalizeAll();
}

}  // namespace ops
}  // namespace sluice
