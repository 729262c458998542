// A test hook: the GPU activations' element functions
// (ops/gpu/activation_fns.cu.h), compiled by nvcc as host code, one value at
// a time, so that a machine without a GPU checks them against the CPU
// kernels. Defined for C = float and double. Plain C++.
#ifndef SLUICE_OPS_GPU_ACTIVATION_FNS_ON_HOST_CU_H_
#define SLUICE_OPS_GPU_ACTIVATION_FNS_ON_HOST_CU_H_

#include "ops/gpu/activation.cu.h"

namespace sluice::gpu {

template <typename C>
C ActivateOnHost(ActivationFn fn, C x, C alpha);

template <typename C>
C ActivateGradOnHost(ActivationGradFn fn, C g, C v, C alpha);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ACTIVATION_FNS_ON_HOST_CU_H_
