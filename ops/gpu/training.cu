// CUDA kernels of the training ops (launchers: ops/gpu/training.cu.h): one
// grid-stride elementwise kernel per update; scalars come from device memory.
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/adam_update.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/training.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename T>
__global__ void GradientDescentKernel(T* __restrict__ var, const T* __restrict__ alpha,
                                      const T* __restrict__ delta, int64_t n) {
  const T a = *alpha;
  for (int64_t i = FirstIndex(); i < n; i += Stride()) var[i] -= a * delta[i];
}

template <typename T, bool kNesterov>
__global__ void AdamKernel(T* __restrict__ var, T* __restrict__ m, T* __restrict__ v,
                           AdamScalars<T> s, const T* __restrict__ grad, int64_t n) {
  const AdamStep<T> step(s);
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    step.template Update<kNesterov>(&var[i], &m[i], &v[i], grad[i]);
  }
}

template <typename T, bool kAdd>
__global__ void AssignUpdateKernel(T* __restrict__ var, const T* __restrict__ value, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    if (kAdd) {
      var[i] += value[i];
    } else {
      var[i] -= value[i];
    }
  }
}

}  // namespace

template <typename T>
cudaError_t LaunchApplyGradientDescent(T* var, const T* alpha, const T* delta, int64_t n,
                                       cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  GradientDescentKernel<T><<<GridFor(n), kThreads, 0, stream>>>(var, alpha, delta, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchApplyAdam(T* var, T* m, T* v, const AdamScalars<T>& scalars, const T* grad,
                            int64_t n, bool nesterov, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (nesterov) {
    AdamKernel<T, true><<<GridFor(n), kThreads, 0, stream>>>(var, m, v, scalars, grad, n);
  } else {
    AdamKernel<T, false><<<GridFor(n), kThreads, 0, stream>>>(var, m, v, scalars, grad, n);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchAssignUpdate(T* var, const T* value, int64_t n, bool add, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (add) {
    AssignUpdateKernel<T, true><<<GridFor(n), kThreads, 0, stream>>>(var, value, n);
  } else {
    AssignUpdateKernel<T, false><<<GridFor(n), kThreads, 0, stream>>>(var, value, n);
  }
  return cudaGetLastError();
}

#define SLUICE_INSTANTIATE_APPLY_(T)                                                           \
  template cudaError_t LaunchApplyGradientDescent<T>(T*, const T*, const T*, int64_t,          \
                                                     cudaStream_t);                            \
  template cudaError_t LaunchApplyAdam<T>(T*, T*, T*, const AdamScalars<T>&, const T*, int64_t, \
                                          bool, cudaStream_t);
SLUICE_INSTANTIATE_APPLY_(float)
SLUICE_INSTANTIATE_APPLY_(double)
#undef SLUICE_INSTANTIATE_APPLY_

template cudaError_t LaunchAssignUpdate<float>(float*, const float*, int64_t, bool, cudaStream_t);
template cudaError_t LaunchAssignUpdate<double>(double*, const double*, int64_t, bool,
                                                cudaStream_t);
template cudaError_t LaunchAssignUpdate<int64_t>(int64_t*, const int64_t*, int64_t, bool,
                                                 cudaStream_t);

}  // namespace sluice::gpu
