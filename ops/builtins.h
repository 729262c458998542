// The built-ins: every op family's definitions and gradients, from the one
// family list (ops/op_families.h), and the one list of backends (CPU, then GPU: their devices,
// kernels and all-reduce; runtime/backend.h). STYLE.md §5: explicit, no
// static registrars, no process-global device tables.
//
//   OpRegistry ops;  KernelRegistry kernels;
//   RETURN_IF_ERROR(RegisterBuiltinOps(&ops));
//   BuiltinBackends()->RegisterKernels(&kernels);  // = RegisterBuiltinKernels
//   // or the process-wide, lazily built pair:
//   Scope root = Scope::NewRootScope(BuiltinOps());
//   SessionConfig config = BuiltinSessionConfig();   // builtin_session.h
//
// Thread-safe.
#ifndef SLUICE_OPS_BUILTINS_H_
#define SLUICE_OPS_BUILTINS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions and their gradient functions.
absl::Status RegisterBuiltinOps(OpRegistry* ops);
// Every built-in backend's kernels for them.
void RegisterBuiltinKernels(KernelRegistry* kernels);

// Registries holding every built-in, built on first use and never destroyed.
const OpRegistry* BuiltinOps();
const KernelRegistry* BuiltinKernels();
// The CPU backend (ops/cpu_backend.h), then the GPU backend
// (ops/gpu/gpu_backend.h), which makes no devices without CUDA or a GPU.
const BackendRegistry* BuiltinBackends();

}  // namespace sluice

#endif  // SLUICE_OPS_BUILTINS_H_
