// CUDA kernel of the stateless random ops (launcher: stateless_random.cu.h):
// a grid-stride loop over output groups, each Philox of the advanced
// counter turned into values by stateless_philox.h, as on the CPU.
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

// The uniform value of word x for output type T (TensorFlow's: 23, 10 or 7
// random mantissa bits).
template <typename T>
__device__ __forceinline__ float UniformOf(uint32_t x) {
  if constexpr (std::is_same_v<T, __half>) {
    return stateless::ToHalfValue(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return stateless::ToBfloat16Value(x);
  } else {
    return stateless::ToFloat(x);
  }
}

template <typename T, bool kNormal>
__global__ void StatelessKernel(T* __restrict__ out, int64_t n, stateless::KeyCounter kc) {
  constexpr int kPerGroup = std::is_same_v<T, double> ? 2 : 4;
  const int64_t groups = (n + kPerGroup - 1) / kPerGroup;
  for (int64_t g = FirstIndex(); g < groups; g += Stride()) {
    const philox::Counter w = philox::Philox4x32_10(stateless::Advance(kc.counter, g), kc.key);
    const int64_t first = g * kPerGroup;
    if constexpr (std::is_same_v<T, double>) {
      double v[2] = {stateless::ToDouble(w.v[0], w.v[1]), stateless::ToDouble(w.v[2], w.v[3])};
      if constexpr (kNormal) stateless::BoxMuller(v[0], v[1], &v[0], &v[1]);
      for (int j = 0; j < 2 && first + j < n; ++j) Store(out + first + j, v[j]);
    } else {
      float v[4];
      if constexpr (kNormal) {
        stateless::BoxMuller(stateless::ToFloat(w.v[0]), stateless::ToFloat(w.v[1]), &v[0], &v[1]);
        stateless::BoxMuller(stateless::ToFloat(w.v[2]), stateless::ToFloat(w.v[3]), &v[2], &v[3]);
      } else {
        for (int j = 0; j < 4; ++j) v[j] = UniformOf<T>(w.v[j]);
      }
      for (int j = 0; j < 4 && first + j < n; ++j) Store(out + first + j, v[j]);
    }
  }
}

template <typename T>
cudaError_t Launch(StatelessDistribution dist, void* out, int64_t n, stateless::KeyCounter kc,
                   cudaStream_t stream) {
  const int64_t groups = std::is_same_v<T, double> ? (n + 1) / 2 : (n + 3) / 4;
  if (dist == StatelessDistribution::kNormal) {
    StatelessKernel<T, true><<<GridFor(groups), kThreads, 0, stream>>>(static_cast<T*>(out), n, kc);
  } else {
    StatelessKernel<T, false><<<GridFor(groups), kThreads, 0, stream>>>(static_cast<T*>(out), n, kc);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchStatelessRandom(StatelessDistribution dist, StatelessElement element, void* out,
                                  int64_t n, uint64_t key, uint64_t counter_lo,
                                  uint64_t counter_hi, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const stateless::KeyCounter kc = stateless::FromWords(key, counter_lo, counter_hi);
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
