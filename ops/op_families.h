// The one list of built-in op families: each row names a family (a folder
// under ops/) and its three registration functions. RegisterBuiltinOps
// (ops/builtins.h) and the CPU backend (ops/cpu_backend.h) both walk it, so
// a new family is one new row here, and a new op touches only its family's
// folder (its <family>_family.cc).
//
//   for (const OpFamily& family : BuiltinOpFamilies()) {
//     RETURN_IF_ERROR(family.register_ops(&ops));
//   }
//
// Order: the runtime's frame and Send/Recv ops come first; every family's
// op definitions are registered before any family's gradients (a gradient
// needs its op's definition); kernels in row order (the first kernel that
// matches a node wins, so a row's kernels take precedence over later rows').
//
// Thread-safe: the list is immutable; the functions are thread-compatible
// (call during start-up, on registries the caller owns).
#ifndef SLUICE_OPS_OP_FAMILIES_H_
#define SLUICE_OPS_OP_FAMILIES_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

struct OpFamily {
  const char* name;  // the folder under ops/, or "runtime"
  absl::Status (*register_ops)(OpRegistry* ops);
  // nullptr when the family has no gradients.
  absl::Status (*register_gradients)(OpRegistry* ops);
  void (*register_cpu_kernels)(KernelRegistry* kernels);
};

// Every built-in family, in registration order. Static storage.
absl::Span<const OpFamily> BuiltinOpFamilies();

// Op definitions of every family, then gradients of every family; the
// first error, prefixed with the family's name.
absl::Status RegisterOpFamilies(absl::Span<const OpFamily> families, OpRegistry* ops);
// CPU kernels of every family, in row order.
void RegisterOpFamilyCpuKernels(absl::Span<const OpFamily> families, KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_OP_FAMILIES_H_
