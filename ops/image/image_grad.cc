// Gradients of ResizeBilinear (TensorFlow's image_grad.py
// _ResizeBilinearGrad: ResizeBilinearGrad with the forward attrs; none for
// size) and CropAndResize (_CropAndResizeGrad: CropAndResizeGradImage for a
// floating image, CropAndResizeGradBoxes for bilinear; none for box_ind
// and crop_size). AdjustContrastv2 has none (an error, as in TensorFlow).
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/image/image_ops.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

absl::StatusOr<std::vector<Output>> ResizeBilinearGradFn(const Scope& s, const Node& node,
                                                         absl::Span<const Output> g) {
  ops::ResizeAttrs a;
  ASSIGN_OR_RETURN(a.align_corners, node.GetAttr<bool>("align_corners"));
  ASSIGN_OR_RETURN(a.half_pixel_centers, node.GetAttr<bool>("half_pixel_centers"));
  std::vector<Output> grads = {ops::ResizeBilinearGrad(s, g[0], internal::InputOf(node, 0), a),
                               Output()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

absl::StatusOr<std::vector<Output>> CropAndResizeGradFn(const Scope& s, const Node& node,
                                                        absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(std::string method, node.GetAttr<std::string>("method"));
  ASSIGN_OR_RETURN(DataType t, node.GetAttr<DataType>("T"));
  const Output image = internal::InputOf(node, 0);
  const Output boxes = internal::InputOf(node, 1);
  const Output box_ind = internal::InputOf(node, 2);
  std::vector<Output> grads(4);
  if (t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF) {
    grads[0] = ops::CropAndResizeGradImage(s, g[0], boxes, box_ind, ops::Shape(s, image), t, method);
  }
  if (method == "bilinear") grads[1] = ops::CropAndResizeGradBoxes(s, g[0], image, boxes, box_ind);
  RETURN_IF_ERROR(s.status());
  return grads;
}

// TensorFlow defines no gradient for AdjustContrastv2: differentiating
// through it is an error there, and here, naming the node.
absl::StatusOr<std::vector<Output>> AdjustContrastGradFn(const Scope&, const Node& node,
                                                         absl::Span<const Output>) {
  return absl::UnimplementedError(absl::StrCat("no gradient is defined for op '", node.op(),
                                               "' (node '", node.name(),
                                               "'), as in TensorFlow"));
}

}  // namespace

absl::Status RegisterImageGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("AdjustContrastv2", AdjustContrastGradFn));
  RETURN_IF_ERROR(ops->SetGradient("ResizeBilinear", ResizeBilinearGradFn));
  RETURN_IF_ERROR(ops->SetGradient("CropAndResize", CropAndResizeGradFn));
  return absl::OkStatus();
}

}  // namespace sluice
