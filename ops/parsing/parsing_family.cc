#include "ops/parsing/parsing_family.h"

#include "base/status_macros.h"
#include "ops/parsing/decode_ops.h"
#include "ops/parsing/parsing_ops.h"
#include "ops/parsing/tensor_serialization_ops.h"

namespace sluice {

absl::Status RegisterParsingFamilyOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterParsingOps(ops));
  RETURN_IF_ERROR(RegisterDecodeOps(ops));
  RETURN_IF_ERROR(RegisterTensorSerializationOps(ops));
  return absl::OkStatus();
}

void RegisterParsingFamilyCpuKernels(KernelRegistry* kernels) {
  RegisterParsingKernels(kernels);
  RegisterDecodeKernels(kernels);
  RegisterTensorSerializationKernels(kernels);
}

}  // namespace sluice
