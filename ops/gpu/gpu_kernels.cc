// Built with CUDA: every GPU kernel family, the GPU runtime kernels and the
// GPU device factory.
#include "ops/gpu/gpu_kernels.h"

#include "ops/gpu/nccl_collectives.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/gpu/gpu_runtime_kernels.h"

namespace sluice {

void RegisterGpuKernels(KernelRegistry* kernels) {
  RegisterGpuDevices();
  RegisterGpuRuntimeKernels(kernels);
  RegisterGpuArrayKernels(kernels);
  RegisterGpuCwiseKernels(kernels);
  RegisterGpuReductionKernels(kernels);
  RegisterGpuNnKernels(kernels);
  RegisterGpuMatMulKernels(kernels);
  RegisterGpuRandomKernels(kernels);
  RegisterGpuTrainingKernels(kernels);
  RegisterNcclCollectives();  // the collective executor's all-reduce for GPUs
}

}  // namespace sluice
