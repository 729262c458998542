// CUDA kernels of GatherNd and ScatterNd (launchers: nd_index.cu.h): one
// thread per output (GatherNd) or update (ScatterNd) element over a
// grid-stride loop; the slice arithmetic is nd_index.h's.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/element_bits.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/nd_index.cu.h"
#include "ops/gpu/nd_index.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename Bits, typename Index>
__global__ void GatherNdKernel(const Bits* params, const Index* indices, Bits* out,
                               NdIndexGeometry g, int64_t n) {
  for (int64_t e = FirstIndex(); e < n; e += Stride()) {
    const int64_t i = e / g.slice, k = e - i * g.slice;
    const int64_t s = NdSliceOf(indices + i * g.depth, g);
    out[e] = s < 0 ? Bits(0) : params[s * g.slice + k];
  }
}

__device__ __forceinline__ void AtomicAdd(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAdd(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAdd(__half* p, __half v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) { atomicAdd(p, v); }
__device__ __forceinline__ void AtomicAdd(int64_t* p, int64_t v) {
  // Two's complement: the unsigned sum is the signed one.
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T, typename Index>
__global__ void ScatterNdKernel(const Index* indices, const T* updates, T* out,
                                NdIndexGeometry g, int64_t n) {
  for (int64_t e = FirstIndex(); e < n; e += Stride()) {
    const int64_t i = e / g.slice, k = e - i * g.slice;
    const int64_t s = NdSliceOf(indices + i * g.depth, g);
    if (s >= 0) AtomicAdd(out + s * g.slice + k, updates[e]);
  }
}

template <typename T, typename Index>
cudaError_t Scatter(const Index* indices, const void* updates, void* out, const NdIndexGeometry& g,
                    int64_t n, cudaStream_t stream) {
  ScatterNdKernel<T, Index><<<GridFor(n), kThreads, 0, stream>>>(
      indices, static_cast<const T*>(updates), static_cast<T*>(out), g, n);
  return cudaGetLastError();
}

}  // namespace

template <typename Index>
cudaError_t LaunchGatherNd(const void* params, const Index* indices, void* out, int elem_bytes,
                           const NdIndexGeometry& g, cudaStream_t stream) {
  const int64_t n = g.rows * g.slice;
  if (n <= 0) return cudaSuccess;
  return BySize(elem_bytes, [&](auto word) {
    using U = decltype(word);
    GatherNdKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const U*>(params), indices,
                                                        static_cast<U*>(out), g, n);
    return cudaGetLastError();
  });
}

template <typename Index>
cudaError_t LaunchScatterNd(ScatterNdType type, const Index* indices, const void* updates,
                            void* out, int64_t out_elements, const NdIndexGeometry& g,
                            cudaStream_t stream) {
  int bytes = 0;
  switch (type) {
    case ScatterNdType::kFloat:
      bytes = 4;
      break;
    case ScatterNdType::kDouble:
    case ScatterNdType::kInt64:
      bytes = 8;
      break;
    case ScatterNdType::kHalf:
    case ScatterNdType::kBFloat16:
      bytes = 2;
      break;
  }
  if (bytes == 0) return cudaErrorInvalidValue;
  if (out_elements > 0) {
    const cudaError_t zeroed = cudaMemsetAsync(out, 0, out_elements * bytes, stream);
    if (zeroed != cudaSuccess) return zeroed;
  }
  const int64_t n = g.rows * g.slice;
  if (n <= 0) return cudaSuccess;
  switch (type) {
    case ScatterNdType::kFloat:
      return Scatter<float>(indices, updates, out, g, n, stream);
    case ScatterNdType::kDouble:
      return Scatter<double>(indices, updates, out, g, n, stream);
    case ScatterNdType::kHalf:
      return Scatter<__half>(indices, updates, out, g, n, stream);
    case ScatterNdType::kBFloat16:
      return Scatter<__nv_bfloat16>(indices, updates, out, g, n, stream);
    case ScatterNdType::kInt64:
      return Scatter<int64_t>(indices, updates, out, g, n, stream);
  }
  return cudaErrorInvalidValue;
}

#define SLUICE_INSTANTIATE_ND_(Index)                                                          \
  template cudaError_t LaunchGatherNd<Index>(const void*, const Index*, void*, int,            \
                                             const NdIndexGeometry&, cudaStream_t);            \
  template cudaError_t LaunchScatterNd<Index>(ScatterNdType, const Index*, const void*, void*, \
                                              int64_t, const NdIndexGeometry&, cudaStream_t);
SLUICE_INSTANTIATE_ND_(int32_t)
SLUICE_INSTANTIATE_ND_(int64_t)
#undef SLUICE_INSTANTIATE_ND_

}  // namespace sluice::gpu
