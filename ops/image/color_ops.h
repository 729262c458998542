// Color-space conversions and color augmentations (tf.image.rgb_to_hsv,
// hsv_to_rgb, adjust_hue, adjust_saturation and their random_ forms),
// under TensorFlow's names, inputs and attrs; the last dimension holds the
// 3 channels, in [0, 1]:
//   RGBToHSV           hue in [0, 1) (0 for greys), saturation (max - min)
//                      / max (0 for black), value = max
//   HSVToRGB           the inverse (TensorFlow's piecewise-linear form)
//   AdjustHue          hue rotated by delta (a float scalar, in turns), with
//                      the value range kept: TensorFlow's hue/value-range
//                      path, not through HSV
//   AdjustSaturation   saturation multiplied by scale (a float scalar),
//                      clamped to [0, 1]
// CPU kernels for float (RGBToHSV and HSVToRGB: double too). RGBToHSV's
// gradient is TensorFlow's (image_grad.py: piecewise partial derivatives,
// ties broken R > G > B, 0 where a denominator is 0); HSVToRGB has none, as
// in TensorFlow, and the adjustments none. Errors (InvalidArgument,
// TensorFlow's texts): fewer than 3 dimensions for the adjustments, a last
// dimension other than 3, a delta or scale that is not a scalar.
//
//   Output jittered = ops::AdjustSaturation(s, ops::AdjustHue(s, images, 0.05f), 1.2f);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_IMAGE_COLOR_OPS_H_
#define SLUICE_OPS_IMAGE_COLOR_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterColorOps(OpRegistry* ops);
absl::Status RegisterColorGradients(OpRegistry* ops);
void RegisterColorKernels(KernelRegistry* kernels);

namespace ops {

Output RGBToHSV(const Scope& scope, Input images,
                std::source_location loc = std::source_location::current());
Output HSVToRGB(const Scope& scope, Input images,
                std::source_location loc = std::source_location::current());
Output AdjustHue(const Scope& scope, Input images, Input delta,
                 std::source_location loc = std::source_location::current());
Output AdjustSaturation(const Scope& scope, Input images, Input scale,
                        std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_COLOR_OPS_H_
