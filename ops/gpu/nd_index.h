// GatherNd's and ScatterNd's index arithmetic on the GPU (nd_index.cu):
// which slice an index row addresses. Plain C++ outside nvcc, so the CPU
// tests it (nd_index_test.cc) against the CPU kernels.
//
//   gpu::NdIndexGeometry g = ...;   // the first `depth` dims of the indexed shape
//   int64_t s = gpu::NdSliceOf(indices + i * g.depth, g);   // -1: out of range
//
// Thread-safety: pure.
#ifndef SLUICE_OPS_GPU_ND_INDEX_H_
#define SLUICE_OPS_GPU_ND_INDEX_H_

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_ND_INDEX_FN __host__ __device__ __forceinline__
#else
#define SLUICE_ND_INDEX_FN inline
#endif

namespace sluice::gpu {

inline constexpr int kMaxNdIndexDepth = 8;

struct NdIndexGeometry {
  int depth = 0;                         // indices.shape[-1], at most kMaxNdIndexDepth
  int64_t dims[kMaxNdIndexDepth] = {};   // the indexed shape's first `depth` dims
  int64_t rows = 0;                      // index rows
  int64_t slice = 1;                     // elements per row
};

// The slice (row-major over dims[0..depth)) that `row` (depth indices)
// addresses; -1 when an index is outside its dimension.
template <typename Index>
SLUICE_ND_INDEX_FN int64_t NdSliceOf(const Index* row, const NdIndexGeometry& g) {
  int64_t slice = 0;
  for (int d = 0; d < g.depth; ++d) {
    const int64_t v = static_cast<int64_t>(row[d]);
    if (v < 0 || v >= g.dims[d]) return -1;
    slice = slice * g.dims[d] + v;
  }
  return slice;
}

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ND_INDEX_H_
