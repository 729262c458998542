#include "ops/strings/strings_family.h"

#include "ops/strings/string_ops.h"

namespace sluice {

absl::Status RegisterStringsFamilyOps(OpRegistry* ops) { return RegisterStringOps(ops); }

void RegisterStringsFamilyCpuKernels(KernelRegistry* kernels) { RegisterStringKernels(kernels); }

}  // namespace sluice
