// CUDA kernels of the multi-tensor updates (launchers:
// ops/gpu/multi_training.cu.h): blockIdx.y picks the piece, the x blocks
// stride over its elements.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ops/gpu/adam_update.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/multi_training.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename T>
__global__ void MultiGradientDescentKernel(MultiGradientDescentPieces<T> p,
                                           const T* __restrict__ alpha) {
  const int k = blockIdx.y;
  T* __restrict__ var = p.var[k];
  const T* __restrict__ delta = p.delta[k];
  const int64_t n = p.n[k];
  const T a = *alpha;
  for (int64_t i = FirstIndex(); i < n; i += Stride()) var[i] -= a * delta[i];
}

template <typename T, bool kNesterov>
__global__ void MultiAdamKernel(MultiAdamPieces<T> p, AdamScalars<T> s) {
  const int k = blockIdx.y;
  T* __restrict__ var = p.var[k];
  T* __restrict__ m = p.m[k];
  T* __restrict__ v = p.v[k];
  const T* __restrict__ grad = p.grad[k];
  const int64_t n = p.n[k];
  const AdamStep<T> step(s);
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    step.template Update<kNesterov>(&var[i], &m[i], &v[i], grad[i]);
  }
}

// Blocks along x: enough for the largest piece.
template <typename Pieces>
dim3 Grid(const Pieces& p) {
  int64_t most = 0;
  for (int k = 0; k < p.count; ++k) most = std::max(most, p.n[k]);
  return dim3(GridFor(most), p.count);
}

}  // namespace

template <typename T>
cudaError_t LaunchMultiApplyGradientDescent(const MultiGradientDescentPieces<T>& pieces,
                                            const T* alpha, cudaStream_t stream) {
  if (pieces.count <= 0) return cudaSuccess;
  MultiGradientDescentKernel<T><<<Grid(pieces), kThreads, 0, stream>>>(pieces, alpha);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchMultiApplyAdam(const MultiAdamPieces<T>& pieces, const AdamScalars<T>& scalars,
                                 bool nesterov, cudaStream_t stream) {
  if (pieces.count <= 0) return cudaSuccess;
  if (nesterov) {
    MultiAdamKernel<T, true><<<Grid(pieces), kThreads, 0, stream>>>(pieces, scalars);
  } else {
    MultiAdamKernel<T, false><<<Grid(pieces), kThreads, 0, stream>>>(pieces, scalars);
  }
  return cudaGetLastError();
}

#define SLUICE_INSTANTIATE_MULTI_(T)                                                          \
  template cudaError_t LaunchMultiApplyGradientDescent<T>(const MultiGradientDescentPieces<T>&, \
                                                          const T*, cudaStream_t);            \
  template cudaError_t LaunchMultiApplyAdam<T>(const MultiAdamPieces<T>&,                     \
                                               const AdamScalars<T>&, bool, cudaStream_t);
SLUICE_INSTANTIATE_MULTI_(float)
SLUICE_INSTANTIATE_MULTI_(double)
#undef SLUICE_INSTANTIATE_MULTI_

}  // namespace sluice::gpu
