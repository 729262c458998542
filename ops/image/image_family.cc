#include "ops/image/image_family.h"

#include "base/status_macros.h"
#include "ops/image/bounding_box_ops.h"
#include "ops/image/color_ops.h"
#include "ops/image/draw_bounding_box_ops.h"
#include "ops/image/image_codec_ops.h"
#include "ops/image/image_ops.h"
#include "ops/image/nms_ops.h"
#include "ops/image/patch_ops.h"
#include "ops/image/projective_transform_ops.h"
#include "ops/image/resize_area_ops.h"
#include "ops/image/resize_ops.h"

namespace sluice {

absl::Status RegisterImageFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterImageCodecOps(ops));
  RETURN_IF_ERROR(RegisterImageOps(ops));
  RETURN_IF_ERROR(RegisterNmsOps(ops));
  RETURN_IF_ERROR(RegisterResizeOps(ops));
  RETURN_IF_ERROR(RegisterColorOps(ops));
  RETURN_IF_ERROR(RegisterBoundingBoxOps(ops));
  RETURN_IF_ERROR(RegisterPatchOps(ops));
  RETURN_IF_ERROR(RegisterProjectiveTransformOps(ops));
  RETURN_IF_ERROR(RegisterResizeAreaOps(ops));
  RETURN_IF_ERROR(RegisterDrawBoundingBoxOps(ops));
  return absl::OkStatus();
}

absl::Status RegisterImageFamilyGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterImageGradients(ops));
  RETURN_IF_ERROR(RegisterColorGradients(ops));
  RETURN_IF_ERROR(RegisterPatchGradients(ops));
  return RegisterResizeGradients(ops);
}

void RegisterImageFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterImageCodecKernels(kernels);
  RegisterImageKernels(kernels);
  RegisterNmsKernels(kernels);
  RegisterResizeKernels(kernels);
  RegisterColorKernels(kernels);
  RegisterBoundingBoxKernels(kernels);
  RegisterPatchKernels(kernels);
  RegisterProjectiveTransformKernels(kernels);
  RegisterResizeAreaKernels(kernels);
  RegisterDrawBoundingBoxKernels(kernels);
}

}  // namespace sluice
