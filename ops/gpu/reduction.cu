// CUDA code of the reductions (launchers: reduction.cu.h; ArgMax: argmax.cu).
//
// Layouts. A 3-D problem [outer, reduced, inner] runs as
//   - rows (inner == 1): one warp per row for short rows, else one block per
//     row; a few long rows are split along the row over several blocks
//     (first pass: partial results in scratch, second pass: rows of partials);
//   - columns (inner > 1): a tile of bx threads along inner by by threads
//     along reduced, partial results combined in shared memory; the reduced
//     range is split over gridDim.z (two passes) when there are too few tiles
//     to fill the GPU.
// Anything else (alternating kept and reduced groups) runs the general
// kernels: one block per output element, or one thread per output element
// when the reductions are short, with input offsets decomposed from strides.
//
// Accumulation is in AccOf<T> (float for half and bfloat16); every combine
// takes the accumulator first, and Max/Min move to b when a < b (b < a) or b
// is NaN, so a NaN input wins whatever its place (TensorFlow's rule).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/gpu/block_reduce.cu.h"
#include "ops/gpu/reduce_common.cu.h"
#include "ops/gpu/reduction.cu.h"

namespace sluice {
namespace gpu {
namespace {

using reduce_internal::AccOf;
using reduce_internal::CeilDiv;
using reduce_internal::FromAcc;
using reduce_internal::GridOf;
using reduce_internal::IsNan;
using reduce_internal::kMaxGridYZ;
using reduce_internal::kTileThreads;
using reduce_internal::kWarpRowsMaxWidth;
using reduce_internal::MaxBlocks;
using reduce_internal::NextPow2;
using reduce_internal::PrevPow2;
using reduce_internal::Sms;
using reduce_internal::ToAcc;

// ---------------------------------------------------------------------------
// Reducers (combine: accumulator first) and finalizers.

struct SumR {
  template <typename A>
  __device__ __forceinline__ static A Identity() {
    return A(0);
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct ProdR {
  template <typename A>
  __device__ __forceinline__ static A Identity() {
    return A(1);
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a * b;
  }
};
struct MaxR {
  template <typename A>
  __device__ __forceinline__ static A Identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) {
      return -std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::lowest();
    }
  }
  // NaN wins (TensorFlow's reduce_max; the CPU's too), whichever side.
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a < b || IsNan(b) ? b : a;
  }
};
struct MinR {
  template <typename A>
  __device__ __forceinline__ static A Identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) {
      return std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::max();
    }
  }
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return b < a || IsNan(b) ? b : a;
  }
};

struct NoFinal {
  template <typename A>
  __device__ __forceinline__ A operator()(A a) const {
    return a;
  }
};
// Mean: the sum over the count; an integer mean of nothing stays 0 (the CPU
// skips the division), a floating one is 0/0.
struct MeanFinal {
  int64_t count;
  template <typename A>
  __device__ __forceinline__ A operator()(A a) const {
    if constexpr (std::is_integral_v<A>) {
      return count > 0 ? a / static_cast<A>(count) : a;
    } else {
      return a / static_cast<A>(count);
    }
  }
};

// ---------------------------------------------------------------------------
// Kernels.

template <typename Out, typename A, typename R, typename Fin>
__global__ void FillKernel(Out* y, int64_t n, Fin fin) {
  const Out value = FromAcc<Out>::Convert(fin(R::template Identity<A>()));
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = value;
  }
}

// x [rows, width] -> y [rows]: one warp per row.
template <typename In, typename A, typename Out, typename R, typename Fin>
__global__ void RowWarpKernel(const In* __restrict__ x, int64_t rows, int64_t width,
                              Out* __restrict__ y, R r, Fin fin) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps_per_block = blockDim.x / kWarp;
  for (int64_t row = int64_t{blockIdx.x} * warps_per_block + threadIdx.x / kWarp; row < rows;
       row += int64_t{gridDim.x} * warps_per_block) {
    const In* xr = x + row * width;
    A acc = R::template Identity<A>();
    for (int64_t i = lane; i < width; i += kWarp) acc = r(acc, ToAcc(xr[i]));
    acc = WarpAllReduce(acc, r);
    if (lane == 0) y[row] = FromAcc<Out>::Convert(fin(acc));
  }
}

