// Nearest-neighbour and bicubic image resizing with TensorFlow's names and
// attrs (tf.image.resize's "nearest" and "bicubic" methods, Keras'
// UpSampling2D and Resizing layers): ResizeNearestNeighbor and
// ResizeBicubic with their gradient ops ResizeNearestNeighborGrad and
// ResizeBicubicGrad. CPU kernels in resize_kernels.cc.
//
//   Output up = ops::ResizeNearestNeighbor(s, x, ops::Const(s, {64, 64}));
//   Output smooth = ops::ResizeBicubic(s, x, ops::Const(s, {299, 299}),
//                                      {.half_pixel_centers = true});  // float
//
// Sampling is TensorFlow's: output pixel y reads input row floor(y *
// scale) (round under align_corners; floor((y + 0.5) * scale) with
// half_pixel_centers), scale = in / out or (in - 1) / (out - 1) under
// align_corners. Bicubic uses the cubic convolution kernel of Keys with a =
// -0.5 and weights renormalized at the borders under half_pixel_centers,
// else a = -0.75 with the border pixels repeated, its weights looked up in
// TensorFlow's table of 1024 steps, so results match TensorFlow's to
// rounding. Nearest neighbour keeps the dtype; bicubic gives float.
//
// Gradients: each op's gradient op with the forward attrs (none for size).
// Errors: InvalidArgument naming the input (images not 4-D, size not two
// positive ints, both align_corners and half_pixel_centers). Thread-safety:
// as Scope; kernels are stateless.
#ifndef SLUICE_OPS_IMAGE_RESIZE_OPS_H_
#define SLUICE_OPS_IMAGE_RESIZE_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/image/image_ops.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterResizeOps(OpRegistry* ops);
absl::Status RegisterResizeGradients(OpRegistry* ops);
void RegisterResizeKernels(KernelRegistry* kernels);

namespace ops {

Output ResizeNearestNeighbor(const Scope& scope, Input images, Input size,
                             const ResizeAttrs& attrs = {},
                             std::source_location loc = std::source_location::current());
// grads [b, h', w', c]; size: the original height and width.
Output ResizeNearestNeighborGrad(const Scope& scope, Input grads, Input size,
                                 const ResizeAttrs& attrs = {},
                                 std::source_location loc = std::source_location::current());
Output ResizeBicubic(const Scope& scope, Input images, Input size, const ResizeAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
// grads: float [b, h', w', c]; original_image gives the output's shape and type.
Output ResizeBicubicGrad(const Scope& scope, Input grads, Input original_image,
                         const ResizeAttrs& attrs = {},
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_RESIZE_OPS_H_
