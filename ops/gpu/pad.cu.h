// The CUDA launcher of Pad and PadV2 (pad.cu): out[o] = x[o - before] where
// that falls inside x, else the pad value. Plain C++ (g++ and nvcc); the
// launch only enqueues on `stream` and returns cudaGetLastError().
#ifndef SLUICE_OPS_GPU_PAD_CU_H_
#define SLUICE_OPS_GPU_PAD_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_PAD_FN __host__ __device__ __forceinline__
#else
#define SLUICE_PAD_FN inline
#endif

namespace sluice::gpu {

inline constexpr int kMaxPadRank = 8;

struct PadGeometry {
  int rank = 0;
  int64_t in_dims[kMaxPadRank] = {};
  int64_t out_dims[kMaxPadRank] = {};
  int64_t before[kMaxPadRank] = {};
};

// The element of x that output element o reads (flat, row-major); -1 for
// one in the padding. Plain C++ for the host too: pad_test.cc checks it
// against the CPU's Pad.
SLUICE_PAD_FN int64_t PadSource(const PadGeometry& g, int64_t o) {
  int64_t rest = o, from = 0, scale = 1;
  bool inside = true;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t i = rest % g.out_dims[d] - g.before[d];
    rest /= g.out_dims[d];
    inside = inside && i >= 0 && i < g.in_dims[d];
    from += i * scale;
    scale *= g.in_dims[d];
  }
  return inside ? from : -1;
}

// elem_bytes: 1, 2, 4 or 8. value: one element in device memory (PadV2's
// constant_values), or null for zeros (Pad). n = the output's elements.
cudaError_t LaunchPad(int elem_bytes, const void* x, const void* value, void* out, int64_t n,
                      const PadGeometry& g, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_PAD_CU_H_