// x [rows, width] -> y [rows, gridDim.y]: block (row, s) reduces the columns
// [s * chunk, (s + 1) * chunk) of its row.
template <typename In, typename A, typename Out, typename R, typename Fin>
__global__ void RowBlockKernel(const In* __restrict__ x, int64_t rows, int64_t width, int64_t chunk,
                               Out* __restrict__ y, R r, Fin fin) {
  __shared__ A smem[kWarp];
  const int64_t splits = gridDim.y;
  const int64_t s = blockIdx.y;
  const int64_t begin = s * chunk;
  const int64_t end = begin + chunk < width ? begin + chunk : width;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const In* xr = x + row * width;
    A acc = R::template Identity<A>();
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) acc = r(acc, ToAcc(xr[i]));
    acc = BlockAllReduce(acc, r, smem);
    if (threadIdx.x == 0) y[row * splits + s] = FromAcc<Out>::Convert(fin(acc));
  }
}

// x [outer, reduced, inner] -> y [outer, gridDim.z, inner]. Block (bx, by),
// by a power of two, bx * by <= kTileThreads: thread (tx, ty) of tile
// (cb, o, s) reduces column cb * bx + tx over the rows ty, ty + by, ... of
// [s * chunk, (s + 1) * chunk); shared memory combines the by partials.
template <typename In, typename A, typename Out, typename R, typename Fin>
__global__ void ColumnKernel(const In* __restrict__ x, int64_t outer, int64_t reduced,
                             int64_t inner, int64_t chunk, Out* __restrict__ y, R r, Fin fin) {
  __shared__ A smem[kTileThreads];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bx = blockDim.x, by = blockDim.y;
  const int64_t splits = gridDim.z;
  const int64_t s = blockIdx.z;
  const int64_t begin = s * chunk;
  const int64_t end = begin + chunk < reduced ? begin + chunk : reduced;
  const int64_t col_blocks = (inner + bx - 1) / bx;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    for (int64_t cb = blockIdx.x; cb < col_blocks; cb += gridDim.x) {
      const int64_t c = cb * bx + tx;
      A acc = R::template Identity<A>();
      if (c < inner) {
        const In* xc = x + o * reduced * inner + c;
        for (int64_t k = begin + ty; k < end; k += by) acc = r(acc, ToAcc(xc[k * inner]));
      }
      smem[ty * bx + tx] = acc;
      __syncthreads();
      for (int h = by / 2; h > 0; h /= 2) {
        if (ty < h) smem[ty * bx + tx] = r(smem[ty * bx + tx], smem[(ty + h) * bx + tx]);
        __syncthreads();
      }
      if (ty == 0 && c < inner) {
        y[(o * splits + s) * inner + c] = FromAcc<Out>::Convert(fin(smem[tx]));
      }
      __syncthreads();  // smem is reused by the next tile
    }
  }
}

// The general layout: output element o's input offset comes from o's
// coordinates over the kept groups, reduced element k's from k's over the
// reduced groups (row-major, the last group fastest).
struct GeneralDims {
  int num_kept = 0, num_reduced = 0;
  int64_t kept_size[kMaxReduceGroups], kept_stride[kMaxReduceGroups];
  int64_t reduced_size[kMaxReduceGroups], reduced_stride[kMaxReduceGroups];
};

__device__ __forceinline__ int64_t OffsetOf(int64_t index, int n, const int64_t* size,
                                            const int64_t* stride) {
  int64_t offset = 0;
  for (int k = n - 1; k >= 0; --k) {
    const int64_t q = index / size[k];
    offset += (index - q * size[k]) * stride[k];
    index = q;
  }
  return offset;
}

// One thread per output element; the innermost reduced group is a plain
// strided loop.
template <typename In, typename A, typename Out, typename R, typename Fin>
__global__ void GeneralThreadKernel(const In* __restrict__ x, GeneralDims d, int64_t out_count,
                                    Out* __restrict__ y, R r, Fin fin) {
  const int last = d.num_reduced - 1;
  const int64_t inner_size = d.reduced_size[last];
  const int64_t inner_stride = d.reduced_stride[last];
  int64_t outer_count = 1;
  for (int k = 0; k < last; ++k) outer_count *= d.reduced_size[k];
  for (int64_t o = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; o < out_count;
       o += int64_t{gridDim.x} * blockDim.x) {
    const In* xo = x + OffsetOf(o, d.num_kept, d.kept_size, d.kept_stride);
    A acc = R::template Identity<A>();
    for (int64_t k = 0; k < outer_count; ++k) {
      const In* xk = xo + OffsetOf(k, last, d.reduced_size, d.reduced_stride);
      for (int64_t j = 0; j < inner_size; ++j) acc = r(acc, ToAcc(xk[j * inner_stride]));
    }
    y[o] = FromAcc<Out>::Convert(fin(acc));
  }
}

