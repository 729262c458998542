// Greedy non-maximum suppression, as object detectors' inference graphs
// write it (tf.image.non_max_suppression and its _padded, _with_scores and
// _overlaps forms): NonMaxSuppression (V1-V5) and
// NonMaxSuppressionWithOverlaps. CPU kernels for float and half boxes and
// scores (computed in float).
//
//   Output keep = ops::NonMaxSuppressionV3(s, boxes, scores, 100, 0.5f, 0.1f);
//   Output kept_boxes = ops::GatherV2(s, boxes, keep, 0);
//
// boxes [num_boxes, 4] are (y1, x1, y2, x2), any two opposite corners;
// scores [num_boxes]. Candidates scoring above score_threshold are visited
// best first (ties: the lower index first); one is kept unless its IoU with
// a kept box exceeds iou_threshold; at most max_output_size are kept. V5
// with soft_nms_sigma > 0 is Soft-NMS (Bodla et al. 2017): an overlap
// scales a candidate's score by exp(-iou^2 / (2 sigma)) instead of removing
// it, and a candidate whose score fell goes back in line. V4 and V5 pad the
// indices (and scores) with zeros to max_output_size when asked, and say
// how many are valid. The results are TensorFlow's for the same inputs.
//
// No gradient (the selection is not differentiable; TensorFlow has none).
// Errors, InvalidArgument with TensorFlow's wording: boxes not [n, 4],
// scores not [n], non-scalar sizes and thresholds, iou_threshold outside
// [0, 1], a negative max_output_size or soft_nms_sigma. Thread-safety: as
// Scope; kernels are stateless.
#ifndef SLUICE_OPS_IMAGE_NMS_OPS_H_
#define SLUICE_OPS_IMAGE_NMS_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterNmsOps(OpRegistry* ops);
void RegisterNmsKernels(KernelRegistry* kernels);

namespace ops {

// The kept indices (int32), best first.
Output NonMaxSuppressionV3(const Scope& scope, Input boxes, Input scores, Input max_output_size,
                           Input iou_threshold, Input score_threshold,
                           std::source_location loc = std::source_location::current());

struct NonMaxSuppressionV5Outputs {
  Output selected_indices;  // int32 [k] (max_output_size when padded)
  Output selected_scores;   // the scores after soft suppression
  Output valid_outputs;     // int32 scalar
};
NonMaxSuppressionV5Outputs NonMaxSuppressionV5(
    const Scope& scope, Input boxes, Input scores, Input max_output_size, Input iou_threshold,
    Input score_threshold, Input soft_nms_sigma, bool pad_to_max_output_size = false,
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_NMS_OPS_H_
