// The GPU backend (runtime/backend.h): one GpuDevice per visible GPU
// (runtime/gpu/gpu_devices.h), the GPU kernels of the built-in ops
// (ops/gpu/gpu_kernels.h) and NCCL's all-reduce, in one process and across
// processes (runtime/gpu/nccl_collectives.h). ops/builtins.h lists it in
// BuiltinBackends() after the CPU backend.
//
//   BackendRegistry backends;
//   RETURN_IF_ERROR(backends.Add(NewCpuBackend()));
//   RETURN_IF_ERROR(backends.Add(NewGpuBackend()));
//
// Without CUDA (or without a GPU) it makes no devices; without NCCL it
// brings no all-reduce, and GPU all-reduces take the CPU ring.
// Thread-safe.
#ifndef SLUICE_OPS_GPU_GPU_BACKEND_H_
#define SLUICE_OPS_GPU_GPU_BACKEND_H_

#include <memory>

#include "runtime/backend.h"

namespace sluice {

std::unique_ptr<Backend> NewGpuBackend();

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_GPU_BACKEND_H_