// One block per output element.
template <typename In, typename A, typename Out, typename R, typename Fin>
__global__ void GeneralBlockKernel(const In* __restrict__ x, GeneralDims d, int64_t out_count,
                                   int64_t reduced_count, Out* __restrict__ y, R r, Fin fin) {
  __shared__ A smem[kWarp];
  for (int64_t o = blockIdx.x; o < out_count; o += gridDim.x) {
    const In* xo = x + OffsetOf(o, d.num_kept, d.kept_size, d.kept_stride);
    A acc = R::template Identity<A>();
    for (int64_t k = threadIdx.x; k < reduced_count; k += blockDim.x) {
      acc = r(acc, ToAcc(xo[OffsetOf(k, d.num_reduced, d.reduced_size, d.reduced_stride)]));
    }
    acc = BlockAllReduce(acc, r, smem);
    if (threadIdx.x == 0) y[o] = FromAcc<Out>::Convert(fin(acc));
  }
}

// ---------------------------------------------------------------------------
// Host side: geometry and dispatch.

int64_t AccBytes(ReduceType type) {
  return type == ReduceType::kDouble || type == ReduceType::kInt64 ? 8 : 4;
}

// How a 3-D problem runs; ReduceScratchBytes and LaunchReduce agree on it.
struct Geometry {
  // Rows (inner == 1).
  bool warp_rows = false;
  int row_threads = 256;
  // Columns.
  int bx = 1, by = 1;
  // Split of the reduced range: splits blocks of chunk elements.
  int64_t splits = 1, chunk = 0;
};

Geometry ChooseGeometry(const ReduceProblem& p, int sm_count) {
  Geometry g;
  const int64_t target_blocks = int64_t{4} * Sms(sm_count);
  g.chunk = p.reduced;
  int64_t blocks = 0, min_chunk = 0;
  if (p.inner == 1) {
    if (p.reduced <= kWarpRowsMaxWidth) {
      g.warp_rows = true;
      return g;
    }
    g.row_threads = p.reduced >= 8192 ? 512 : 256;
    blocks = p.outer;
    min_chunk = int64_t{g.row_threads} * 8;
  } else {
    g.bx = static_cast<int>(std::min<int64_t>(kWarp, NextPow2(p.inner)));
    g.by = static_cast<int>(
        PrevPow2(std::max<int64_t>(1, std::min<int64_t>(kTileThreads / g.bx, p.reduced))));
    blocks = CeilDiv(p.inner, g.bx) * p.outer;
    min_chunk = int64_t{g.by} * 16;
  }
  if (blocks >= target_blocks || p.reduced < 2 * min_chunk) return g;
  int64_t splits = std::min(CeilDiv(target_blocks, blocks), CeilDiv(p.reduced, min_chunk));
  splits = std::min(splits, kMaxGridYZ);
  if (splits <= 1) return g;
  g.chunk = CeilDiv(p.reduced, splits);
  g.splits = CeilDiv(p.reduced, g.chunk);
  return g;
}

int64_t ScratchBytes(const ReduceProblem& p, const Geometry& g) {
  if (g.splits <= 1) return 0;
  return p.outer * g.splits * p.inner * AccBytes(p.type);
}

// x [rows, width] -> y [rows] without a split (second passes and short rows).
template <typename In, typename A, typename Out, typename R, typename Fin>
cudaError_t RowsOnePass(const In* x, int64_t rows, int64_t width, Out* y, R r, Fin fin,
                        int sm_count, cudaStream_t stream) {
  if (width <= kWarpRowsMaxWidth) {
    constexpr int kThreads = 256;
    const unsigned grid = GridOf(CeilDiv(rows, kThreads / kWarp), MaxBlocks(sm_count));
    RowWarpKernel<In, A, Out><<<grid, kThreads, 0, stream>>>(x, rows, width, y, r, fin);
  } else {
    const int threads = width >= 8192 ? 512 : 256;
    const dim3 grid(GridOf(rows, MaxBlocks(sm_count)), 1);
    RowBlockKernel<In, A, Out><<<grid, threads, 0, stream>>>(x, rows, width, width, y, r, fin);
  }
  return cudaGetLastError();
}

