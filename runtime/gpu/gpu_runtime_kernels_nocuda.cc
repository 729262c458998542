// Built without CUDA: there are no GPU devices, so no GPU kernels.
#include "runtime/gpu/gpu_runtime_kernels.h"

namespace sluice {

void RegisterGpuRuntimeKernels(KernelRegistry* kernels) {}

}  // namespace sluice
