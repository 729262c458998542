#include "ops/strings/strings_family.h"

#include "base/status_macros.h"
#include "ops/strings/string_format_ops.h"
#include "ops/strings/string_ops.h"
#include "ops/strings/string_transform_ops.h"

namespace sluice {

absl::Status RegisterStringsFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterStringOps(ops));
  RETURN_IF_ERROR(RegisterStringFormatOps(ops));
  return RegisterStringTransformOps(ops);
}

void RegisterStringsFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterStringKernels(kernels);
  RegisterStringTransformKernels(kernels);
  RegisterStringFormatKernels(kernels);
}

}  // namespace sluice
