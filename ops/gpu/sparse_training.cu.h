// Launchers of the GPU row updates (ops/gpu/sparse_training.cu): the scatter
// ops and the training rules below, on chosen rows of a variable (the
// SparseApply* forms) or on all of it (the dense Apply* forms of every
// rule; GradientDescent's and Adam's dense kernels are ops/gpu/training.cu's).
//
//   // var[indices[i], :] -= updates[i, :] for i < n (duplicates add up)
//   cudaError_t e = sluice::gpu::LaunchScatter<float, int64_t>(
//       sluice::gpu::ScatterKind::kSub, var, rows, inner, indices, n, updates,
//       /*scalar_updates=*/false, stream);
//
// One thread per element updated. As in TensorFlow's GPU kernels:
//  - an index outside [0, rows) is skipped on the device (the host never
//    reads the indices, which live in device memory);
//  - ScatterAdd/ScatterSub sum duplicate indices (atomically); ScatterUpdate
//    and the rules race on them, so the optimizers deduplicate first
//    (ops/training/optimizers.h);
//  - hyper-parameters are read by the kernel through DEVICE pointers, and
//    their values are not checked (FTRL's lr > 0 is checked on the CPU only).
// The formulas are the CPU rules' (ops/training/training_kernels_*.cc),
// element by element (ops/gpu/row_rules.cu.h). Launches are asynchronous on
// `stream`; the result is the launch's cudaGetLastError(); nothing is launched
// when there is nothing to update. Instantiated for T = float and double,
// Index = int32_t and int64_t. Plain C++: g++ and nvcc both read it.
#ifndef SLUICE_OPS_GPU_SPARSE_TRAINING_CU_H_
#define SLUICE_OPS_GPU_SPARSE_TRAINING_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::gpu {

enum class ScatterKind { kUpdate, kAdd, kSub };

// var is [rows, inner]; indices has n entries; updates is [n, inner], or one
// value for every element when scalar_updates.
template <typename T, typename Index>
cudaError_t LaunchScatter(ScatterKind kind, T* var, int64_t rows, int64_t inner,
                          const Index* indices, int64_t n, const T* updates, bool scalar_updates,
                          cudaStream_t stream);

// The rules, with their hyper-parameters in the ops' input order and their
// slots (RowUpdate::slot) in the ops' order after var:
//   kMomentum (lr, momentum; flag use_nesterov; accum):
//     accum = accum * momentum + g; var -= lr * accum
//     (Nesterov: var -= g * lr + accum * momentum * lr)
//   kKerasMomentum (lr, momentum; flag use_nesterov; accum):
//     accum = accum * momentum - lr * g; var += accum
//     (Nesterov: var += accum * momentum - lr * g)
//   kAdagrad (lr; flag update_slots; accum):
//     accum += g^2 (when update_slots); var -= lr * g / sqrt(accum)
//   kAdagradV2 (lr, epsilon; flag update_slots; accum):
//     accum += g^2 (when update_slots); var -= lr * g / (sqrt(accum) + epsilon)
//   kFtrl (lr, l1, l2, lr_power; flag multiply_linear_by_lr; accum, linear):
//     FTRL-proximal (ops/training/training_kernels_ftrl.cc).
//   kFtrlV2 (lr, l1, l2, l2_shrinkage, lr_power; as kFtrl): with L2 shrinkage.
//   kAdadelta (lr, rho, epsilon; accum, accum_update),
//   kRMSProp (lr, rho, momentum, epsilon; ms, mom),
//   kCenteredRMSProp (lr, rho, momentum, epsilon; mg, ms, mom):
//     ops/training/training_kernels_adaptive.cc; the sparse forms of the two
//     RMSProps write the moving averages as TensorFlow's sparse kernels do.
//   kAdaMax (beta1_power, lr, beta1, beta2, epsilon; m, v),
//   kAmsgrad (beta1_power, beta2_power, lr, beta1, beta2, epsilon; m, v, vhat):
//     ops/training/training_kernels_keras.cc (dense forms only).
//   kAddSign (lr, alpha, sign_decay, beta; m),
//   kPowerSign (lr, logbase, sign_decay, beta; m):
//     ops/training/training_kernels_sign.cc (dense forms only).
enum class RowRule {
  kMomentum,
  kKerasMomentum,
  kAdagrad,
  kAdagradV2,
  kFtrl,
  kFtrlV2,
  kAdadelta,
  kRMSProp,
  kCenteredRMSProp,
  kAdaMax,
  kAmsgrad,
  kAddSign,
  kPowerSign,
};

constexpr int kMaxRowSlots = 3;
constexpr int kMaxRowHyper = 6;

template <typename T>
struct RowUpdate {
  RowRule rule = RowRule::kMomentum;
  T* var = nullptr;
  T* slot[kMaxRowSlots] = {nullptr};         // the rule's slots, in the op's order
  const T* hyper[kMaxRowHyper] = {nullptr};  // device pointers to the scalars
  bool flag = false;
  const T* grad = nullptr;  // [n, inner]
};

// Applies `u` to rows indices[0..n) of a [rows, inner] variable, grad row i
// to row indices[i]; with indices == nullptr, to rows 0..n (the dense form).
template <typename T, typename Index>
cudaError_t LaunchRowUpdate(const RowUpdate<T>& u, int64_t rows, int64_t inner,
                            const Index* indices, int64_t n, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_SPARSE_TRAINING_CU_H_