// x [outer, reduced, inner] -> y [outer, inner] without a split.
template <typename In, typename A, typename Out, typename R, typename Fin>
cudaError_t ColumnsOnePass(const In* x, int64_t outer, int64_t reduced, int64_t inner, Out* y, R r,
                           Fin fin, cudaStream_t stream) {
  const int bx = static_cast<int>(std::min<int64_t>(kWarp, NextPow2(inner)));
  const int by = static_cast<int>(
      PrevPow2(std::max<int64_t>(1, std::min<int64_t>(kTileThreads / bx, reduced))));
  const dim3 grid(GridOf(CeilDiv(inner, bx), kMaxGridYZ), GridOf(outer, kMaxGridYZ), 1);
  ColumnKernel<In, A, Out>
      <<<grid, dim3(bx, by), 0, stream>>>(x, outer, reduced, inner, reduced, y, r, fin);
  return cudaGetLastError();
}

template <typename T, typename R, typename Fin>
cudaError_t RunThreeD(const ReduceProblem& p, const T* x, T* y, void* scratch, int sm_count,
                      cudaStream_t stream, R r, Fin fin) {
  using A = typename AccOf<T>::type;
  const Geometry g = ChooseGeometry(p, sm_count);
  if (g.splits <= 1) {
    if (p.inner == 1)
      return RowsOnePass<T, A, T>(x, p.outer, p.reduced, y, r, fin, sm_count, stream);
    return ColumnsOnePass<T, A, T>(x, p.outer, p.reduced, p.inner, y, r, fin, stream);
  }
  if (scratch == nullptr) return cudaErrorInvalidValue;
  A* partial = static_cast<A*>(scratch);
  if (p.inner == 1) {
    const dim3 grid(GridOf(p.outer, MaxBlocks(sm_count)), static_cast<unsigned>(g.splits));
    RowBlockKernel<T, A, A>
        <<<grid, g.row_threads, 0, stream>>>(x, p.outer, p.reduced, g.chunk, partial, r, NoFinal{});
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    return RowsOnePass<A, A, T>(partial, p.outer, g.splits, y, r, fin, sm_count, stream);
  }
  const dim3 grid(GridOf(CeilDiv(p.inner, g.bx), kMaxGridYZ), GridOf(p.outer, kMaxGridYZ),
                  static_cast<unsigned>(g.splits));
  ColumnKernel<T, A, A><<<grid, dim3(g.bx, g.by), 0, stream>>>(x, p.outer, p.reduced, p.inner,
                                                               g.chunk, partial, r, NoFinal{});
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return ColumnsOnePass<A, A, T>(partial, p.outer, g.splits, p.inner, y, r, fin, stream);
}

// Fills `dims`; false when the groups are malformed.
bool MakeGeneralDims(const ReduceProblem& p, GeneralDims* dims, int64_t* out_count,
                     int64_t* reduced_count) {
  if (p.num_groups < 1 || p.num_groups > kMaxReduceGroups) return false;
  int64_t stride = 1;
  int64_t strides[kMaxReduceGroups];
  for (int k = p.num_groups - 1; k >= 0; --k) {
    if (p.groups[k] < 1) return false;
    strides[k] = stride;
    stride *= p.groups[k];
  }
  *out_count = 1;
  *reduced_count = 1;
  bool reduced = p.first_reduced;
  for (int k = 0; k < p.num_groups; ++k, reduced = !reduced) {
    if (reduced) {
      dims->reduced_size[dims->num_reduced] = p.groups[k];
      dims->reduced_stride[dims->num_reduced++] = strides[k];
      *reduced_count *= p.groups[k];
    } else {
      dims->kept_size[dims->num_kept] = p.groups[k];
      dims->kept_stride[dims->num_kept++] = strides[k];
      *out_count *= p.groups[k];
    }
  }
  return dims->num_reduced > 0;
}

