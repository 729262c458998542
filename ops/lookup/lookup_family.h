// The lookup family (ops/op_families.h): lookup_ops.h.
#ifndef SLUICE_OPS_LOOKUP_LOOKUP_FAMILY_H_
#define SLUICE_OPS_LOOKUP_LOOKUP_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterLookupFamilyOps(OpRegistry* ops);
void RegisterLookupFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_LOOKUP_LOOKUP_FAMILY_H_
