// Built with CUDA: every GPU kernel family and the GPU runtime kernels.
#include "ops/gpu/gpu_kernels.h"

#include "runtime/gpu/gpu_runtime_kernels.h"

namespace sluice {

void RegisterGpuKernels(KernelRegistry* kernels) {
  RegisterGpuRuntimeKernels(kernels);
  RegisterGpuArrayKernels(kernels);
  RegisterGpuNdIndexKernels(kernels);
  RegisterGpuPadKernels(kernels);
  RegisterGpuOneHotKernels(kernels);
  RegisterGpuCwiseKernels(kernels);
  RegisterGpuReductionKernels(kernels);
  RegisterGpuNnKernels(kernels);
  RegisterGpuActivationKernels(kernels);
  RegisterGpuBatchNormKernels(kernels);
  RegisterGpuMatMulKernels(kernels);
  RegisterGpuBatchMatMulKernels(kernels);
  RegisterGpuFusedKernels(kernels);
  RegisterGpuConvKernels(kernels);
  RegisterGpuRandomKernels(kernels);
  RegisterGpuTrainingKernels(kernels);
  RegisterGpuMultiApplyKernels(kernels);
  RegisterGpuSparseTrainingKernels(kernels);
  // Last: its host kernels serve only what no device kernel above took.
  RegisterGpuControlFlowKernels(kernels);
}

}  // namespace sluice
