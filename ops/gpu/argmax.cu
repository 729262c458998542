// CUDA code of ArgMax and ArgMin (launchers: reduction.cu.h): the first
// index of the largest (smallest) value along a dimension, NaNs losing to
// every number. Every piece is a template on kMin, the direction.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/gpu/argmax_order.cu.h"
#include "ops/gpu/block_reduce.cu.h"
#include "ops/gpu/reduce_common.cu.h"
#include "ops/gpu/reduction.cu.h"

namespace sluice {
namespace gpu {
namespace {

using reduce_internal::AccOf;
using reduce_internal::CeilDiv;
using reduce_internal::GridOf;
using reduce_internal::kMaxGridYZ;
using reduce_internal::kTileThreads;
using reduce_internal::kWarpRowsMaxWidth;
using reduce_internal::MaxBlocks;
using reduce_internal::NextPow2;
using reduce_internal::PrevPow2;
using reduce_internal::ToAcc;

using argmax_order::Better;
using argmax_order::kNoIndex;
using argmax_order::WorstValue;

template <bool kMin, typename A>
__device__ __forceinline__ void WarpArgBest(A& v, int64_t& i) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    const A ov = __shfl_xor_sync(0xffffffffu, v, offset);
    const int64_t oi = __shfl_xor_sync(0xffffffffu, i, offset);
    if (Better<kMin>(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
}

// x [rows, n] -> y [rows]; one warp (kWarpRows) or one block per row.
template <bool kMin, typename T, typename Idx, bool kWarpRows>
__global__ void ArgMaxRowKernel(const T* __restrict__ x, int64_t rows, int64_t n,
                                Idx* __restrict__ y) {
  using A = typename AccOf<T>::type;
  __shared__ A sv[kWarp];
  __shared__ int64_t si[kWarp];
  const int lane = threadIdx.x % kWarp;
  const int64_t per_block = kWarpRows ? blockDim.x / kWarp : 1;
  const int64_t first =
      kWarpRows ? int64_t{blockIdx.x} * per_block + threadIdx.x / kWarp : int64_t{blockIdx.x};
  const int step = kWarpRows ? kWarp : blockDim.x;
  const int rank = kWarpRows ? lane : threadIdx.x;
  for (int64_t row = first; row < rows; row += int64_t{gridDim.x} * per_block) {
    const T* xr = x + row * n;
    A v = WorstValue<kMin, A>();
    int64_t i = kNoIndex;
    for (int64_t k = rank; k < n; k += step) {
      const A xv = ToAcc(xr[k]);
      if (Better<kMin>(xv, k, v, i)) {
        v = xv;
        i = k;
      }
    }
    WarpArgBest<kMin>(v, i);
    if (kWarpRows) {
      if (lane == 0) y[row] = static_cast<Idx>(i);
      continue;
    }
    __syncthreads();  // sv/si of the previous row are read
    if (lane == 0) {
      sv[threadIdx.x / kWarp] = v;
      si[threadIdx.x / kWarp] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < static_cast<int>(blockDim.x / kWarp); ++w) {
        if (Better<kMin>(sv[w], si[w], v, i)) {
          v = sv[w];
          i = si[w];
        }
      }
      y[row] = static_cast<Idx>(i);
    }
  }
}

// x [outer, n, inner] -> y [outer, inner]; tiles as in ColumnKernel.
template <bool kMin, typename T, typename Idx>
__global__ void ArgMaxColumnKernel(const T* __restrict__ x, int64_t outer, int64_t n, int64_t inner,
                                   Idx* __restrict__ y) {
  using A = typename AccOf<T>::type;
  __shared__ A sv[kTileThreads];
  __shared__ int64_t si[kTileThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockDim.x, by = blockDim.y;
  const int64_t col_blocks = (inner + bx - 1) / bx;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    for (int64_t cb = blockIdx.x; cb < col_blocks; cb += gridDim.x) {
      const int64_t c = cb * bx + tx;
      A v = WorstValue<kMin, A>();
      int64_t i = kNoIndex;
      if (c < inner) {
        const T* xc = x + o * n * inner + c;
        for (int64_t k = ty; k < n; k += by) {
          const A xv = ToAcc(xc[k * inner]);
          if (Better<kMin>(xv, k, v, i)) {
            v = xv;
            i = k;
          }
        }
      }
      const int me = ty * bx + tx;
      sv[me] = v;
      si[me] = i;
      __syncthreads();
      for (int h = by / 2; h > 0; h /= 2) {
        if (ty < h) {
          const int other = (ty + h) * bx + tx;
          if (Better<kMin>(sv[other], si[other], sv[me], si[me])) {
            sv[me] = sv[other];
            si[me] = si[other];
          }
        }
        __syncthreads();
      }
      if (ty == 0 && c < inner) y[o * inner + c] = static_cast<Idx>(si[tx]);
      __syncthreads();
    }
  }
}

template <bool kMin, typename T, typename Idx>
cudaError_t RunArgMax(const void* x, int64_t outer, int64_t n, int64_t inner, void* y, int sm_count,
                      cudaStream_t stream) {
  const T* xt = static_cast<const T*>(x);
  Idx* yt = static_cast<Idx*>(y);
  if (inner == 1) {
    constexpr int kThreads = 256;
    if (n <= kWarpRowsMaxWidth) {
      const unsigned grid = GridOf(CeilDiv(outer, kThreads / kWarp), MaxBlocks(sm_count));
      ArgMaxRowKernel<kMin, T, Idx, true><<<grid, kThreads, 0, stream>>>(xt, outer, n, yt);
    } else {
      ArgMaxRowKernel<kMin, T, Idx, false>
          <<<GridOf(outer, MaxBlocks(sm_count)), kThreads, 0, stream>>>(xt, outer, n, yt);
    }
    return cudaGetLastError();
  }
  const int bx = static_cast<int>(std::min<int64_t>(kWarp, NextPow2(inner)));
  const int by =
      static_cast<int>(PrevPow2(std::max<int64_t>(1, std::min<int64_t>(kTileThreads / bx, n))));
  const dim3 grid(GridOf(CeilDiv(inner, bx), kMaxGridYZ), GridOf(outer, kMaxGridYZ), 1);
  ArgMaxColumnKernel<kMin, T, Idx><<<grid, dim3(bx, by), 0, stream>>>(xt, outer, n, inner, yt);
  return cudaGetLastError();
}

template <bool kMin, typename T>
cudaError_t RunArgMaxTyped(bool int64_output, const void* x, int64_t outer, int64_t n,
                           int64_t inner, void* y, int sm_count, cudaStream_t stream) {
  return int64_output ? RunArgMax<kMin, T, int64_t>(x, outer, n, inner, y, sm_count, stream)
                      : RunArgMax<kMin, T, int32_t>(x, outer, n, inner, y, sm_count, stream);
}

template <bool kMin>
cudaError_t LaunchArgBest(ReduceType type, bool int64_output, const void* x, int64_t outer,
                          int64_t n, int64_t inner, void* y, int sm_count, cudaStream_t stream) {
  if (outer < 0 || n < 1 || inner < 0) return cudaErrorInvalidValue;
  if (outer == 0 || inner == 0) return cudaSuccess;
  switch (type) {
    case ReduceType::kFloat:
      return RunArgMaxTyped<kMin, float>(int64_output, x, outer, n, inner, y, sm_count, stream);
    case ReduceType::kDouble:
      return RunArgMaxTyped<kMin, double>(int64_output, x, outer, n, inner, y, sm_count, stream);
    case ReduceType::kInt64:
      return RunArgMaxTyped<kMin, int64_t>(int64_output, x, outer, n, inner, y, sm_count, stream);
    case ReduceType::kHalf:
      return RunArgMaxTyped<kMin, __half>(int64_output, x, outer, n, inner, y, sm_count, stream);
    case ReduceType::kBFloat16:
      return RunArgMaxTyped<kMin, __nv_bfloat16>(int64_output, x, outer, n, inner, y, sm_count,
                                                 stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchArgMax(ReduceType type, bool int64_output, const void* x, int64_t outer,
                         int64_t n, int64_t inner, void* y, int sm_count, cudaStream_t stream) {
  return LaunchArgBest<false>(type, int64_output, x, outer, n, inner, y, sm_count, stream);
}

cudaError_t LaunchArgMin(ReduceType type, bool int64_output, const void* x, int64_t outer,
                         int64_t n, int64_t inner, void* y, int sm_count, cudaStream_t stream) {
  return LaunchArgBest<true>(type, int64_output, x, outer, n, inner, y, sm_count, stream);
}

}  // namespace gpu
}  // namespace sluice
