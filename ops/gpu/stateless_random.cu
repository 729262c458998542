// CUDA kernel of the stateless random ops (launcher: stateless_random.cu.h):
// a grid-stride loop over output groups, each made by stateless_philox.h's
// group functions (FloatGroup, TruncatedFloatGroup, Int32Group, ...), the
// functions the CPU kernels call.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/philox.h"
#include "ops/gpu/stateless_philox.h"
#include "ops/gpu/stateless_random.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

__device__ __forceinline__ void Store(float* p, float v) { *p = v; }
__device__ __forceinline__ void Store(double* p, double v) { *p = v; }
__device__ __forceinline__ void Store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <typename T>
__global__ void StatelessKernel(T* __restrict__ out, int64_t n, stateless::KeyCounter kc,
                                StatelessDistribution dist) {
  const bool normal = dist == StatelessDistribution::kNormal;
  const bool truncated = dist == StatelessDistribution::kTruncatedNormal;
  constexpr int kPerGroup = std::is_same_v<T, double> ? 2 : 4;
  constexpr int kBits = std::is_same_v<T, __half> ? 10 : std::is_same_v<T, __nv_bfloat16> ? 7 : 23;
  const int64_t groups = (n + kPerGroup - 1) / kPerGroup;
  for (int64_t g = FirstIndex(); g < groups; g += Stride()) {
    const int64_t first = g * kPerGroup;
    if constexpr (std::is_same_v<T, double>) {
      double v[2];
      if (truncated) {
        stateless::TruncatedDoubleGroup(kc, g, v);
      } else {
        stateless::DoubleGroup(kc, g, normal, v);
      }
      for (int j = 0; j < 2 && first + j < n; ++j) Store(out + first + j, v[j]);
    } else {
      float v[4];
      if (truncated) {
        stateless::TruncatedFloatGroup(kc, g, v);
      } else {
        stateless::FloatGroup(kc, g, normal, kBits, v);
      }
      for (int j = 0; j < 4 && first + j < n; ++j) Store(out + first + j, v[j]);
    }
  }
}

template <typename T>
cudaError_t Launch(StatelessDistribution dist, void* out, int64_t n, stateless::KeyCounter kc,
                   cudaStream_t stream) {
  const int64_t groups = std::is_same_v<T, double> ? (n + 1) / 2 : (n + 3) / 4;
  StatelessKernel<T><<<GridFor(groups), kThreads, 0, stream>>>(static_cast<T*>(out), n, kc, dist);
  return cudaGetLastError();
}

__global__ void Int32Kernel(uint32_t* __restrict__ out, int64_t n, uint32_t lo, uint32_t range,
                            stateless::KeyCounter kc) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t g = FirstIndex(); g < groups; g += Stride()) {
    uint32_t v[4];
    stateless::Int32Group(kc, g, range, v);
    for (int j = 0; j < 4 && 4 * g + j < n; ++j) out[4 * g + j] = lo + v[j];
  }
}

__global__ void Int64Kernel(uint64_t* __restrict__ out, int64_t n, uint64_t lo, uint64_t range,
                            stateless::KeyCounter kc) {
  const int64_t groups = (n + 1) / 2;
  for (int64_t g = FirstIndex(); g < groups; g += Stride()) {
    uint64_t v[2];
    stateless::Int64Group(kc, g, range, v);
    for (int j = 0; j < 2 && 2 * g + j < n; ++j) out[2 * g + j] = lo + v[j];
  }
}

}  // namespace

cudaError_t LaunchStatelessRandom(StatelessDistribution dist, StatelessElement element, void* out,
                                  int64_t n, const stateless::KeyCounter& kc, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (element) {
    case StatelessElement::kFloat:
      return Launch<float>(dist, out, n, kc, stream);
    case StatelessElement::kDouble:
      return Launch<double>(dist, out, n, kc, stream);
    case StatelessElement::kHalf:
      return Launch<__half>(dist, out, n, kc, stream);
    case StatelessElement::kBFloat16:
      return Launch<__nv_bfloat16>(dist, out, n, kc, stream);
  }
  return cudaErrorNotSupported;
}

cudaError_t LaunchStatelessInts(int bytes, void* out, int64_t n, uint64_t lo, uint64_t range,
                                const stateless::KeyCounter& kc, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (bytes == 4) {
    Int32Kernel<<<GridFor((n + 3) / 4), kThreads, 0, stream>>>(
        static_cast<uint32_t*>(out), n, static_cast<uint32_t>(lo), static_cast<uint32_t>(range), kc);
  } else if (bytes == 8) {
    Int64Kernel<<<GridFor((n + 1) / 2), kThreads, 0, stream>>>(static_cast<uint64_t*>(out), n, lo,
                                                               range, kc);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace sluice::gpu
