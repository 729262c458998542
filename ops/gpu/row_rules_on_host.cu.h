// A test hook: the GPU row updates' arithmetic (ops/gpu/row_rules.cu.h),
// compiled by nvcc as host code and run on the host, so that a machine
// without a GPU checks what the CUDA kernels compute against the CPU kernels.
//
//   gpu::RowUpdate<float> u;  // every pointer a HOST pointer, hyper included
//   u.rule = gpu::RowRule::kRMSProp; ...
//   gpu::RunRowUpdateOnHost<float, int64_t>(u, rows, inner, indices, n);
//
// The elements are updated one after another in the kernel's flat order
// (grad row i to var row indices[i], or to row i when indices is null); an
// index outside [0, rows) is skipped, as on the device; a rule outside
// RowRule updates nothing. Instantiated for
// T = float and double, Index = int32_t and int64_t. Plain C++.
#ifndef SLUICE_OPS_GPU_ROW_RULES_ON_HOST_CU_H_
#define SLUICE_OPS_GPU_ROW_RULES_ON_HOST_CU_H_

#include <cstdint>

#include "ops/gpu/sparse_training.cu.h"

namespace sluice::gpu {

template <typename T, typename Index>
void RunRowUpdateOnHost(const RowUpdate<T>& u, int64_t rows, int64_t inner, const Index* indices,
                        int64_t n);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ROW_RULES_ON_HOST_CU_H_
