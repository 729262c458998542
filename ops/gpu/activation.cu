// CUDA kernels of the activations beyond Relu (launchers: activation.cu.h):
// one grid-stride loop per (function, storage type), the element in
// activation_fns.cu.h.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ops/gpu/activation.cu.h"
#include "ops/gpu/activation_fns.cu.h"
#include "ops/gpu/float16.cu.h"
#include "ops/gpu/grid_stride.cu.h"

namespace sluice::gpu {
namespace {

using activation_fns::Activate;
using activation_fns::ActivateGrad;
using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <ActivationFn kFn, typename S>
__global__ void ActivationKernel(const S* x, S* y, int64_t n, float alpha) {
  using N = Num<S>;
  using C = typename N::C;
  const C a = static_cast<C>(alpha);
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    y[i] = N::Down(Activate<kFn>(N::Up(x[i]), a));
  }
}

template <ActivationGradFn kFn, typename S>
__global__ void ActivationGradKernel(const S* g, const S* v, S* out, int64_t n, float alpha) {
  using N = Num<S>;
  using C = typename N::C;
  const C a = static_cast<C>(alpha);
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    out[i] = N::Down(ActivateGrad<kFn>(N::Up(g[i]), N::Up(v[i]), a));
  }
}

template <typename S>
struct ForwardLauncher {
  template <ActivationFn kFn>
  void operator()() const {
    ActivationKernel<kFn, S><<<GridFor(n), kThreads, 0, stream>>>(x, y, n, alpha);
  }
  const S* x;
  S* y;
  int64_t n;
  float alpha;
  cudaStream_t stream;
};

template <typename S>
struct GradLauncher {
  template <ActivationGradFn kFn>
  void operator()() const {
    ActivationGradKernel<kFn, S><<<GridFor(n), kThreads, 0, stream>>>(g, v, out, n, alpha);
  }
  const S* g;
  const S* v;
  S* out;
  int64_t n;
  float alpha;
  cudaStream_t stream;
};

// Calls fn with a null pointer of `type`'s storage type; NotSupported for
// a type without kernels.
template <typename Fn>
cudaError_t WithType(CwiseType type, Fn fn) {
  switch (type) {
    case CwiseType::kFloat:
      return fn(static_cast<float*>(nullptr));
    case CwiseType::kDouble:
      return fn(static_cast<double*>(nullptr));
    case CwiseType::kHalf:
      return fn(static_cast<__half*>(nullptr));
    case CwiseType::kBFloat16:
      return fn(static_cast<__nv_bfloat16*>(nullptr));
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace

cudaError_t LaunchActivation(ActivationFn fn, CwiseType type, const void* x, void* y, int64_t n,
                             float alpha, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return WithType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    const ForwardLauncher<S> launch{static_cast<const S*>(x), static_cast<S*>(y), n, alpha,
                                    stream};
    if (!activation_fns::VisitActivation(fn, launch)) return cudaErrorInvalidValue;
    return cudaGetLastError();
  });
}

cudaError_t LaunchActivationGrad(ActivationGradFn fn, CwiseType type, const void* g,
                                 const void* v, void* out, int64_t n, float alpha,
                                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return WithType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    const GradLauncher<S> launch{static_cast<const S*>(g), static_cast<const S*>(v),
                                 static_cast<S*>(out), n, alpha, stream};
    if (!activation_fns::VisitActivationGrad(fn, launch)) return cudaErrorInvalidValue;
    return cudaGetLastError();
  });
}

}  // namespace sluice::gpu
