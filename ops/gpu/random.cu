// CUDA kernels of the random ops (launchers: ops/gpu/random.cu.h). Each
// thread turns counter blocks into values with the shared per-block samplers
// (ops/gpu/random_sampling.h) in a grid-stride loop over the blocks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/philox.h"
#include "ops/gpu/random.cu.h"
#include "ops/gpu/random_sampling.h"

namespace sluice::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

int GridFor(int64_t work) {
  int64_t g = (work + kThreads - 1) / kThreads;
  if (g < 1) g = 1;
  if (g > kMaxBlocks) g = kMaxBlocks;
  return static_cast<int>(g);
}

__device__ __forceinline__ void Store(float* p, float v) { *p = v; }
__device__ __forceinline__ void Store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Significant bits of a uniform that the output type holds exactly.
template <typename T>
struct UniformBits;
template <>
struct UniformBits<float> {
  static constexpr int kValue = 24;
};
template <>
struct UniformBits<__half> {
  static constexpr int kValue = 11;
};
template <>
struct UniformBits<__nv_bfloat16> {
  static constexpr int kValue = 8;
};

template <typename T, RandomDistribution kDist>
__global__ void RandomFloatKernel(T* __restrict__ out, int64_t n, philox::Key key,
                                  const uint64_t* __restrict__ counter) {
  const uint64_t base = *counter;
  const int64_t blocks = (n + 3) / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += stride) {
    const uint64_t block = base + static_cast<uint64_t>(b);
    float v[4];
    if constexpr (kDist == RandomDistribution::kUniform) {
      philox::UniformBlock(key, block, UniformBits<T>::kValue, v);
    } else if constexpr (kDist == RandomDistribution::kNormal) {
      philox::NormalBlock(key, block, v);
    } else {
      philox::TruncatedNormalBlock(key, block, v);
    }
    const int64_t first = b * 4;
    const int count = n - first < 4 ? static_cast<int>(n - first) : 4;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (j < count) Store(out + first + j, v[j]);
    }
  }
}

// After a fill: its counter moves past the blocks it read, in stream order,
// so the next fill (or the next replay of a recorded step) reads new ones.
__global__ void AdvanceCounterKernel(uint64_t* counter, uint64_t blocks) { *counter += blocks; }

cudaError_t Advance(uint64_t* counter, int64_t blocks, cudaStream_t stream) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  AdvanceCounterKernel<<<1, 1, 0, stream>>>(counter, static_cast<uint64_t>(blocks));
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchTyped(RandomDistribution dist, T* out, int64_t n, philox::Key key,
                        uint64_t* base, cudaStream_t stream) {
  const int grid = GridFor(RandomFloatBlocks(n));
  switch (dist) {
    case RandomDistribution::kUniform:
      RandomFloatKernel<T, RandomDistribution::kUniform>
          <<<grid, kThreads, 0, stream>>>(out, n, key, base);
      break;
    case RandomDistribution::kNormal:
      RandomFloatKernel<T, RandomDistribution::kNormal>
          <<<grid, kThreads, 0, stream>>>(out, n, key, base);
      break;
    case RandomDistribution::kTruncatedNormal:
      RandomFloatKernel<T, RandomDistribution::kTruncatedNormal>
          <<<grid, kThreads, 0, stream>>>(out, n, key, base);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return Advance(base, RandomFloatBlocks(n), stream);
}

// Values lo + offset, summed in unsigned arithmetic (no signed overflow;
// offset < range, so the result is in [lo, hi) and fits T).
template <typename T>
__global__ void RandomIntKernel(T* __restrict__ out, int64_t n, int64_t lo, uint64_t range,
                                philox::Key key, const uint64_t* __restrict__ counter) {
  const uint64_t base = *counter;
  const int64_t blocks = (n + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += stride) {
    uint64_t offset[2];
    philox::UniformIntBlock(key, base + static_cast<uint64_t>(b), range, offset);
    const int64_t first = b * 2;
    const int count = n - first < 2 ? static_cast<int>(n - first) : 2;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      if (j < count) {
        out[first + j] =
            static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(lo) + offset[j]));
      }
    }
  }
}

template <typename T>
cudaError_t LaunchInt(T* out, int64_t n, int64_t lo, uint64_t range, uint64_t key,
                      uint64_t* counter, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (range == 0) return cudaErrorInvalidValue;
  RandomIntKernel<T><<<GridFor(RandomIntBlocks(n)), kThreads, 0, stream>>>(
      out, n, lo, range, philox::KeyFromU64(key), counter);
  return Advance(counter, RandomIntBlocks(n), stream);
}

}  // namespace

cudaError_t LaunchRandomFloat(RandomDistribution dist, RandomElement element, void* out,
                              int64_t n, uint64_t key, uint64_t* counter, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const philox::Key k = philox::KeyFromU64(key);
  switch (element) {
    case RandomElement::kFloat:
      return LaunchTyped(dist, static_cast<float*>(out), n, k, counter, stream);
    case RandomElement::kHalf:
      return LaunchTyped(dist, static_cast<__half*>(out), n, k, counter, stream);
    case RandomElement::kBFloat16:
      return LaunchTyped(dist, static_cast<__nv_bfloat16*>(out), n, k, counter, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchRandomUniformInt(int32_t* out, int64_t n, int32_t lo, uint64_t range,
                                   uint64_t key, uint64_t* counter, cudaStream_t stream) {
  return LaunchInt(out, n, lo, range, key, counter, stream);
}

cudaError_t LaunchRandomUniformInt(int64_t* out, int64_t n, int64_t lo, uint64_t range,
                                   uint64_t key, uint64_t* counter, cudaStream_t stream) {
  return LaunchInt(out, n, lo, range, key, counter, stream);
}

}  // namespace sluice::gpu
