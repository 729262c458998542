// The image family (ops/image/): decoders and encoders (DecodeJpeg,
// DecodePng, EncodePng, DecodeImage; image_codec_ops.h) and the transforms
// input pipelines use (ResizeBilinear, CropAndResize, AdjustContrastv2 and
// their gradient ops; image_ops.h). One row of the built-in list
// (ops/op_families.h) names these three functions; a new op library in this
// folder adds its calls here and nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterImageFamilyOps(&ops));
//   RETURN_IF_ERROR(RegisterImageFamilyGradients(&ops));  // after every family's ops
//   RegisterImageFamilyCpuKernels(&kernels);
//
// Errors: the first registration error. Thread-compatible: call during
// start-up, on registries the caller owns.
#ifndef SLUICE_OPS_IMAGE_IMAGE_FAMILY_H_
#define SLUICE_OPS_IMAGE_IMAGE_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterImageFamilyOps(OpRegistry* ops);
absl::Status RegisterImageFamilyGradients(OpRegistry* ops);
void RegisterImageFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_IMAGE_IMAGE_FAMILY_H_
