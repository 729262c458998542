// Random crops for image augmentation (tf.image.sample_distorted_bounding_box
// and its stateless form), under TensorFlow's names, inputs and attrs:
//   SampleDistortedBoundingBox           min_object_covered an attr
//   SampleDistortedBoundingBoxV2         min_object_covered a float input
//   StatelessSampleDistortedBoundingBox  V2's inputs and a seed [2]
// Given image_size [height, width, channels] (T: uint8, int8, int16, int32,
// int64) and boxes [batch, N, 4] of [ymin, xmin, ymax, xmax] in [0, 1],
// each run draws up to max_attempts crops with an aspect ratio uniform in
// aspect_ratio_range and an area fraction in area_range, and keeps the
// first covering at least min_object_covered of some box (the whole image
// when none does). Outputs: begin [y, x, 0] and size [h, w, -1] for Slice,
// and the crop as a box [1, 1, 4].
//
// The draws are TensorFlow's bit for bit: its SimplePhilox over the
// stateful ops' generator (seed, seed2; both 0: a random seed; each run
// reserves 4 x max_attempts words) or the stateless seed
// (ops/random/internal/philox_stream.h), with its rounding of sizes, so a
// seeded graph crops where TensorFlow's does. No boxes needs
// use_image_if_no_bounding_boxes. CPU kernels; no gradient. Errors
// (InvalidArgument, TensorFlow's texts): image_size not [3], boxes not
// [batch, N, 4] or outside [0, 1], a negative min_object_covered, ranges
// not two positive values (area at most 1), max_attempts < 1, a seed not
// [2].
//
//   auto box = ops::StatelessSampleDistortedBoundingBox(s, ops::Shape(s, img), boxes,
//                                                       ops::Const(s, 0.1f), seed);
//   Output crop = ops::Slice(s, img, box.begin, box.size);
//
// Thread-safety: as Scope; a stateful kernel's generator is reserved under
// a mutex.
#ifndef SLUICE_OPS_IMAGE_BOUNDING_BOX_OPS_H_
#define SLUICE_OPS_IMAGE_BOUNDING_BOX_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBoundingBoxOps(OpRegistry* ops);
void RegisterBoundingBoxKernels(KernelRegistry* kernels);

namespace ops {

struct DistortedBoundingBox {
  Output begin, size, bboxes;
};

struct SampleDistortedBoundingBoxAttrs {
  int64_t seed = 0;
  int64_t seed2 = 0;
  std::vector<float> aspect_ratio_range = {0.75f, 1.33f};
  std::vector<float> area_range = {0.05f, 1.0f};
  int64_t max_attempts = 100;
  bool use_image_if_no_bounding_boxes = false;
};

DistortedBoundingBox SampleDistortedBoundingBoxV2(
    const Scope& scope, Input image_size, Input bounding_boxes, Input min_object_covered,
    const SampleDistortedBoundingBoxAttrs& attrs = {},
    std::source_location loc = std::source_location::current());

// attrs.seed and seed2 are not used: the seed input decides.
DistortedBoundingBox StatelessSampleDistortedBoundingBox(
    const Scope& scope, Input image_size, Input bounding_boxes, Input min_object_covered,
    Input seed, const SampleDistortedBoundingBoxAttrs& attrs = {},
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_BOUNDING_BOX_OPS_H_
