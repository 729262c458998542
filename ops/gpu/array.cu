// CUDA kernels of the array ops (launchers declared in array.cu.h). The
// byte movers are templated on an unsigned word of the element's size, so
// one instantiation serves every dtype of that size. Every kernel walks its
// elements with a 64-bit grid-stride loop.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ops/gpu/array.cu.h"
#include "ops/gpu/element_bits.cu.h"

namespace sluice::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 16384;  // grid-stride loops cover the rest

int BlocksFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

__device__ __forceinline__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t GridStride() {
  return static_cast<int64_t>(blockDim.x) * gridDim.x;
}

// ---- Filling ----------------------------------------------------------------

template <typename U>
__global__ void FillFromDeviceKernel(U* __restrict__ dst, int64_t n, const U* __restrict__ value) {
  const U v = *value;
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) dst[i] = v;
}

template <typename U>
__global__ void FillValueKernel(U* __restrict__ dst, int64_t n, U v) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) dst[i] = v;
}

// ---- Strided boxes ----------------------------------------------------------

// The strided offset of box element i.
__device__ __forceinline__ int64_t StridedOffset(const StridedMap& map, int64_t i) {
  int64_t offset = map.base;
  int64_t rem = i;
#pragma unroll
  for (int d = kMaxArrayDims - 1; d >= 0; --d) {
    if (d < map.rank) {
      const int64_t dim = map.dims[d];
      const int64_t coord = rem % dim;
      rem /= dim;
      offset += coord * map.steps[d];
    }
  }
  return offset;
}

template <typename U>
__global__ void StridedGatherKernel(const U* __restrict__ in, U* __restrict__ out, int64_t n,
                                    const StridedMap map) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) out[i] = in[StridedOffset(map, i)];
}

template <typename U>
__global__ void StridedScatterKernel(const U* __restrict__ in, U* __restrict__ out, int64_t n,
                                     const StridedMap map) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) out[StridedOffset(map, i)] = in[i];
}

// ---- Transposing ------------------------------------------------------------

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // blockDim (kTile, kTileRows)

template <typename U>
__global__ void BatchTransposeKernel(const U* __restrict__ in, U* __restrict__ out, int64_t batch,
                                     int64_t rows, int64_t cols, int64_t row_tiles,
                                     int64_t col_tiles) {
  __shared__ U tile[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int64_t per_matrix = row_tiles * col_tiles;
  const int64_t total = batch * per_matrix;
  const int64_t matrix = rows * cols;
  // The loop bounds depend on blockIdx only, so every thread of a block
  // reaches the same barriers.
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t b = t / per_matrix;
    const int64_t rem = t - b * per_matrix;
    const int64_t r0 = (rem / col_tiles) * kTile;
    const int64_t c0 = (rem % col_tiles) * kTile;
    const U* src = in + b * matrix;
    U* dst = out + b * matrix;
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k;
      const int64_t c = c0 + tx;
      if (r < rows && c < cols) tile[k][tx] = src[r * cols + c];
    }
    __syncthreads();
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t c = c0 + k;   // output row
      const int64_t r = r0 + tx;  // output column
      if (c < cols && r < rows) dst[c * rows + r] = tile[tx][k];
    }
    __syncthreads();  // the tile is reused by the next iteration
  }
}

// ---- Tiling -----------------------------------------------------------------

template <typename U>
__global__ void TileKernel(const U* __restrict__ in, U* __restrict__ out, int64_t n,
                           const TileMap map) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) {
    int64_t rem = i;
    int64_t offset = 0;
    int64_t in_stride = 1;
#pragma unroll
    for (int d = kMaxArrayDims - 1; d >= 0; --d) {
      if (d < map.rank) {
        const int64_t coord = rem % map.out_dims[d];
        rem /= map.out_dims[d];
        offset += (coord % map.in_dims[d]) * in_stride;
        in_stride *= map.in_dims[d];
      }
    }
    out[i] = in[offset];
  }
}

// ---- Joining and splitting --------------------------------------------------

