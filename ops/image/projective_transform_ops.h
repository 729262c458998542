// Projective transforms of images (tf.raw_ops.ImageProjectiveTransformV2
// and V3: what Keras's RandomRotation, RandomTranslation, RandomZoom and
// RandomShear layers and tf.keras.ops.image.affine_transform run), under
// TensorFlow's names, inputs and attrs:
//   ImageProjectiveTransformV2(images [batch, h, w, c], transforms float
//       [batch or 1, 8], output_shape int32 [2]) -> [batch, out_h, out_w, c]
//   ImageProjectiveTransformV3(..., fill_value float scalar)
//   attrs interpolation ("NEAREST" | "BILINEAR"), fill_mode ("CONSTANT",
//   the default, "REFLECT", "WRAP", "NEAREST")
// Output pixel (x, y) reads the input at ((a0 x + a1 y + a2) / k,
// (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, for transforms [a0 a1 a2
// b0 b1 b2 c0 c1]; points outside are folded back by fill_mode (scipy's
// rules) or, for CONSTANT, filled with fill_value (0 for V2), as are
// points with k = 0. Computed in float, as TensorFlow's CPU kernel; CPU
// kernels for uint8, int32, int64, half, bfloat16, float and double.
// Gradients (w.r.t. images only) are TensorFlow's: the incoming gradient
// transformed back by the inverse transforms, fill 0.
//
//   Output rotated = ops::ImageProjectiveTransformV3(s, images, transforms, {32, 32}, 0.0f,
//                                                    "BILINEAR", "REFLECT");
//
// Errors (InvalidArgument, TensorFlow's texts): images not 4-D, transforms
// not [batch or 1, 8], output_shape not two non-negative values, an
// unknown interpolation or fill_mode. Thread-safety: as Scope; kernels are
// stateless.
#ifndef SLUICE_OPS_IMAGE_PROJECTIVE_TRANSFORM_OPS_H_
#define SLUICE_OPS_IMAGE_PROJECTIVE_TRANSFORM_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterProjectiveTransformOps(OpRegistry* ops);
void RegisterProjectiveTransformKernels(KernelRegistry* kernels);

namespace ops {

Output ImageProjectiveTransformV3(const Scope& scope, Input images, Input transforms,
                                  Input output_shape, Input fill_value,
                                  const std::string& interpolation,
                                  const std::string& fill_mode = "CONSTANT",
                                  std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_PROJECTIVE_TRANSFORM_OPS_H_
