// The kernels that only move elements (array.cu's copies and fills,
// GatherNd, Pad, OneHot) run on an unsigned word of the element's size, so
// one instantiation serves every dtype of that size:
//
//   return BySize(DataTypeSize(dtype), [&](auto word) {
//     using U = decltype(word);   // uint8_t, uint16_t, uint32_t or uint64_t
//     Kernel<U><<<...>>>(static_cast<const U*>(from), ...);
//     return cudaGetLastError();
//   });
//
// Host code; nvcc only.
#ifndef SLUICE_OPS_GPU_ELEMENT_BITS_CU_H_
#define SLUICE_OPS_GPU_ELEMENT_BITS_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

// Calls f(Word{}) with the unsigned integer type of `element_size` bytes;
// cudaErrorInvalidValue for other sizes.
template <typename F>
cudaError_t BySize(int element_size, F&& f) {
  switch (element_size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ELEMENT_BITS_CU_H_
