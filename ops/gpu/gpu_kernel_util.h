// Helpers shared by the GPU kernels' host side (the g++-compiled .cc files;
// the CUDA code itself sits in .cu files behind plain launcher headers).
//
//   class ReluGpuOp : public OpKernel {
//     absl::Status Compute(OpKernelContext* ctx) override {
//       ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
//       ...allocate outputs...
//       return LaunchStatus(ctx, LaunchRelu(x, y, n, stream));
//     }
//   };
//   kernels->Register<ReluGpuOp>(GpuKernel("Relu").TypeConstraint("T", DT_FLOAT));
//
// A GPU kernel's Compute only enqueues work on the device's compute stream;
// it never reads device memory on the host. Scalars a kernel needs (a
// learning rate) are read by the CUDA code through device pointers, or the
// argument is declared HostMemory in its KernelDef.
#ifndef SLUICE_OPS_GPU_GPU_KERNEL_UTIL_H_
#define SLUICE_OPS_GPU_GPU_KERNEL_UTIL_H_

#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/statusor.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

inline KernelDef GpuKernel(std::string op) { return KernelDef(std::move(op), kDeviceTypeGpu); }

// The kernel's device as a GPU (kernels registered for "GPU" only run there).
inline GpuDevice* GpuOf(OpKernelContext* ctx) { return static_cast<GpuDevice*>(ctx->device()); }

// Makes the kernel's GPU current on this thread; its compute stream.
absl::StatusOr<cudaStream_t> BeginLaunch(OpKernelContext* ctx);

// OK for cudaSuccess; else Internal naming the op, the device and the CUDA
// error (a launch's cudaGetLastError, a cudaMemsetAsync's result, ...).
absl::Status LaunchStatus(OpKernelContext* ctx, cudaError_t result);

// Enqueues zeros over all of `t` (device memory) on the compute stream: an
// empty sum in every float type.
absl::Status FillZeros(OpKernelContext* ctx, Tensor* t);

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_GPU_KERNEL_UTIL_H_