template <typename T, typename R, typename Fin>
cudaError_t RunGeneral(const ReduceProblem& p, const T* x, T* y, int sm_count, cudaStream_t stream,
                       R r, Fin fin) {
  using A = typename AccOf<T>::type;
  GeneralDims d;
  int64_t out_count = 0, reduced_count = 0;
  if (!MakeGeneralDims(p, &d, &out_count, &reduced_count)) return cudaErrorInvalidValue;
  const bool last_reduced = (p.num_groups % 2 == 1) == p.first_reduced;
  constexpr int kThreads = 256;
  if (reduced_count >= kThreads &&
      (last_reduced || out_count < int64_t{Sms(sm_count)} * kThreads)) {
    GeneralBlockKernel<T, A, T><<<GridOf(out_count, MaxBlocks(sm_count)), kThreads, 0, stream>>>(
        x, d, out_count, reduced_count, y, r, fin);
  } else {
    GeneralThreadKernel<T, A, T>
        <<<GridOf(CeilDiv(out_count, kThreads), MaxBlocks(sm_count)), kThreads, 0, stream>>>(
            x, d, out_count, y, r, fin);
  }
  return cudaGetLastError();
}

int64_t OutCount(const ReduceProblem& p) {
  if (p.num_groups == 0) return p.outer * p.inner;
  int64_t n = 1;
  bool reduced = p.first_reduced;
  for (int k = 0; k < p.num_groups && k < kMaxReduceGroups; ++k, reduced = !reduced) {
    if (!reduced) n *= p.groups[k];
  }
  return n;
}

int64_t ReducedCount(const ReduceProblem& p) {
  if (p.num_groups == 0) return p.reduced;
  int64_t n = 1;
  bool reduced = p.first_reduced;
  for (int k = 0; k < p.num_groups && k < kMaxReduceGroups; ++k, reduced = !reduced) {
    if (reduced) n *= p.groups[k];
  }
  return n;
}

template <typename T, typename R, typename Fin>
cudaError_t Run(const ReduceProblem& p, const T* x, T* y, void* scratch, int sm_count,
                cudaStream_t stream, R r, Fin fin) {
  using A = typename AccOf<T>::type;
  const int64_t out_count = OutCount(p);
  if (out_count == 0) return cudaSuccess;
  if (p.num_groups > 0) return RunGeneral(p, x, y, sm_count, stream, r, fin);
  if (p.reduced == 0) {
    constexpr int kThreads = 256;
    FillKernel<T, A, R>
        <<<GridOf(CeilDiv(out_count, kThreads), MaxBlocks(sm_count)), kThreads, 0, stream>>>(
            y, out_count, fin);
    return cudaGetLastError();
  }
  return RunThreeD(p, x, y, scratch, sm_count, stream, r, fin);
}

template <typename T>
cudaError_t RunOp(const ReduceProblem& p, const void* x, void* y, void* scratch, int sm_count,
                  cudaStream_t stream) {
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  switch (p.op) {
    case ReduceOp::kSum:
      return Run(p, xt, yt, scratch, sm_count, stream, SumR{}, NoFinal{});
    case ReduceOp::kMean:
      return Run(p, xt, yt, scratch, sm_count, stream, SumR{}, MeanFinal{ReducedCount(p)});
    case ReduceOp::kProd:
      return Run(p, xt, yt, scratch, sm_count, stream, ProdR{}, NoFinal{});
    case ReduceOp::kMax:
      return Run(p, xt, yt, scratch, sm_count, stream, MaxR{}, NoFinal{});
    case ReduceOp::kMin:
      return Run(p, xt, yt, scratch, sm_count, stream, MinR{}, NoFinal{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

int64_t ReduceScratchBytes(const ReduceProblem& p, int sm_count) {
  if (p.num_groups > 0 || p.reduced == 0 || p.outer * p.inner == 0) return 0;
  return ScratchBytes(p, ChooseGeometry(p, sm_count));
}

cudaError_t LaunchReduce(const ReduceProblem& p, const void* x, void* y, void* scratch,
                         int sm_count, cudaStream_t stream) {
  if (p.num_groups < 0 || p.num_groups > kMaxReduceGroups || p.outer < 0 || p.reduced < 0 ||
      p.inner < 0) {
    return cudaErrorInvalidValue;
  }
  switch (p.type) {
    case ReduceType::kFloat:
      return RunOp<float>(p, x, y, scratch, sm_count, stream);
    case ReduceType::kDouble:
      return RunOp<double>(p, x, y, scratch, sm_count, stream);
    case ReduceType::kInt64:
      return RunOp<int64_t>(p, x, y, scratch, sm_count, stream);
    case ReduceType::kHalf:
      return RunOp<__half>(p, x, y, scratch, sm_count, stream);
    case ReduceType::kBFloat16:
      return RunOp<__nv_bfloat16>(p, x, y, scratch, sm_count, stream);
  }
  return cudaErrorInvalidValue;
}


}  // namespace gpu
}  // namespace sluice
