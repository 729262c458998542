// The image transforms input pipelines use, with TensorFlow's names, inputs
// and attrs (its core/ops/image_ops.cc): ResizeBilinear and its gradient op
// ResizeBilinearGrad, CropAndResize with CropAndResizeGradImage and
// CropAndResizeGradBoxes, AdjustContrastv2. CPU kernels in
// image_kernels.cc; gradients (image_grad.cc): ResizeBilinear w.r.t. the
// images, CropAndResize w.r.t. the image and (bilinear) the boxes.
//
//   Output y = ops::ResizeBilinear(s, images, ops::Const(s, {32, 32}),
//                                  {.half_pixel_centers = true});   // float [b, 32, 32, c]
//   Output crops = ops::CropAndResize(s, image, boxes, box_ind, ops::Const(s, {24, 24}));
//   Output z = ops::AdjustContrastv2(s, images, ops::Const(s, 1.5f));
//
// Sampling is TensorFlow's: ResizeBilinear maps output pixel y to input
// coordinate y * scale (half_pixel_centers: (y + 0.5) * scale - 0.5) with
// scale = in / out, or (in - 1) / (out - 1) under align_corners; a box
// [y1, x1, y2, x2] (normalized) maps crop row y to y1 * (H - 1) + y * (y2 -
// y1) * (H - 1) / (crop_h - 1); points outside the image take
// extrapolation_value. AdjustContrastv2 is (x - mean) * factor + mean with
// the mean per image and channel over height and width.
// Errors: InvalidArgument naming the input (images not 4-D, size not two
// positive ints, boxes not [n, 4], box_ind out of [0, batch), a crop size
// that is not positive, a contrast factor that is not a scalar).
// Thread-safety: as Scope; kernels are stateless. Ownership: nodes belong
// to the scope's graph.
#ifndef SLUICE_OPS_IMAGE_IMAGE_OPS_H_
#define SLUICE_OPS_IMAGE_IMAGE_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterImageOps(OpRegistry* ops);
absl::Status RegisterImageGradients(OpRegistry* ops);
void RegisterImageKernels(KernelRegistry* kernels);

namespace ops {

struct ResizeAttrs {
  bool align_corners = false;
  bool half_pixel_centers = false;
};
Output ResizeBilinear(const Scope& scope, Input images, Input size, const ResizeAttrs& attrs = {},
                      std::source_location loc = std::source_location::current());
// grads: float [b, h, w, c]; original_image gives the output's shape and type.
Output ResizeBilinearGrad(const Scope& scope, Input grads, Input original_image,
                          const ResizeAttrs& attrs = {},
                          std::source_location loc = std::source_location::current());

struct CropAndResizeAttrs {
  std::string method = "bilinear";  // or "nearest"
  float extrapolation_value = 0;
};
Output CropAndResize(const Scope& scope, Input image, Input boxes, Input box_ind, Input crop_size,
                     const CropAndResizeAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output CropAndResizeGradImage(const Scope& scope, Input grads, Input boxes, Input box_ind,
                              Input image_size, DataType T, const std::string& method = "bilinear",
                              std::source_location loc = std::source_location::current());
Output CropAndResizeGradBoxes(const Scope& scope, Input grads, Input image, Input boxes,
                              Input box_ind,
                              std::source_location loc = std::source_location::current());

Output AdjustContrastv2(const Scope& scope, Input images, Input contrast_factor,
                        std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_IMAGE_OPS_H_
