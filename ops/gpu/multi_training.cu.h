// Launchers of the multi-tensor update kernels (ops/gpu/multi_training.cu,
// for ops/training/multi_apply_ops.h): one launch updates up to
// kMultiPieces variables. The pieces travel by value as the kernel's
// parameters (about 1.3 KiB), so a captured step records them with the
// launch and no table has to be copied to the device; scalars are read by
// the kernel through device pointers, as in training.cu.h.
//
//   MultiGradientDescentPieces<float> p;  // p.var[i], p.delta[i], p.n[i], p.count
//   cudaError_t e = LaunchMultiApplyGradientDescent(p, alpha, stream);
//
// Each piece gets its own row of blocks (blockIdx.y); formulas are the
// single-tensor kernels'. count == 0 launches nothing. Instantiated for
// float and double. Plain C++: g++ and nvcc both read it.
#ifndef SLUICE_OPS_GPU_MULTI_TRAINING_CU_H_
#define SLUICE_OPS_GPU_MULTI_TRAINING_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/gpu/training.cu.h"

namespace sluice::gpu {

constexpr int kMultiPieces = 32;

template <typename T>
struct MultiGradientDescentPieces {
  T* var[kMultiPieces];
  const T* delta[kMultiPieces];
  int64_t n[kMultiPieces];
  int count = 0;
};

template <typename T>
struct MultiAdamPieces {
  T* var[kMultiPieces];
  T* m[kMultiPieces];
  T* v[kMultiPieces];
  const T* grad[kMultiPieces];
  int64_t n[kMultiPieces];
  int count = 0;
};

// var[i] -= *alpha * delta[i]
template <typename T>
cudaError_t LaunchMultiApplyGradientDescent(const MultiGradientDescentPieces<T>& pieces,
                                            const T* alpha, cudaStream_t stream);

// ApplyAdam on every piece, with the scalars shared.
template <typename T>
cudaError_t LaunchMultiApplyAdam(const MultiAdamPieces<T>& pieces, const AdamScalars<T>& scalars,
                                 bool nesterov, cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_MULTI_TRAINING_CU_H_
