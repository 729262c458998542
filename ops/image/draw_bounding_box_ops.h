// DrawBoundingBoxes and DrawBoundingBoxesV2 (tf.image.draw_bounding_boxes:
// detection boxes over images for TensorBoard) under TensorFlow's names,
// inputs and attrs: images [batch, h, w, depth 1, 3 or 4] (half, float),
// boxes float [batch, n, 4] of (ymin, xmin, ymax, xmax) in [0, 1], and
// for V2 colors float [k, >= depth] (empty: TensorFlow's table of ten) ->
// the images with each box's one-pixel outline in color (box i % colors),
// as TensorFlow draws it: corners at coordinate * (size - 1) truncated,
// edges outside the image skipped, inverted or wholly outside boxes (and
// boxes with non-finite corners) not drawn. No gradient.
//
//   Output shown = ops::DrawBoundingBoxesV2(s, images, boxes, colors);
//
// Errors (InvalidArgument, TensorFlow's texts): images not 4-D, boxes not
// [batch, n, 4], a depth other than 1, 3 or 4, colors not a matrix with at
// least depth columns. Thread-safety: as Scope; the kernel is stateless.
#ifndef SLUICE_OPS_IMAGE_DRAW_BOUNDING_BOX_OPS_H_
#define SLUICE_OPS_IMAGE_DRAW_BOUNDING_BOX_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDrawBoundingBoxOps(OpRegistry* ops);
void RegisterDrawBoundingBoxKernels(KernelRegistry* kernels);

namespace ops {

Output DrawBoundingBoxesV2(const Scope& scope, Input images, Input boxes, Input colors,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_DRAW_BOUNDING_BOX_OPS_H_
