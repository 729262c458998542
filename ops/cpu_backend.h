// The CPU backend (runtime/backend.h): CPU:0 and the virtual CPU devices
// (runtime/local_devices.h), with the CPU kernels of every built-in op:
// each row of the family list (ops/op_families.h), the runtime's frame and
// Send/Recv kernels first. Its collectives take the executor's own CPU ring.
// ops/builtins.h lists it first in BuiltinBackends().
//
//   BackendRegistry backends;
//   RETURN_IF_ERROR(backends.Add(NewCpuBackend()));
//
// Thread-safe.
#ifndef SLUICE_OPS_CPU_BACKEND_H_
#define SLUICE_OPS_CPU_BACKEND_H_

#include <memory>

#include "runtime/backend.h"

namespace sluice {

std::unique_ptr<Backend> NewCpuBackend();

// The CPU kernels alone (what the CPU backend registers).
void RegisterCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_CPU_BACKEND_H_
