// ResizeNearestNeighbor and ResizeBicubic: definitions, shape functions,
// wrappers and gradients (TensorFlow's image_grad.py: the gradient op with
// the forward attrs; the original size as a constant when known).
#include "ops/image/resize_ops.h"

#include <string>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/image/internal/resize_util.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

absl::Status SameAsInput(InferenceContext* c, int i) {
  c->set_output(0, c->input(i));
  return absl::OkStatus();
}

OpDefBuilder Resize(const char* name, const std::string& types) {
  OpDefBuilder b(name);
  b.Attr("T: " + types)
      .Attr("align_corners: bool = false")
      .Attr("half_pixel_centers: bool = false");
  return b;
}

absl::StatusOr<ops::ResizeAttrs> AttrsOf(const Node& node) {
  ops::ResizeAttrs a;
  ASSIGN_OR_RETURN(a.align_corners, node.GetAttr<bool>("align_corners"));
  ASSIGN_OR_RETURN(a.half_pixel_centers, node.GetAttr<bool>("half_pixel_centers"));
  return a;
}

absl::StatusOr<std::vector<Output>> NearestGrad(const Scope& s, const Node& node,
                                                absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(ops::ResizeAttrs a, AttrsOf(node));
  const Output image = internal::InputOf(node, 0);
  const TensorShape& shape = image.shape();
  Output size;
  if (shape.rank() == 4 && shape.dim(1) >= 0 && shape.dim(2) >= 0) {
    size = ops::Const(s, std::vector<int32_t>{static_cast<int32_t>(shape.dim(1)),
                                              static_cast<int32_t>(shape.dim(2))});
  } else {
    size = ops::StridedSlice(s, ops::Shape(s, image), {1}, {3}, {1});
  }
  std::vector<Output> grads = {ops::ResizeNearestNeighborGrad(s, g[0], size, a), Output()};
  RETURN_IF_ERROR(s.status());
  return grads;
}

absl::StatusOr<std::vector<Output>> BicubicGrad(const Scope& s, const Node& node,
                                                absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(ops::ResizeAttrs a, AttrsOf(node));
  ASSIGN_OR_RETURN(DataType t, node.GetAttr<DataType>("T"));
  std::vector<Output> grads(2);
  // As TensorFlow: integer images get no gradient.
  if (t == DT_FLOAT || t == DT_DOUBLE) {
    grads[0] = ops::ResizeBicubicGrad(s, g[0], internal::InputOf(node, 0), a);
  }
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterResizeOps(OpRegistry* ops) {
  const std::string real = internal::kImageRealTypes;
  RETURN_IF_ERROR(ops->Register(Resize("ResizeNearestNeighbor", real)
                                    .Input("images: T")
                                    .Input("size: int32")
                                    .Output("resized_images: T")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return internal::ResizedShape(c, 0, 1, 0);
                                    })));
  RETURN_IF_ERROR(
      ops->Register(Resize("ResizeNearestNeighborGrad",
                           "{uint8, int8, int32, half, float, double, bfloat16}")
                        .Input("grads: T")
                        .Input("size: int32")
                        .Output("output: T")
                        .SetShapeFn([](InferenceContext* c) {
                          return internal::ResizedShape(c, 0, 1, 0);
                        })));
  RETURN_IF_ERROR(ops->Register(Resize("ResizeBicubic", real)
                                    .Input("images: T")
                                    .Input("size: int32")
                                    .Output("resized_images: float")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return internal::ResizedShape(c, 0, 1, 0);
                                    })));
  RETURN_IF_ERROR(ops->Register(Resize("ResizeBicubicGrad", "{float, double}")
                                    .Input("grads: float")
                                    .Input("original_image: T")
                                    .Output("output: T")
                                    .SetShapeFn([](InferenceContext* c) {
                                      RETURN_IF_ERROR(c->WithRank(0, 4));
                                      RETURN_IF_ERROR(c->WithRank(1, 4));
                                      return SameAsInput(c, 1);
                                    })));
  for (const char* op : {"ResizeNearestNeighborGrad", "ResizeBicubicGrad"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

absl::Status RegisterResizeGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("ResizeNearestNeighbor", NearestGrad));
  RETURN_IF_ERROR(ops->SetGradient("ResizeBicubic", BicubicGrad));
  return absl::OkStatus();
}

namespace ops {
namespace {

Output ResizeOp(const Scope& s, const char* op, Input a, Input b, const ResizeAttrs& attrs,
                std::source_location loc) {
  return s.Op(op, loc)
      .Input(a)
      .Input(b)
      .Attr("align_corners", attrs.align_corners)
      .Attr("half_pixel_centers", attrs.half_pixel_centers)
      .Finalize1();
}

}  // namespace

Output ResizeNearestNeighbor(const Scope& s, Input images, Input size, const ResizeAttrs& attrs,
                             std::source_location loc) {
  return ResizeOp(s, "ResizeNearestNeighbor", images, size, attrs, loc);
}
Output ResizeNearestNeighborGrad(const Scope& s, Input grads, Input size, const ResizeAttrs& attrs,
                                 std::source_location loc) {
  return ResizeOp(s, "ResizeNearestNeighborGrad", grads, size, attrs, loc);
}
Output ResizeBicubic(const Scope& s, Input images, Input size, const ResizeAttrs& attrs,
                     std::source_location loc) {
  return ResizeOp(s, "ResizeBicubic", images, size, attrs, loc);
}
Output ResizeBicubicGrad(const Scope& s, Input grads, Input original_image,
                         const ResizeAttrs& attrs, std::source_location loc) {
  return ResizeOp(s, "ResizeBicubicGrad", grads, original_image, attrs, loc);
}

}  // namespace ops
}  // namespace sluice
