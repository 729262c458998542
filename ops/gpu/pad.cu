// The CUDA kernel of Pad and PadV2 (launcher: pad.cu.h): one thread per
// output element, the element's index taken apart dimension by dimension.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/element_bits.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/pad.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename Bits>
__global__ void PadKernel(const Bits* x, const Bits* value, Bits* out, int64_t n,
                          PadGeometry g) {
  const Bits fill = value == nullptr ? Bits(0) : *value;
  for (int64_t o = FirstIndex(); o < n; o += Stride()) {
    const int64_t from = PadSource(g, o);
    out[o] = from >= 0 ? x[from] : fill;
  }
}

}  // namespace

cudaError_t LaunchPad(int elem_bytes, const void* x, const void* value, void* out, int64_t n,
                      const PadGeometry& g, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return BySize(elem_bytes, [&](auto word) {
    using U = decltype(word);
    PadKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const U*>(x),
                                                   static_cast<const U*>(value),
                                                   static_cast<U*>(out), n, g);
    return cudaGetLastError();
  });
}

}  // namespace sluice::gpu
