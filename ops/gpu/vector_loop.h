// The element walk of the vectorized element-wise kernels, written once for
// the device (nvcc) and the host (g++), so that the split between vector
// packs and single elements is tested on any machine.
//
//   // In a kernel: pack p covers elements [p * kVec, p * kVec + kVec).
//   ForEachVectorized<kVec>(n, FirstIndex<int64_t>(), GridStride<int64_t>(),
//                           [&](int64_t p) { /* one Pack<T, kVec> */ },
//                           [&](int64_t i) { /* element i alone */ });
//
// kVec == 1 is the unvectorized instance (an unaligned buffer or fewer than
// kVec elements): every element is then walked singly. Before this header the
// kernels started their single-element loop at n / kVec * kVec even when the
// pack loop was compiled out, which for kVec == 1 is n: tensors of 1 to 3
// floats, and unaligned views of any size, were left unwritten on the GPU.
//
// Pure functions: thread-safe, no state.
#ifndef SLUICE_OPS_GPU_VECTOR_LOOP_H_
#define SLUICE_OPS_GPU_VECTOR_LOOP_H_

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_VECTOR_LOOP_FN __host__ __device__ __forceinline__
#else
#define SLUICE_VECTOR_LOOP_FN inline
#endif

namespace sluice::gpu {

// How n elements split between packs of `vec` elements and single ones.
struct VectorSplit {
  int64_t packs = 0;       // whole packs, walked as vectors
  int64_t tail_begin = 0;  // first element walked singly
};

SLUICE_VECTOR_LOOP_FN constexpr VectorSplit SplitForVectors(int64_t n, int vec) {
  if (vec <= 1 || n <= 0) return VectorSplit{0, 0};
  return VectorSplit{n / vec, n / vec * vec};
}

// The share of one thread (index `first` of a grid of `stride` threads):
// packs first, p, p + stride, ...; then the single elements.
template <int kVec, typename PackFn, typename OneFn>
SLUICE_VECTOR_LOOP_FN void ForEachVectorized(int64_t n, int64_t first, int64_t stride,
                                             PackFn&& pack, OneFn&& one) {
  const VectorSplit split = SplitForVectors(n, kVec);
  if constexpr (kVec > 1) {
    for (int64_t p = first; p < split.packs; p += stride) pack(p);
  }
  for (int64_t i = split.tail_begin + first; i < n; i += stride) one(i);
}

}  // namespace sluice::gpu

#undef SLUICE_VECTOR_LOOP_FN

#endif  // SLUICE_OPS_GPU_VECTOR_LOOP_H_