template <typename U>
__global__ void ConcatKernel(const ConcatPieces pieces, U* __restrict__ out, int64_t rows,
                             int64_t out_cols) {
  const int64_t first = pieces.col_begin[0];
  const int64_t width = pieces.col_begin[pieces.count] - first;
  const int64_t n = rows * width;
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) {
    const int64_t r = i / width;
    const int64_t c = first + (i - r * width);
    // The last piece starting at or before column c (empty pieces share
    // their start with the next one, which then wins).
    int lo = 0;
    int hi = pieces.count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (pieces.col_begin[mid] <= c) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const int64_t begin = pieces.col_begin[lo];
    const int64_t piece_width = pieces.col_begin[lo + 1] - begin;
    const U* src = static_cast<const U*>(pieces.ptrs[lo]);
    out[r * out_cols + c] = src[r * piece_width + (c - begin)];
  }
}

template <typename U>
__global__ void CopyRowsKernel(const U* __restrict__ src, int64_t src_pitch, U* __restrict__ dst,
                               int64_t dst_pitch, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    dst[r * dst_pitch + c] = src[r * src_pitch + c];
  }
}

// ---- Indexing ---------------------------------------------------------------

template <typename U, typename Index>
__global__ void GatherKernel(const U* __restrict__ params, const Index* __restrict__ indices,
                             U* __restrict__ out, int64_t n, int64_t limit, int64_t num_indices,
                             int64_t inner) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) {
    const int64_t t = i / inner;
    const int64_t k = i - t * inner;
    const int64_t o = t / num_indices;
    const int64_t j = t - o * num_indices;
    const int64_t idx = static_cast<int64_t>(indices[j]);
    out[i] = (idx >= 0 && idx < limit) ? params[(o * limit + idx) * inner + k] : U(0);
  }
}

__device__ __forceinline__ void AtomicAddValue(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAddValue(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAddValue(int64_t* p, int64_t v) {
  // Two's complement: an unsigned add is the signed add.
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T, typename Index>
__global__ void UnsortedSegmentSumKernel(const T* __restrict__ data, const Index* __restrict__ ids,
                                         T* __restrict__ out, int64_t n, int64_t inner,
                                         int64_t num_segments) {
  for (int64_t i = GlobalThread(); i < n; i += GridStride()) {
    const int64_t row = i / inner;
    const int64_t s = static_cast<int64_t>(ids[row]);
    if (s >= 0 && s < num_segments) AtomicAddValue(&out[s * inner + (i - row * inner)], data[i]);
  }
}

template <typename T>
cudaError_t SegmentSum(const T* data, const void* ids, bool ids_are_int64, T* out, int64_t num_ids,
                       int64_t inner, int64_t num_segments, cudaStream_t stream) {
  const int64_t out_elements = num_segments * inner;
  if (out_elements > 0) {
    const cudaError_t e =
        cudaMemsetAsync(out, 0, static_cast<size_t>(out_elements) * sizeof(T), stream);
    if (e != cudaSuccess) return e;
  }
  const int64_t n = num_ids * inner;
  if (n == 0 || out_elements == 0) return cudaSuccess;
  if (ids_are_int64) {
    UnsortedSegmentSumKernel<T, int64_t><<<BlocksFor(n), kThreads, 0, stream>>>(
        data, static_cast<const int64_t*>(ids), out, n, inner, num_segments);
  } else {
    UnsortedSegmentSumKernel<T, int32_t><<<BlocksFor(n), kThreads, 0, stream>>>(
        data, static_cast<const int32_t*>(ids), out, n, inner, num_segments);
  }
  return cudaGetLastError();
}

}  // namespace

// ---- Launchers ----------------------------------------------------------------

cudaError_t LaunchFillFromDevice(void* dst, int64_t n, int element_size, const void* value,
                                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    FillFromDeviceKernel<U><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<U*>(dst), n,
                                                                   static_cast<const U*>(value));
    return cudaGetLastError();
  });
}

cudaError_t LaunchFillBits(void* dst, int64_t n, int element_size, uint64_t bits,
                           cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    FillValueKernel<U>
        <<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<U*>(dst), n, static_cast<U>(bits));
    return cudaGetLastError();
  });
}

cudaError_t LaunchStridedGather(const void* in, void* out, int64_t n, int element_size,
                                const StridedMap& map, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (map.rank < 0 || map.rank > kMaxArrayDims) return cudaErrorInvalidValue;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    StridedGatherKernel<U><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<const U*>(in),
                                                                  static_cast<U*>(out), n, map);
    return cudaGetLastError();
  });
}

