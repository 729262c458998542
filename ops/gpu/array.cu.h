// CUDA launchers of the array ops' GPU kernels (ops/gpu/array.cu): filling,
// strided gathers and scatters (Transpose, Slice, StridedSlice and its
// gradient), tiling, concatenation, row copies (Split, Unpack), Gather and
// UnsortedSegmentSum.
//
//   gpu::StridedMap map = ...;  // out[i] = in[base + sum_d coord_d(i) * steps[d]]
//   cudaError_t e = gpu::LaunchStridedGather(x, y, n, /*element_size=*/4, map, stream);
//
// Plain C++ (no CUDA syntax): g++ and nvcc both compile it. Every launcher
// enqueues on `stream`, returns at once with the launch's error
// (cudaGetLastError or the cudaMemsetAsync result), launches nothing for
// zero elements, and takes device pointers. The byte-moving kernels only
// look at element sizes (1, 2, 4 or 8 bytes), so they serve every
// fixed-size dtype; indices and sizes are 64-bit. Thread-safe.
#ifndef SLUICE_OPS_GPU_ARRAY_CU_H_
#define SLUICE_OPS_GPU_ARRAY_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

// The most dimensions the strided and tiling kernels take (after the host
// side drops size-1 dimensions and merges contiguous ones).
inline constexpr int kMaxArrayDims = 8;

// Writes `n` elements of `element_size` bytes at `dst`, each a copy of the
// element at the device pointer `value` (Fill's scalar stays on the GPU).
cudaError_t LaunchFillFromDevice(void* dst, int64_t n, int element_size, const void* value,
                                 cudaStream_t stream);
// As above with the element given by its low `element_size` bytes (`bits`,
// little-endian): OnesLike.
cudaError_t LaunchFillBits(void* dst, int64_t n, int element_size, uint64_t bits,
                           cudaStream_t stream);

// Element i of a row-major box of `dims` (rank entries; rank 0 is one
// element) lives at offset base + sum_d coord_d(i) * steps[d] of the strided
// tensor. Offsets and steps count elements; steps may be negative.
struct StridedMap {
  int rank = 0;
  int64_t dims[kMaxArrayDims] = {};
  int64_t steps[kMaxArrayDims] = {};
  int64_t base = 0;
};
// out[i] = in[offset(i)] for i in [0, n), n the box's element count
// (Transpose, Slice, StridedSlice).
cudaError_t LaunchStridedGather(const void* in, void* out, int64_t n, int element_size,
                                const StridedMap& map, cudaStream_t stream);
// out[offset(i)] = in[i] (StridedSliceGrad); the map must not send two
// elements to one offset. Elements of `out` outside the box are untouched.
cudaError_t LaunchStridedScatter(const void* in, void* out, int64_t n, int element_size,
                                 const StridedMap& map, cudaStream_t stream);

// in [batch, rows, cols] -> out [batch, cols, rows], through 32x32 tiles in
// shared memory (Transpose's perm [1, 0] and [0, 2, 1] after merging).
cudaError_t LaunchBatchTranspose(const void* in, void* out, int64_t batch, int64_t rows,
                                 int64_t cols, int element_size, cudaStream_t stream);

// out (rank dims out_dims) = in (in_dims) repeated: out[c] = in[c % in_dims]
// per coordinate (Tile). in_dims[d] > 0 wherever out_dims[d] > 0.
struct TileMap {
  int rank = 0;
  int64_t out_dims[kMaxArrayDims] = {};
  int64_t in_dims[kMaxArrayDims] = {};
};
cudaError_t LaunchTile(const void* in, void* out, int64_t n, int element_size, const TileMap& map,
                       cudaStream_t stream);

// Up to kMaxConcatPieces inputs written side by side into the columns
// [col_begin[0], col_begin[count]) of a row-major [rows, out_cols] output:
// piece j is a row-major [rows, col_begin[j+1] - col_begin[j]] tensor at
// ptrs[j]. col_begin is non-decreasing (empty pieces are allowed).
inline constexpr int kMaxConcatPieces = 64;
struct ConcatPieces {
  int count = 0;
  const void* ptrs[kMaxConcatPieces] = {};
  int64_t col_begin[kMaxConcatPieces + 1] = {};
};
cudaError_t LaunchConcat(const ConcatPieces& pieces, void* out, int64_t rows, int64_t out_cols,
                         int element_size, cudaStream_t stream);

// dst[r * dst_pitch + c] = src[r * src_pitch + c] for r < rows, c < cols
// (pitches in elements): one output of Split or Unpack.
cudaError_t LaunchCopyRows(const void* src, int64_t src_pitch, void* dst, int64_t dst_pitch,
                           int64_t rows, int64_t cols, int element_size, cudaStream_t stream);

// params [outer, limit, inner], indices (int32 or int64, num_indices of
// them, in device memory) -> out [outer, num_indices, inner]. Rows whose
// index is outside [0, limit) are written as zeros: the host cannot check
// indices that live on the GPU without a synchronization.
cudaError_t LaunchGather(const void* params, const void* indices, bool indices_are_int64, void* out,
                         int64_t outer, int64_t limit, int64_t num_indices, int64_t inner,
                         int element_size, cudaStream_t stream);

// out [num_segments, inner] = 0, then out[ids[i]] += data[i] for each row i
// of data [num_ids, inner], with atomics. ids (int32 or int64, device
// memory) outside [0, num_segments) are dropped (the CPU kernel reports an
// id >= num_segments; the GPU cannot without a synchronization).
cudaError_t LaunchUnsortedSegmentSum(const float* data, const void* ids, bool ids_are_int64,
                                     float* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream);
cudaError_t LaunchUnsortedSegmentSum(const double* data, const void* ids, bool ids_are_int64,
                                     double* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream);
cudaError_t LaunchUnsortedSegmentSum(const int64_t* data, const void* ids, bool ids_are_int64,
                                     int64_t* out, int64_t num_ids, int64_t inner,
                                     int64_t num_segments, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ARRAY_CU_H_
