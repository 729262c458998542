// Launchers of the GPU random kernels (ops/gpu/random.cu): Philox4x32-10
// (ops/gpu/philox.h) keyed by a 64-bit key, one 128-bit block per thread step.
//
//   uint64_t* counter = ...;   // device memory, 0 at first
//   cudaError_t e = sluice::gpu::LaunchRandomFloat(
//       sluice::gpu::RandomDistribution::kNormal, sluice::gpu::RandomElement::kFloat,
//       out, n, key, counter, stream);
//
// The counter is a uint64 in device memory: a fill reads its base from it
// and then (a second, one-thread kernel on the same stream) adds the blocks
// it used, so successive fills on one stream read new blocks and a
// recorded step (a CUDA graph) draws new numbers at every replay. Value i
// of a fill comes from counter block `base + i / values_per_block` (words
// 0-1 of the Philox counter); redraws of the rejection loops use the same
// block with an attempt number in word 2, so a fill reading blocks
// [base, base + blocks) never overlaps another fill's range and the output
// depends only on (key, base, n). Fills sharing a counter must be queued
// on one stream, one at a time. Launches are asynchronous on `stream`; the
// result is the launch's cudaGetLastError(). n == 0 launches nothing.
// Plain C++ declarations: g++ and nvcc both read this header.
#ifndef SLUICE_OPS_GPU_RANDOM_CU_H_
#define SLUICE_OPS_GPU_RANDOM_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

enum class RandomDistribution : int {
  kUniform,          // [0, 1)
  kNormal,           // N(0, 1), Box-Muller
  kTruncatedNormal,  // N(0, 1) redrawn outside [-2, 2]
};

// The element type of `out`: float, __half or __nv_bfloat16 (bit-compatible
// with sluice::Half / sluice::BFloat16).
enum class RandomElement : int { kFloat, kHalf, kBFloat16 };

// Counter blocks a float fill of n values uses (4 values per block).
inline int64_t RandomFloatBlocks(int64_t n) { return (n + 3) / 4; }
// Counter blocks an integer fill of n values uses (2 values per block).
inline int64_t RandomIntBlocks(int64_t n) { return (n + 1) / 2; }

cudaError_t LaunchRandomFloat(RandomDistribution dist, RandomElement element, void* out,
                              int64_t n, uint64_t key, uint64_t* counter, cudaStream_t stream);

// Uniform integers in [lo, lo + range), range >= 1, each from 64 random bits
// with rejection, so every value is equally likely.
cudaError_t LaunchRandomUniformInt(int32_t* out, int64_t n, int32_t lo, uint64_t range,
                                   uint64_t key, uint64_t* counter, cudaStream_t stream);
cudaError_t LaunchRandomUniformInt(int64_t* out, int64_t n, int64_t lo, uint64_t range,
                                   uint64_t key, uint64_t* counter, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_RANDOM_CU_H_
