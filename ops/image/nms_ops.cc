// Non-maximum suppression op definitions, shape functions and wrappers
// (kernels: nms_kernels.cc).
#include "ops/image/nms_ops.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

// boxes [n, 4] (overlaps [n, n]), scores [n], the rest scalars; the indices
// are [k], k = max_output_size when padded (and known), else unknown.
absl::Status NmsShape(InferenceContext* c) {
  const bool overlaps = c->node().op() == "NonMaxSuppressionWithOverlaps";
  RETURN_IF_ERROR(c->WithRank(0, 2));
  RETURN_IF_ERROR(c->WithRank(1, 1));
  for (int i = 2; i < c->num_inputs(); ++i) RETURN_IF_ERROR(c->WithRank(i, 0));
  const TensorShape& boxes = c->input(0);
  if (!boxes.unknown_rank() && !overlaps && boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": boxes must have 4 columns, got shape ", boxes.DebugString()));
  }
  int64_t k = TensorShape::kUnknownDim;
  if (c->node().op() == "NonMaxSuppressionV4" || c->node().op() == "NonMaxSuppressionV5") {
    ASSIGN_OR_RETURN(bool pad, c->GetAttr<bool>("pad_to_max_output_size"));
    ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> size, c->InputAsInts(2));
    if (pad && size.has_value() && size->size() == 1 && (*size)[0] >= 0) k = (*size)[0];
  }
  c->set_output(0, TensorShape({k}));
  if (c->node().op() == "NonMaxSuppressionV4") c->set_output(1, TensorShape());
  if (c->node().op() == "NonMaxSuppressionV5") {
    c->set_output(1, TensorShape({k}));
    c->set_output(2, TensorShape());
  }
  return absl::OkStatus();
}

OpDefBuilder Nms(const char* name, bool typed, int thresholds) {
  OpDefBuilder b(name);
  const char* box_type = typed ? "T" : "float";
  b.Input(absl::StrCat("boxes: ", box_type))
      .Input(absl::StrCat("scores: ", box_type))
      .Input("max_output_size: int32");
  const std::vector<std::string> names = {"iou_threshold", "score_threshold"};
  for (int i = 0; i < thresholds; ++i) b.Input(absl::StrCat(names[i], ": T_threshold"));
  b.Output("selected_indices: int32");
  if (typed) {
    b.Attr("T: {half, float} = DT_FLOAT").Attr("T_threshold: {half, float} = DT_FLOAT");
  }
  return b;
}

}  // namespace

absl::Status RegisterNmsOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(
      Nms("NonMaxSuppression", false, 0).Attr("iou_threshold: float = 0.5").SetShapeFn(NmsShape)));
  RETURN_IF_ERROR(ops->Register(Nms("NonMaxSuppressionV2", true, 1).SetShapeFn(NmsShape)));
  RETURN_IF_ERROR(ops->Register(Nms("NonMaxSuppressionV3", true, 2).SetShapeFn(NmsShape)));
  RETURN_IF_ERROR(ops->Register(Nms("NonMaxSuppressionV4", true, 2)
                                    .Output("valid_outputs: int32")
                                    .Attr("pad_to_max_output_size: bool = false")
                                    .SetShapeFn(NmsShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NonMaxSuppressionV5")
                                    .Input("boxes: T")
                                    .Input("scores: T")
                                    .Input("max_output_size: int32")
                                    .Input("iou_threshold: T")
                                    .Input("score_threshold: T")
                                    .Input("soft_nms_sigma: T")
                                    .Output("selected_indices: int32")
                                    .Output("selected_scores: T")
                                    .Output("valid_outputs: int32")
                                    .Attr("T: {half, float} = DT_FLOAT")
                                    .Attr("pad_to_max_output_size: bool = false")
                                    .SetShapeFn(NmsShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("NonMaxSuppressionWithOverlaps")
                                    .Input("overlaps: float")
                                    .Input("scores: float")
                                    .Input("max_output_size: int32")
                                    .Input("overlap_threshold: float")
                                    .Input("score_threshold: float")
                                    .Output("selected_indices: int32")
                                    .SetShapeFn(NmsShape)));
  for (const char* op : {"NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3",
                         "NonMaxSuppressionV4", "NonMaxSuppressionV5",
                         "NonMaxSuppressionWithOverlaps"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output NonMaxSuppressionV3(const Scope& s, Input boxes, Input scores, Input max_output_size,
                           Input iou_threshold, Input score_threshold, std::source_location loc) {
  return s.Op("NonMaxSuppressionV3", loc)
      .Input(boxes)
      .Input(scores)
      .Input(max_output_size)
      .Input(iou_threshold)
      .Input(score_threshold)
      .Finalize1();
}

NonMaxSuppressionV5Outputs NonMaxSuppressionV5(const Scope& s, Input boxes, Input scores,
                                               Input max_output_size, Input iou_threshold,
                                               Input score_threshold, Input soft_nms_sigma,
                                               bool pad_to_max_output_size,
                                               std::source_location loc) {
  std::vector<Output> out = s.Op("NonMaxSuppressionV5", loc)
                                .Input(boxes)
                                .Input(scores)
                                .Input(max_output_size)
                                .Input(iou_threshold)
                                .Input(score_threshold)
                                .Input(soft_nms_sigma)
                                .Attr("pad_to_max_output_size", pad_to_max_output_size)
                                .FinalizeAll();
  if (out.size() != 3) return {};
  return {out[0], out[1], out[2]};
}

}  // namespace ops
}  // namespace sluice
