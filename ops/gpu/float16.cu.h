// The 16-bit float storage types of the GPU kernels (__half, __nv_bfloat16)
// and the type their arithmetic is done in: Num<T>::C (float for both, T
// itself for float and double), Num<T>::Up and Num<T>::Down (round to
// nearest even). For nvcc only: shared by the element-wise, NN and window
// kernels (cwise_impl.cu.h, nn.cu, conv.cu).
//
//   using N = Num<__nv_bfloat16>;
//   y[i] = N::Down(N::Up(x[i]) + N::Up(b[c]));
#ifndef SLUICE_OPS_GPU_FLOAT16_CU_H_
#define SLUICE_OPS_GPU_FLOAT16_CU_H_

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace sluice::gpu {

template <typename T>
struct Num {
  using C = T;
  static __device__ __forceinline__ C Up(T v) { return v; }
  static __device__ __forceinline__ T Down(C v) { return v; }
};
template <>
struct Num<__half> {
  using C = float;
  static __device__ __forceinline__ float Up(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half Down(float v) { return __float2half_rn(v); }
};
template <>
struct Num<__nv_bfloat16> {
  using C = float;
  static __device__ __forceinline__ float Up(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 Down(float v) { return __float2bfloat16_rn(v); }
};

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_FLOAT16_CU_H_
