// Helpers the reduction and ArgMax kernels share (reduction.cu, argmax.cu):
// launch geometry and the accumulator types. CUDA only; not a public header.
#ifndef SLUICE_OPS_GPU_REDUCE_COMMON_CU_H_
#define SLUICE_OPS_GPU_REDUCE_COMMON_CU_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace sluice {
namespace gpu {
namespace reduce_internal {

inline constexpr int kDefaultSmCount = 80;
inline constexpr int64_t kMaxGridYZ = 65535;
inline constexpr int kTileThreads = 256;  // bx * by of the column tiles
inline constexpr int kWarpRowsMaxWidth = 512;

inline int Sms(int sm_count) { return sm_count > 0 ? sm_count : kDefaultSmCount; }
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
inline int64_t PrevPow2(int64_t v) {  // v >= 1
  int64_t p = 1;
  while (p * 2 <= v) p <<= 1;
  return p;
}
// Grid-stride kernels need no more blocks than this.
inline int64_t MaxBlocks(int sm_count) { return int64_t{Sms(sm_count)} * 64; }
inline unsigned GridOf(int64_t blocks, int64_t cap) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

// ---------------------------------------------------------------------------
// Element types and accumulators.

template <typename T>
struct AccOf {
  using type = T;
};
template <>
struct AccOf<__half> {
  using type = float;
};
template <>
struct AccOf<__nv_bfloat16> {
  using type = float;
};

__device__ __forceinline__ float ToAcc(float v) { return v; }
__device__ __forceinline__ double ToAcc(double v) { return v; }
__device__ __forceinline__ int64_t ToAcc(int64_t v) { return v; }
__device__ __forceinline__ float ToAcc(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToAcc(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename Out>
struct FromAcc {
  template <typename A>
  __device__ __forceinline__ static Out Convert(A v) {
    return static_cast<Out>(v);
  }
};
template <>
struct FromAcc<__half> {
  __device__ __forceinline__ static __half Convert(float v) { return __float2half_rn(v); }
};
template <>
struct FromAcc<__nv_bfloat16> {
  __device__ __forceinline__ static __nv_bfloat16 Convert(float v) {
    return __float2bfloat16_rn(v);
  }
};

template <typename A>
__device__ __forceinline__ bool IsNan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return v != v;
  } else {
    return false;
  }
}

}  // namespace reduce_internal
}  // namespace gpu
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_REDUCE_COMMON_CU_H_
