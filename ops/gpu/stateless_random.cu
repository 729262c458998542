// CUDA kernel of the stateless random ops (launcher: stateless_random.cu.h):
// a grid-stride loop over output groups, each made by stateless_philox.h's
// FloatGroup / DoubleGroup, the functions the CPU kernels call.
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
                                bool normal) {
  constexpr int kPerGroup = std::is_same_v<T, double> ? 2 : 4;
  constexpr int kBits = std::is_same_v<T, __half> ? 10 : std::is_same_v<T, __nv_bfloat16> ? 7 : 23;
  const int64_t groups = (n + kPerGroup - 1) / kPerGroup;
  for (int64_t g = FirstIndex(); g < groups; g += Stride()) {
    const int64_t first = g * kPerGroup;
    if constexpr (std::is_same_v<T, double>) {
      double v[2];
      stateless::DoubleGroup(kc, g, normal, v);
      for (int j = 0; j < 2 && first + j < n; ++j) Store(out + first + j, v[j]);
    } else {
      float v[4];
      stateless::FloatGroup(kc, g, normal, kBits, v);
      for (int j = 0; j < 4 && first + j < n; ++j) Store(out + first + j, v[j]);
    }
  }
}

template <typename T>
cudaError_t Launch(StatelessDistribution dist, void* out, int64_t n, stateless::KeyCounter kc,
                   cudaStream_t stream) {
  const int64_t groups = std::is_same_v<T, double> ? (n + 1) / 2 : (n + 3) / 4;
  StatelessKernel<T><<<GridFor(groups), kThreads, 0, stream>>>(
      static_cast<T*>(out), n, kc, dist == StatelessDistribution::kNormal);
  return cudaGetLastError();
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

}  // namespace sluice::gpu
