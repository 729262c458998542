#include "ops/lookup/lookup_family.h"

#include "ops/lookup/lookup_ops.h"

namespace sluice {

absl::Status RegisterLookupFamilyOps(OpRegistry* ops) { return RegisterLookupOps(ops); }

void RegisterLookupFamilyCpuKernels(KernelRegistry* kernels) { RegisterLookupKernels(kernels); }

}  // namespace sluice
