// Launcher of TensorFlow's stateless random draws on the GPU
// (ops/gpu/stateless_random.cu): group g of the output is Philox of the
// counter advanced by g under the key (ops/gpu/stateless_philox.h, the code
// the CPU kernels run), one group per thread step, so the values are the
// CPU's (uniform and integers bit for bit; normal and truncated normal
// within the device's sin/cos/log ulps; a truncated group rejects on its own).
//
//   cudaError_t e = sluice::gpu::LaunchStatelessRandom(
//       sluice::gpu::StatelessDistribution::kUniform, sluice::gpu::StatelessElement::kFloat,
//       out, n, sluice::stateless::FromSeed(7, 42), stream);
//
// Asynchronous on `stream`; the result is cudaGetLastError(). n == 0
// launches nothing. Plain C++ declarations: g++ and nvcc both read this.
#ifndef SLUICE_OPS_GPU_STATELESS_RANDOM_CU_H_
#define SLUICE_OPS_GPU_STATELESS_RANDOM_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/gpu/stateless_philox.h"

namespace sluice::gpu {

enum class StatelessDistribution : int { kUniform, kNormal, kTruncatedNormal };

// float, double, __half or __nv_bfloat16 (bit-compatible with sluice::Half
// and sluice::BFloat16).
enum class StatelessElement : int { kFloat, kDouble, kHalf, kBFloat16 };

cudaError_t LaunchStatelessRandom(StatelessDistribution dist, StatelessElement element, void* out,
                                  int64_t n, const stateless::KeyCounter& kc, cudaStream_t stream);

// Integers of `bytes` (4 or 8) bytes: lo plus Philox's bits modulo `range`
// (0: all bits), added in unsigned arithmetic (Int32Group / Int64Group);
// `lo` holds the low `bytes` bytes of minval.
cudaError_t LaunchStatelessInts(int bytes, void* out, int64_t n, uint64_t lo, uint64_t range,
                                const stateless::KeyCounter& kc, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_STATELESS_RANDOM_CU_H_
