// ResizeArea (tf.image.resize with method "area", tf.compat.v1.image.
// resize_area) under TensorFlow's name, inputs and attrs: images [batch,
// h, w, c] of a real type and size int32 [2] -> float [batch, new_h,
// new_w, c], each output pixel the average of the input area it covers,
// pixels cut by its edges weighted by the part inside; attr align_corners
// (scale (in - 1) / (out - 1) instead of in / out). Computed in float in
// TensorFlow's order, without fused multiply-adds, so values are
// TensorFlow's. CPU kernels for int8, uint8, int16, uint16, int32, int64,
// float and double. No gradient (none in TensorFlow).
//
//   Output small = ops::ResizeArea(s, images, ops::Const(s, {14, 14}));
//
// Errors (InvalidArgument): images not 4-D or empty, size not two positive
// values. Thread-safety: as Scope; the kernel is stateless.
#ifndef SLUICE_OPS_IMAGE_RESIZE_AREA_OPS_H_
#define SLUICE_OPS_IMAGE_RESIZE_AREA_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterResizeAreaOps(OpRegistry* ops);
void RegisterResizeAreaKernels(KernelRegistry* kernels);

namespace ops {

Output ResizeArea(const Scope& scope, Input images, Input size, bool align_corners = false,
                  std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_RESIZE_AREA_OPS_H_
