// The GPU kernels of the built-in ops (the GPU backend's kernels,
// ops/gpu/gpu_backend.h).
//
//   RegisterGpuKernels(&kernels);   // GpuBackend::RegisterKernels does this
//
// Registers every GPU kernel (CUDA kernels, cuBLAS MatMul, the GPU
// Send/Recv/_Arg/_Retval, host kernels for int32 shape arithmetic). Built
// without CUDA it does nothing (and the backend makes no GPU devices), so
// every op runs on the CPU. Thread-compatible: call once per registry, at
// start-up.
#ifndef SLUICE_OPS_GPU_GPU_KERNELS_H_
#define SLUICE_OPS_GPU_GPU_KERNELS_H_

#include "runtime/kernel_registry.h"

namespace sluice {

void RegisterGpuKernels(KernelRegistry* kernels);

// The families, each in its own file (ops/gpu/*_kernels.cc).
void RegisterGpuCwiseKernels(KernelRegistry* kernels);      // elementwise, broadcasting, Cast, AddN, Select
void RegisterGpuReductionKernels(KernelRegistry* kernels);  // Sum, Mean, Max, Min, Prod, ArgMax, ArgMin
void RegisterGpuNnKernels(KernelRegistry* kernels);         // Relu, softmax, cross-entropy, bias
void RegisterGpuBatchNormKernels(KernelRegistry* kernels);   // FusedBatchNorm{,V2,V3} and their gradients
void RegisterGpuActivationKernels(KernelRegistry* kernels);  // Relu6, Elu, Selu, LeakyRelu, Softplus, Softsign, grads
void RegisterGpuMatMulKernels(KernelRegistry* kernels);     // cuBLAS
void RegisterGpuBatchMatMulKernels(KernelRegistry* kernels);  // BatchMatMul{,V2}: strided batched cuBLAS
void RegisterGpuFusedKernels(KernelRegistry* kernels);
void RegisterGpuConvKernels(KernelRegistry* kernels);       // Conv2D and backprops (im2col + cuBLAS), MaxPool      // _FusedMatMul, _MatMulBiasAddGrad (cuBLASLt)
void RegisterGpuRandomKernels(KernelRegistry* kernels);     // Philox
void RegisterGpuTrainingKernels(KernelRegistry* kernels);   // Apply*, AssignAdd/Sub
void RegisterGpuMultiApplyKernels(KernelRegistry* kernels);  // _MultiApply* (grouped updates)
void RegisterGpuSparseTrainingKernels(KernelRegistry* kernels);  // Scatter*, SparseApply*, Adagrad, Ftrl
void RegisterGpuNdIndexKernels(KernelRegistry* kernels);     // GatherNd, ScatterNd
void RegisterGpuPadKernels(KernelRegistry* kernels);         // Pad, PadV2
void RegisterGpuOneHotKernels(KernelRegistry* kernels);      // OneHot
void RegisterGpuArrayKernels(KernelRegistry* kernels);      // Const, Identity, shapes, Fill, Transpose, host int32 kernels
void RegisterGpuControlFlowKernels(KernelRegistry* kernels);  // loops, stacks, TensorArrays

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_GPU_KERNELS_H_
