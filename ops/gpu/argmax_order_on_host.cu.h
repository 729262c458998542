// A test hook: ArgMax's and ArgMin's combine order on the GPU
// (ops/gpu/argmax_order.cu.h), compiled by nvcc as host code, run as the
// kernels run it but on the host: `lanes` threads each scan the elements
// k = lane, lane + lanes, ... of a row, then the lanes' candidates combine
// pairwise in an order drawn from `seed` (the shuffles and block steps of
// the kernels combine in an order no test can predict).
//
//   int64_t i = gpu::ArgBestOnHost(/*arg_min=*/false, x, n, /*lanes=*/32, seed);
//
// Defined for float and double. n must be positive. Plain C++.
#ifndef SLUICE_OPS_GPU_ARGMAX_ORDER_ON_HOST_CU_H_
#define SLUICE_OPS_GPU_ARGMAX_ORDER_ON_HOST_CU_H_

#include <cstdint>

namespace sluice::gpu {

template <typename T>
int64_t ArgBestOnHost(bool arg_min, const T* x, int64_t n, int lanes, uint32_t seed);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ARGMAX_ORDER_ON_HOST_CU_H_
