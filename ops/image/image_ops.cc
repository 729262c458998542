// Image transform op definitions, shape functions and wrappers (kernels:
// image_kernels.cc; gradients: image_grad.cc).
#include "ops/image/image_ops.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "graph/shape_inference.h"
#include "ops/image/internal/resize_util.h"

namespace sluice {
namespace {

using internal::ResizedShape;

absl::Status SameAsInput(InferenceContext* c, int i) {
  c->set_output(0, c->input(i));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterImageOps(OpRegistry* ops) {
  const std::string real = internal::kImageRealTypes;
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResizeBilinear")
                                    .Input("images: T")
                                    .Input("size: int32")
                                    .Output("resized_images: float")
                                    .Attr("T: " + real)
                                    .Attr("align_corners: bool = false")
                                    .Attr("half_pixel_centers: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return ResizedShape(c, 0, 1, 0);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ResizeBilinearGrad")
                                    .Input("grads: float")
                                    .Input("original_image: T")
                                    .Output("output: T")
                                    .Attr("T: {float, bfloat16, half, double}")
                                    .Attr("align_corners: bool = false")
                                    .Attr("half_pixel_centers: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 4));
                                      RETURN_IF_ERROR(c->WithRank(1, 4));
                                      return SameAsInput(c, 1);
                                    })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("CropAndResize")
          .Input("image: T")
          .Input("boxes: float")
          .Input("box_ind: int32")
          .Input("crop_size: int32")
          .Output("crops: float")
          .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, bfloat16, float, double}")
          .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
          .Attr("extrapolation_value: float = 0")
          .SetShapeFn([](InferenceContext* c) {
            RETURN_IF_ERROR(c->WithRank(1, 2));
            RETURN_IF_ERROR(c->WithRank(2, 1));
            return ResizedShape(c, 0, 3, 1);
          })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("CropAndResizeGradImage")
                                    .Input("grads: float")
                                    .Input("boxes: float")
                                    .Input("box_ind: int32")
                                    .Input("image_size: int32")
                                    .Output("output: T")
                                    .Attr("T: {float, half, double}")
                                    .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 4));
                                      ASSIGN_OR_RETURN(auto size, c->InputAsInts(3));
                                      c->set_output(0, size.has_value()
                                                           ? TensorShape(*size)
                                                           : TensorShape::UnknownOfRank(4));
                                      return absl::OkStatus();
                                    })));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("CropAndResizeGradBoxes")
          .Input("grads: float")
          .Input("image: T")
          .Input("boxes: float")
          .Input("box_ind: int32")
          .Output("output: float")
          .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
          .Attr("method: {'bilinear'} = 'bilinear'")
          .SetShapeFn([](InferenceContext* c) { return SameAsInput(c, 2); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("AdjustContrastv2")
                                    .Input("images: T")
                                    .Input("contrast_factor: float")
                                    .Output("output: T")
                                    .Attr("T: {half, float} = DT_FLOAT")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRankAtLeast(0, 3));
                                      RETURN_IF_ERROR(c->WithRank(1, 0));
                                      return SameAsInput(c, 0);
                                    })));
  for (const char* op : {"ResizeBilinearGrad", "CropAndResizeGradImage", "CropAndResizeGradBoxes"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output ResizeBilinear(const Scope& s, Input images, Input size, const ResizeAttrs& a,
                      std::source_location loc) {
  return s.Op("ResizeBilinear", loc)
      .Input(images)
      .Input(size)
      .Attr("align_corners", a.align_corners)
      .Attr("half_pixel_centers", a.half_pixel_centers)
      .Finalize1();
}

Output ResizeBilinearGrad(const Scope& s, Input grads, Input original_image, const ResizeAttrs& a,
                          std::source_location loc) {
  return s.Op("ResizeBilinearGrad", loc)
      .Input(grads)
      .Input(original_image)
      .Attr("align_corners", a.align_corners)
      .Attr("half_pixel_centers", a.half_pixel_centers)
      .Finalize1();
}

Output CropAndResize(const Scope& s, Input image, Input boxes, Input box_ind, Input crop_size,
                     const CropAndResizeAttrs& a, std::source_location loc) {
  return s.Op("CropAndResize", loc)
      .Input(image)
      .Input(boxes)
      .Input(box_ind)
      .Input(crop_size)
      .Attr("method", a.method)
      .Attr("extrapolation_value", a.extrapolation_value)
      .Finalize1();
}

Output CropAndResizeGradImage(const Scope& s, Input grads, Input boxes, Input box_ind,
                              Input image_size, DataType T, const std::string& method,
                              std::source_location loc) {
  return s.Op("CropAndResizeGradImage", loc)
      .Input(grads)
      .Input(boxes)
      .Input(box_ind)
      .Input(image_size)
      .Attr("T", T)
      .Attr("method", method)
      .Finalize1();
}

Output CropAndResizeGradBoxes(const Scope& s, Input grads, Input image, Input boxes, Input box_ind,
                              std::source_location loc) {
  return s.Op("CropAndResizeGradBoxes", loc)
      .Input(grads)
      .Input(image)
      .Input(boxes)
      .Input(box_ind)
      .Finalize1();
}

Output AdjustContrastv2(const Scope& s, Input images, Input contrast_factor,
                        std::source_location loc) {
  return s.Op("AdjustContrastv2", loc).Input(images).Input(contrast_factor).Finalize1();
}

}  // namespace ops
}  // namespace sluice
