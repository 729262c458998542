#include "ops/builtins.h"

#include <cstdlib>
#include <iostream>

#include "ops/cpu_backend.h"
#include "ops/gpu/gpu_backend.h"
#include "ops/op_families.h"

namespace sluice {

absl::Status RegisterBuiltinOps(OpRegistry* ops) {
  return RegisterOpFamilies(BuiltinOpFamilies(), ops);
}

void RegisterBuiltinKernels(KernelRegistry* kernels) {
  BuiltinBackends()->RegisterKernels(kernels);
}

const BackendRegistry* BuiltinBackends() {
  static const BackendRegistry* const kBackends = [] {
    auto* backends = new BackendRegistry();
    // CPU first: the GPU's host kernels for int32 copy the CPU kernels.
    absl::Status s = backends->Add(NewCpuBackend());
    if (s.ok()) s = backends->Add(NewGpuBackend());
    if (!s.ok()) {
      std::cerr << "sluice: registering the built-in backends failed: " << s << "\n";
      std::abort();
    }
    return backends;
  }();
  return kBackends;
}

const OpRegistry* BuiltinOps() {
  static const OpRegistry* const kOps = [] {
    auto* ops = new OpRegistry();
    absl::Status s = RegisterBuiltinOps(ops);
    if (!s.ok()) {
      // A broken built-in definition is a bug in Sluice itself, never user input.
      std::cerr << "sluice: registering built-in ops failed: " << s << "\n";
      std::abort();
    }
    return ops;
  }();
  return kOps;
}

const KernelRegistry* BuiltinKernels() {
  static const KernelRegistry* const kKernels = [] {
    auto* kernels = new KernelRegistry();
    RegisterBuiltinKernels(kernels);
    return kernels;
  }();
  return kKernels;
}

}  // namespace sluice
