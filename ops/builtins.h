// The built-in ops: one list that registers every op family's definitions,
// gradients and CPU kernels (STYLE.md §5: explicit, no static registrars).
//
//   OpRegistry ops;  KernelRegistry kernels;
//   RETURN_IF_ERROR(RegisterBuiltinOps(&ops));
//   RegisterBuiltinKernels(&kernels);
//   // or the process-wide, lazily built pair:
//   Scope root = Scope::NewRootScope(BuiltinOps());
//   SessionOptions opts = BuiltinSessionOptions();
//
// Thread-safe.
#ifndef SLUICE_OPS_BUILTINS_H_
#define SLUICE_OPS_BUILTINS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"
#include "runtime/session.h"

namespace sluice {

// Op definitions and their gradient functions.
absl::Status RegisterBuiltinOps(OpRegistry* ops);
// CPU kernels for them.
void RegisterBuiltinKernels(KernelRegistry* kernels);

// Registries holding every built-in, built on first use and never destroyed.
const OpRegistry* BuiltinOps();
const KernelRegistry* BuiltinKernels();
// SessionOptions with the built-in registries filled in.
SessionOptions BuiltinSessionOptions();

}  // namespace sluice

#endif  // SLUICE_OPS_BUILTINS_H_
