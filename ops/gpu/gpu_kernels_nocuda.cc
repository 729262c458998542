// Built without CUDA: no GPU kernels and no GPU devices; every op runs on
// the CPU.
#include "ops/gpu/gpu_kernels.h"

namespace sluice {

void RegisterGpuKernels(KernelRegistry* kernels) {}

}  // namespace sluice
