// The CUDA kernel of OneHot (launcher: one_hot.cu.h): one thread per
// output element.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/element_bits.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/one_hot.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename Bits, typename Index>
__global__ void OneHotKernel(const Index* indices, const Bits* on, const Bits* off, Bits* out,
                             int64_t depth, int64_t suffix, int64_t n) {
  const Bits on_v = *on, off_v = *off;
  for (int64_t at = FirstIndex(); at < n; at += Stride()) {
    const int64_t s = at % suffix;
    const int64_t d = (at / suffix) % depth;
    const int64_t p = at / (suffix * depth);
    out[at] = static_cast<int64_t>(indices[p * suffix + s]) == d ? on_v : off_v;
  }
}

}  // namespace

template <typename Index>
cudaError_t LaunchOneHot(int elem_bytes, const Index* indices, const void* on_value,
                         const void* off_value, void* out, int64_t prefix, int64_t depth,
                         int64_t suffix, cudaStream_t stream) {
  const int64_t n = prefix * depth * suffix;
  if (n <= 0) return cudaSuccess;
  return BySize(elem_bytes, [&](auto word) {
    using U = decltype(word);
    OneHotKernel<<<GridFor(n), kThreads, 0, stream>>>(
        indices, static_cast<const U*>(on_value), static_cast<const U*>(off_value),
        static_cast<U*>(out), depth, suffix, n);
    return cudaGetLastError();
  });
}

template cudaError_t LaunchOneHot<int32_t>(int, const int32_t*, const void*, const void*, void*,
                                           int64_t, int64_t, int64_t, cudaStream_t);
template cudaError_t LaunchOneHot<int64_t>(int, const int64_t*, const void*, const void*, void*,
                                           int64_t, int64_t, int64_t, cudaStream_t);

}  // namespace sluice::gpu
