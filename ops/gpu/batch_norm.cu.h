// CUDA launchers of the fused batch normalization on NHWC data
// (batch_norm.cu), x seen as [rows, depth] = [N * H * W, C]; x, y, dy and
// dx are float, half or bfloat16 (`type`; 16-bit values computed in
// float), the per-channel tensors float:
//
//   gpu::BatchNormForwardArgs a;  // device pointers; a.scratch holds
//   ...                           // BatchNormScratchDoubles(rows, depth) doubles
//   cudaError_t e = gpu::LaunchBatchNormForward(a, stream);
//
// The CPU kernels' arithmetic (ops/nn/batch_norm_ops.cc,
// batch_norm_grad_ops.cc), statistics accumulated in double: per-channel
// sums over chunks of rows (ops/gpu/batch_norm_fns.cu.h), then one thread
// per channel adds the chunks up. Every pointer is device memory; launches
// only enqueue on `stream` and return cudaGetLastError(). Plain C++.
#ifndef SLUICE_OPS_GPU_BATCH_NORM_CU_H_
#define SLUICE_OPS_GPU_BATCH_NORM_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_BN_GEOMETRY_FN __host__ __device__ __forceinline__
#else
#define SLUICE_BN_GEOMETRY_FN inline
#endif

namespace sluice::gpu {

// The storage type of x, y, dy and dx.
enum class BatchNormType : int { kFloat, kHalf, kBFloat16 };

struct BatchNormForwardArgs {
  BatchNormType type = BatchNormType::kFloat;
  const void* x = nullptr;
  const float* scale = nullptr;
  const float* offset = nullptr;
  const float* mean_in = nullptr;  // inference's statistics, the moving
  const float* var_in = nullptr;   // averages' old values; may be null when training with factor 1
  void* y = nullptr;
  float* batch_mean = nullptr;
  float* batch_var = nullptr;  // Bessel-corrected when training
  float* saved_mean = nullptr;  // reserve_space_1
  float* saved_var = nullptr;   // reserve_space_2: the biased variance
  double* scratch = nullptr;
  int64_t rows = 0;
  int64_t depth = 0;
  float epsilon = 0.0001f;
  float factor = 1.0f;  // exponential_avg_factor
  bool training = true;
};

struct BatchNormGradArgs {
  BatchNormType type = BatchNormType::kFloat;
  const void* dy = nullptr;
  const void* x = nullptr;
  const float* scale = nullptr;
  const float* mean = nullptr;  // reserve_space_1
  const float* var = nullptr;   // reserve_space_2
  void* dx = nullptr;
  float* scale_grad = nullptr;
  float* offset_grad = nullptr;
  double* scratch = nullptr;
  int64_t rows = 0;
  int64_t depth = 0;
  float epsilon = 0.0001f;
  bool training = true;
};

// The per-channel sums run over chunks of at least 32 rows, at most 1024
// chunks; the scratch of either launcher is 2 * chunks * depth + 4 * depth
// doubles.
inline constexpr int64_t kBatchNormMinRowsPerChunk = 32;
inline constexpr int64_t kBatchNormMaxChunks = 1024;

SLUICE_BN_GEOMETRY_FN int64_t BatchNormChunks(int64_t rows) {
  int64_t chunks = (rows + kBatchNormMinRowsPerChunk - 1) / kBatchNormMinRowsPerChunk;
  if (chunks > kBatchNormMaxChunks) chunks = kBatchNormMaxChunks;
  return chunks < 1 ? 1 : chunks;
}

SLUICE_BN_GEOMETRY_FN int64_t BatchNormScratchDoubles(int64_t rows, int64_t depth) {
  return 2 * BatchNormChunks(rows) * depth + 4 * depth;
}

cudaError_t LaunchBatchNormForward(const BatchNormForwardArgs& a, cudaStream_t stream);
cudaError_t LaunchBatchNormGrad(const BatchNormGradArgs& a, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_BATCH_NORM_CU_H_
