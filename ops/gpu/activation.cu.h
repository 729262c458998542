// CUDA launchers of the element-wise activations beyond Relu (activation.cu):
// Relu6, Elu, Selu, LeakyRelu, Softplus, Softsign, and their gradient ops.
// Plain C++: g++-compiled kernels include it, nvcc compiles the definitions.
//
//   cudaError_t e = gpu::LaunchActivation(gpu::ActivationFn::kElu, gpu::CwiseType::kFloat,
//                                         x, y, n, /*alpha=*/0, stream);
//
// Types: float, double, half and bfloat16 (the 16-bit ones computed in
// float, rounded once); any other is cudaErrorNotSupported. The formulas are
// the CPU kernels' (ops/nn/activation_ops.cc, activation_grad_ops.cc,
// ops/math/math_kernels.cc for Softplus and Softsign), element for element:
// ops/gpu/activation_fns.cu.h. `alpha` is LeakyRelu's (ignored by the
// others). Launches only enqueue on `stream` and return cudaGetLastError();
// n == 0 launches nothing; y (out) may be x (g). Thread-safe.
#ifndef SLUICE_OPS_GPU_ACTIVATION_CU_H_
#define SLUICE_OPS_GPU_ACTIVATION_CU_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "ops/gpu/cwise.cu.h"

namespace sluice::gpu {

// kHalfSquare (x * x / 2) is not an op: L2Loss sums its results.
enum class ActivationFn : int {
  kRelu6,
  kElu,
  kSelu,
  kLeakyRelu,
  kSoftplus,
  kSoftsign,
  kHalfSquare,
};

// The gradient ops: out = f(gradients, v), v being the features (Relu6Grad,
// LeakyReluGrad, SoftplusGrad, SoftsignGrad) or the outputs (EluGrad,
// SeluGrad), as each op's second input.
enum class ActivationGradFn : int {
  kRelu6Grad,
  kEluGrad,
  kSeluGrad,
  kLeakyReluGrad,
  kSoftplusGrad,
  kSoftsignGrad,
};

// The ops each function is (kHalfSquare is no op's).
inline constexpr std::pair<const char*, ActivationFn> kActivationOps[] = {
    {"Relu6", ActivationFn::kRelu6},         {"Elu", ActivationFn::kElu},
    {"Selu", ActivationFn::kSelu},           {"LeakyRelu", ActivationFn::kLeakyRelu},
    {"Softplus", ActivationFn::kSoftplus},   {"Softsign", ActivationFn::kSoftsign}};
inline constexpr std::pair<const char*, ActivationGradFn> kActivationGradOps[] = {
    {"Relu6Grad", ActivationGradFn::kRelu6Grad},
    {"EluGrad", ActivationGradFn::kEluGrad},
    {"SeluGrad", ActivationGradFn::kSeluGrad},
    {"LeakyReluGrad", ActivationGradFn::kLeakyReluGrad},
    {"SoftplusGrad", ActivationGradFn::kSoftplusGrad},
    {"SoftsignGrad", ActivationGradFn::kSoftsignGrad}};

// y[i] = fn(x[i]) for i < n.
cudaError_t LaunchActivation(ActivationFn fn, CwiseType type, const void* x, void* y, int64_t n,
                             float alpha, cudaStream_t stream);

// out[i] = fn(g[i], v[i]) for i < n.
cudaError_t LaunchActivationGrad(ActivationGradFn fn, CwiseType type, const void* g,
                                 const void* v, void* out, int64_t n, float alpha,
                                 cudaStream_t stream);

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_ACTIVATION_CU_H_
