// A test hook: the GPU batch normalization's sequence of kernels
// (ops/gpu/batch_norm.cu) run on the host, piece by piece, with the same
// functions (batch_norm_fns.cu.h) compiled by nvcc as host code. Every
// pointer in the args is a HOST pointer; scratch holds
// BatchNormScratchDoubles(rows, depth) doubles. Plain C++.
#ifndef SLUICE_OPS_GPU_BATCH_NORM_ON_HOST_CU_H_
#define SLUICE_OPS_GPU_BATCH_NORM_ON_HOST_CU_H_

#include "ops/gpu/batch_norm.cu.h"

namespace sluice::gpu {

void RunBatchNormForwardOnHost(const BatchNormForwardArgs& a);
void RunBatchNormGradOnHost(const BatchNormGradArgs& a);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_BATCH_NORM_ON_HOST_CU_H_
