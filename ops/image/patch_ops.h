// ExtractImagePatches (tf.image.extract_patches, what ViT-style models cut
// images into patches with), under TensorFlow's name, input and attrs:
// images [batch, rows, cols, depth] -> [batch, out_rows, out_cols,
// ksize_rows * ksize_cols * depth], each output pixel the window of
// ksizes [1, kr, kc, 1] at strides [1, sr, sc, 1], its taps `rates`
// [1, rr, rc, 1] apart, flattened in (row, col, depth) order; padding
// "VALID" or "SAME" (windows centred as Conv2D's; taps outside are 0).
// CPU kernel for every fixed-size dtype. The gradient is TensorFlow's:
// each input element gets the sum of the output entries that copied it
// (built from ExtractImagePatches of an index image and
// UnsortedSegmentSum, float and double).
//
//   Output patches = ops::ExtractImagePatches(s, images, {1, 16, 16, 1}, {1, 16, 16, 1},
//                                             {1, 1, 1, 1}, "VALID");
//
// Errors (InvalidArgument): images not 4-D, attrs not 4 values with 1 in
// the batch and depth places, sizes or strides < 1, a window larger than
// a VALID input, an unknown padding. Thread-safety: as Scope; the kernel
// is stateless.
#ifndef SLUICE_OPS_IMAGE_PATCH_OPS_H_
#define SLUICE_OPS_IMAGE_PATCH_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterPatchOps(OpRegistry* ops);
absl::Status RegisterPatchGradients(OpRegistry* ops);
void RegisterPatchKernels(KernelRegistry* kernels);

namespace ops {

Output ExtractImagePatches(const Scope& scope, Input images, std::vector<int64_t> ksizes,
                           std::vector<int64_t> strides, std::vector<int64_t> rates,
                           const std::string& padding,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_PATCH_OPS_H_
