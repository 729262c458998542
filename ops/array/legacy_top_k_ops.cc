#include "ops/array/legacy_top_k_ops.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/internal/lowering.h"

namespace sluice {
namespace {

absl::Status TopKShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  ASSIGN_OR_RETURN(int64_t k, c->GetAttr<int64_t>("k"));
  TensorShape out = c->input(0);
  if (!out.unknown_rank()) {
    const int64_t last = out.dim(out.rank() - 1);
    if (last >= 0 && last < k) {
      return absl::InvalidArgumentError(absl::StrCat("TopK: input ", out.DebugString(),
                                                     " must have at least k = ", k, " columns"));
    }
    out.set_dim(out.rank() - 1, k);
  }
  c->set_output(0, out);
  c->set_output(1, out);
  return absl::OkStatus();
}

absl::Status InTopKShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  const TensorShape& p = c->input(0);
  const TensorShape& t = c->input(1);
  int64_t batch = p.unknown_rank() ? TensorShape::kUnknownDim : p.dim(0);
  if (!t.unknown_rank() && t.dim(0) >= 0) {
    if (batch >= 0 && batch != t.dim(0)) {
      return absl::InvalidArgumentError(absl::StrCat("InTopK: predictions ", p.DebugString(),
                                                     " and targets ", t.DebugString(),
                                                     " must have the same batch size"));
    }
    batch = t.dim(0);
  }
  c->set_output(0, TensorShape({batch}));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Node*>> LowerTopK(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(int64_t k, node->GetAttr<int64_t>("k"));
  ASSIGN_OR_RETURN(bool sorted, node->GetAttr<bool>("sorted"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  ops::TopKOutputs top =
      ops::TopKV2(l.scope, l.inputs[0], ops::Const(l.scope, static_cast<int32_t>(k)), sorted);
  return FinishLowering(l, {top.values, top.indices}, /*done=*/nullptr);
}

absl::StatusOr<std::vector<Node*>> LowerInTopK(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(int64_t k, node->GetAttr<int64_t>("k"));
  ASSIGN_OR_RETURN(DataType t, node->GetAttr<DataType>("T"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  Output kk = t == DT_INT64 ? ops::Const(l.scope, k) : ops::Const(l.scope, static_cast<int32_t>(k));
  return FinishLowering(l, {ops::InTopKV2(l.scope, l.inputs[0], l.inputs[1], kk)}, nullptr);
}

}  // namespace

absl::Status RegisterLegacyTopKOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TopK")
                                    .Input("input: T")
                                    .Output("values: T")
                                    .Output("indices: int32")
                                    .Attr("k: int >= 0")
                                    .Attr("sorted: bool = true")
                                    .Attr("T: {float, double, int32, uint8, int16, int8, "
                                          "int64, bfloat16, uint16, half, "
                                          "uint32, uint64}")
                                    .SetShapeFn(TopKShape)));
  RETURN_IF_ERROR(ops->SetLowering("TopK", LowerTopK));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("InTopK")
                                    .Input("predictions: float")
                                    .Input("targets: T")
                                    .Output("precision: bool")
                                    .Attr("k: int")
                                    .Attr("T: {int32, int64} = DT_INT32")
                                    .SetShapeFn(InTopKShape)));
  return ops->SetLowering("InTopK", LowerInTopK);
}

namespace ops {

TopKOutputs TopKV1(const Scope& s, Input input, int64_t k, bool sorted, std::source_location loc) {
  std::vector<Output> o =
      s.Op("TopK", loc).Input(input).Attr("k", k).Attr("sorted", sorted).FinalizeAll();
  o.resize(2);
  return {o[0], o[1]};
}

Output InTopK(const Scope& s, Input predictions, Input targets, int64_t k,
              std::source_location loc) {
  return s.Op("InTopK", loc).Input(predictions).Input(targets).Attr("k", k).Finalize1();
}

}  // namespace ops
}  // namespace sluice
