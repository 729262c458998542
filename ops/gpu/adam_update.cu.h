// One element of TensorFlow's ApplyAdam on a GPU, shared by the single- and
// multi-tensor update kernels (ops/gpu/training.cu, multi_training.cu):
//
//   const AdamStep<T> step(scalars);          // once per thread
//   step.Update<kNesterov>(&var[i], &m[i], &v[i], grad[i]);
//
// CUDA only: nvcc reads it.
#ifndef SLUICE_OPS_GPU_ADAM_UPDATE_CU_H_
#define SLUICE_OPS_GPU_ADAM_UPDATE_CU_H_

#include <cuda_runtime.h>

#include "ops/gpu/device_math.cu.h"
#include "ops/gpu/training.cu.h"

namespace sluice::gpu {

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m += (g - m) * (1 - beta1); v += (g^2 - v) * (1 - beta2);
// var -= lr_t * m / (sqrt(v) + epsilon), beta1 * m + (1 - beta1) * g in
// place of m when nesterov.
template <typename T>
struct AdamStep {
  T beta1, epsilon, lr_t, one_minus_beta1, one_minus_beta2;

  __device__ explicit AdamStep(const AdamScalars<T>& s) {
    const T one(1);
    beta1 = *s.beta1;
    epsilon = *s.epsilon;
    lr_t = *s.lr * device_math::Sqrt(one - *s.beta2_power) / (one - *s.beta1_power);
    one_minus_beta1 = one - beta1;
    one_minus_beta2 = one - *s.beta2;
  }

  template <bool kNesterov>
  __device__ __forceinline__ void Update(T* var, T* m, T* v, T g) const {
    const T mi = *m + (g - *m) * one_minus_beta1;
    const T vi = *v + (g * g - *v) * one_minus_beta2;
    *m = mi;
    *v = vi;
    const T step = kNesterov ? mi * beta1 + one_minus_beta1 * g : mi;
    *var -= lr_t * step / (device_math::Sqrt(vi) + epsilon);
  }
};

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ADAM_UPDATE_CU_H_
