// The grid-stride loop shared by the training kernels (ops/gpu/training.cu,
// ops/gpu/sparse_training.cu): 256 threads a block, at most 65,535 blocks,
// each thread taking every Stride()-th element from FirstIndex().
//
//   Kernel<<<GridFor(n), kThreads, 0, stream>>>(...);
//   for (int64_t i = FirstIndex(); i < n; i += Stride()) ...
//
// CUDA only: nvcc reads it.
#ifndef SLUICE_OPS_GPU_GRID_STRIDE_CU_H_
#define SLUICE_OPS_GPU_GRID_STRIDE_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace sluice::gpu::grid {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

inline int GridFor(int64_t n) {
  int64_t g = (n + kThreads - 1) / kThreads;
  if (g < 1) g = 1;
  if (g > kMaxBlocks) g = kMaxBlocks;
  return static_cast<int>(g);
}

__device__ __forceinline__ int64_t FirstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t Stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace sluice::gpu::grid

#endif  // SLUICE_OPS_GPU_GRID_STRIDE_CU_H_
