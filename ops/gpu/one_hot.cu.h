// The CUDA launcher of OneHot (one_hot.cu): the output [prefix, depth,
// suffix] holds on_value where indices[p, s] == d, else off_value. The
// indices, on_value and off_value stay in device memory (an index outside
// [0, depth) matches no d: a row of off_value, as on the CPU). Plain C++.
#ifndef SLUICE_OPS_GPU_ONE_HOT_CU_H_
#define SLUICE_OPS_GPU_ONE_HOT_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

// elem_bytes (of on/off/out): 1, 2, 4 or 8; Index: int32_t or int64_t.
template <typename Index>
cudaError_t LaunchOneHot(int elem_bytes, const Index* indices, const void* on_value,
                         const void* off_value, void* out, int64_t prefix, int64_t depth,
                         int64_t suffix, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ONE_HOT_CU_H_
