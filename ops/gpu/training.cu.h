// Launchers of the GPU training kernels (ops/gpu/training.cu): one fused
// elementwise kernel per update, over buffers of n elements that do not
// overlap (var and its slots are distinct variables, copied on write).
// Hyper-parameters (alpha, lr, momentum, beta*, epsilon) are read by the
// kernel through DEVICE pointers to scalars: the host never reads them.
//
//   cudaError_t e = sluice::gpu::LaunchApplyGradientDescent<float>(
//       var, alpha, delta, n, stream);   // var -= *alpha * delta
//
// The formulas are the CPU kernels' (ops/training/training_ops.h). Launches are
// asynchronous on `stream`; the result is the launch's cudaGetLastError().
// n == 0 launches nothing. Instantiated for T = float and double; the
// assign updates also for int64_t. Plain C++: g++ and nvcc both read it.
#ifndef SLUICE_OPS_GPU_TRAINING_CU_H_
#define SLUICE_OPS_GPU_TRAINING_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

// var -= alpha * delta
template <typename T>
cudaError_t LaunchApplyGradientDescent(T* var, const T* alpha, const T* delta, int64_t n,
                                       cudaStream_t stream);

// The momentum rules' dense forms run on the row kernel
// (ops/gpu/sparse_training.cu.h, RowRule::kMomentum and kKerasMomentum).

// Device pointers to the scalar inputs of ApplyAdam.
template <typename T>
struct AdamScalars {
  const T* beta1_power = nullptr;
  const T* beta2_power = nullptr;
  const T* lr = nullptr;
  const T* beta1 = nullptr;
  const T* beta2 = nullptr;
  const T* epsilon = nullptr;
};

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
// var -= lr_t * m / (sqrt(v) + epsilon), with beta1 * m + (1 - beta1) * grad
// in place of m when nesterov.
template <typename T>
cudaError_t LaunchApplyAdam(T* var, T* m, T* v, const AdamScalars<T>& scalars, const T* grad,
                            int64_t n, bool nesterov, cudaStream_t stream);

// var += value (add) or var -= value.
template <typename T>
cudaError_t LaunchAssignUpdate(T* var, const T* value, int64_t n, bool add, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_TRAINING_CU_H_
