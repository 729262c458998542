// The strings family (ops/op_families.h): string_ops.h.
#ifndef SLUICE_OPS_STRINGS_STRINGS_FAMILY_H_
#define SLUICE_OPS_STRINGS_STRINGS_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStringsFamilyOps(OpRegistry* ops);
void RegisterStringsFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_STRINGS_STRINGS_FAMILY_H_
