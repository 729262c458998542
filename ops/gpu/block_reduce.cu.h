// Device code shared by nn.cu, reduction.cu and argmax.cu: all-reduce of one value
// across a warp or a block. For nvcc only (listed in both cuda_library
// targets' hdrs); g++-compiled code never includes it.
//
//   __shared__ float smem[kWarp];
//   const float row_max = BlockAllReduce(v, MaxOp{}, smem);  // every thread gets it
//
// r(a, b) combines two values (accumulator first). All 32 lanes of the warp
// (all threads of the block, blockDim.x a multiple of 32) must call them;
// every caller gets the same result.
#ifndef SLUICE_OPS_GPU_BLOCK_REDUCE_CU_H_
#define SLUICE_OPS_GPU_BLOCK_REDUCE_CU_H_

#include <cuda_runtime.h>

namespace sluice {
namespace gpu {

inline constexpr int kWarp = 32;

template <typename A, typename R>
__device__ __forceinline__ A WarpAllReduce(A v, R r) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    v = r(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// smem: at least 32 elements of shared memory.
template <typename A, typename R>
__device__ A BlockAllReduce(A v, R r, A* smem) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  const int num_warps = blockDim.x / kWarp;
  v = WarpAllReduce(v, r);
  __syncthreads();  // smem may still be read by a previous call
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  A total = smem[0];
  for (int w = 1; w < num_warps; ++w) total = r(total, smem[w]);
  return total;
}

}  // namespace gpu
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_BLOCK_REDUCE_CU_H_