cudaError_t LaunchStridedScatter(const void* in, void* out, int64_t n, int element_size,
                                 const StridedMap& map, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (map.rank < 0 || map.rank > kMaxArrayDims) return cudaErrorInvalidValue;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    StridedScatterKernel<U><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<const U*>(in),
                                                                   static_cast<U*>(out), n, map);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchTranspose(const void* in, void* out, int64_t batch, int64_t rows,
                                 int64_t cols, int element_size, cudaStream_t stream) {
  if (batch <= 0 || rows <= 0 || cols <= 0) return cudaSuccess;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const int64_t tiles = batch * row_tiles * col_tiles;
  const int blocks = static_cast<int>(std::min<int64_t>(tiles, kMaxBlocks));
  const dim3 threads(kTile, kTileRows);
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    BatchTransposeKernel<U><<<blocks, threads, 0, stream>>>(
        static_cast<const U*>(in), static_cast<U*>(out), batch, rows, cols, row_tiles, col_tiles);
    return cudaGetLastError();
  });
}

cudaError_t LaunchTile(const void* in, void* out, int64_t n, int element_size, const TileMap& map,
                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (map.rank < 0 || map.rank > kMaxArrayDims) return cudaErrorInvalidValue;
  for (int d = 0; d < map.rank; ++d) {
    if (map.out_dims[d] <= 0 || map.in_dims[d] <= 0) return cudaErrorInvalidValue;
  }
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    TileKernel<U><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<const U*>(in),
                                                         static_cast<U*>(out), n, map);
    return cudaGetLastError();
  });
}

cudaError_t LaunchConcat(const ConcatPieces& pieces, void* out, int64_t rows, int64_t out_cols,
                         int element_size, cudaStream_t stream) {
  if (pieces.count <= 0) return cudaSuccess;
  if (pieces.count > kMaxConcatPieces) return cudaErrorInvalidValue;
  const int64_t width = pieces.col_begin[pieces.count] - pieces.col_begin[0];
  const int64_t n = rows * width;
  if (n <= 0) return cudaSuccess;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    ConcatKernel<U>
        <<<BlocksFor(n), kThreads, 0, stream>>>(pieces, static_cast<U*>(out), rows, out_cols);
    return cudaGetLastError();
  });
}

cudaError_t LaunchCopyRows(const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch,
                           int64_t rows, int64_t cols, int element_size, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    CopyRowsKernel<U><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const U*>(src), src_pitch, static_cast<U*>(dst), dst_pitch, rows, cols);
    return cudaGetLastError();
  });
}

cudaError_t LaunchGather(const void* params, const void* indices, bool indices_are_int64, void* out,
                         int64_t outer, int64_t limit, int64_t num_indices, int64_t inner,
                         int element_size, cudaStream_t stream) {
  if (outer <= 0 || num_indices <= 0 || inner <= 0) return cudaSuccess;
  const int64_t n = outer * num_indices * inner;
  return BySize(element_size, [&](auto word) {
    using U = decltype(word);
    if (indices_are_int64) {
      GatherKernel<U, int64_t><<<BlocksFor(n), kThreads, 0, stream>>>(
          static_cast<const U*>(params), static_cast<const int64_t*>(indices), static_cast<U*>(out),
          n, limit, num_indices, inner);
    } else {
      GatherKernel<U, int32_t><<<BlocksFor(n), kThreads, 0, stream>>>(
          static_cast<const U*>(params), static_cast<const int32_t*>(indices), static_cast<U*>(out),
          n, limit, num_indices, inner);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchUnsortedSegmentSum(const float* data, const void* ids, bool ids_are_int64,
                                     float* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream) {
  return SegmentSum(data, ids, ids_are_int64, out, num_ids, inner, num_segments, stream);
}

cudaError_t LaunchUnsortedSegmentSum(const double* data, const void* ids, bool ids_are_int64,
                                     double* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream) {
  return SegmentSum(data, ids, ids_are_int64, out, num_ids, inner, num_segments, stream);
}

cudaError_t LaunchUnsortedSegmentSum(const int64_t* data, const void* ids, bool ids_are_int64,
                                     int64_t* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream) {
  return SegmentSum(data, ids, ids_are_int64, out, num_ids, inner, num_segments, stream);
}

}  // namespace sluice::gpu
