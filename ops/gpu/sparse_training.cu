// CUDA kernels of the GPU row updates (launchers: ops/gpu/sparse_training.cu.h):
// a grid-stride loop over (index position, element in the row).
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/sparse_training.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

__device__ __forceinline__ float Sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double Sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float Pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double Pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float Abs(float x) { return fabsf(x); }
__device__ __forceinline__ double Abs(double x) { return fabs(x); }

// The element of var that flat position k (of n * inner) updates; -1 when
// its index is out of range.
template <typename Index>
__device__ __forceinline__ int64_t Target(const Index* indices, int64_t k, int64_t rows,
                                          int64_t inner) {
  const int64_t i = k / inner;
  const int64_t row = indices == nullptr ? i : static_cast<int64_t>(indices[i]);
  if (row < 0 || row >= rows) return -1;
  return row * inner + (k - i * inner);
}

template <typename T, typename Index, ScatterKind kKind>
__global__ void ScatterKernel(T* __restrict__ var, int64_t rows, int64_t inner,
                              const Index* __restrict__ indices, int64_t total,
                              const T* __restrict__ updates, bool scalar_updates) {
  for (int64_t k = FirstIndex(); k < total; k += Stride()) {
    const int64_t at = Target(indices, k, rows, inner);
    if (at < 0) continue;
    const T v = scalar_updates ? updates[0] : updates[k];
    if (kKind == ScatterKind::kUpdate) {
      var[at] = v;
    } else {
      atomicAdd(var + at, kKind == ScatterKind::kAdd ? v : -v);
    }
  }
}

template <typename T>
__device__ __forceinline__ void MomentumAt(const RowUpdate<T>& u, int64_t at, T g) {
  const T lr = *u.hyper[0], momentum = *u.hyper[1];
  const T a = u.slot0[at] * momentum + g;
  u.slot0[at] = a;
  if (u.flag) {
    u.var[at] -= g * lr + a * momentum * lr;
  } else {
    u.var[at] -= a * lr;
  }
}

template <typename T>
__device__ __forceinline__ void KerasMomentumAt(const RowUpdate<T>& u, int64_t at, T g) {
  const T lr = *u.hyper[0], momentum = *u.hyper[1];
  const T a = u.slot0[at] * momentum - g * lr;
  u.slot0[at] = a;
  u.var[at] += u.flag ? a * momentum - g * lr : a;
}

template <typename T>
__device__ __forceinline__ void AdagradAt(const RowUpdate<T>& u, int64_t at, T g, bool sparse) {
  const T lr = *u.hyper[0];
  if (u.flag) u.slot0[at] += g * g;
  const T accum = u.slot0[at];
  if (sparse) {
    u.var[at] -= lr * g / Sqrt(accum);
  } else {
    u.var[at] -= g * lr * (T(1) / Sqrt(accum));
  }
}

template <typename T>
__device__ __forceinline__ void FtrlAt(const RowUpdate<T>& u, int64_t at, T g) {
  const T lr = *u.hyper[0], l1 = *u.hyper[1], l2 = *u.hyper[2], lr_power = *u.hyper[3];
  const bool by_lr = u.flag;
  const bool half = lr_power == T(-0.5);
  const T accum = u.slot0[at];
  const T new_accum = accum + g * g;
  const T p_new = half ? Sqrt(new_accum) : Pow(new_accum, -lr_power);
  const T p_old = half ? Sqrt(accum) : Pow(accum, -lr_power);
  const T sigma = p_new - p_old;
  const T var = u.var[at];
  T linear = u.slot1[at];
  T quadratic;
  if (by_lr) {
    linear += g * lr - sigma * var;
    quadratic = p_new + T(2) * l2 * lr;
  } else {
    linear += g - sigma / lr * var;
    quadratic = p_new / lr + T(2) * l2;
  }
  const T l1_eff = by_lr ? l1 * lr : l1;
  u.slot1[at] = linear;
  u.var[at] =
      Abs(linear) > l1_eff ? ((linear > T(0) ? l1_eff : -l1_eff) - linear) / quadratic : T(0);
  u.slot0[at] = new_accum;
}

template <typename T, typename Index, RowRule kRule>
__global__ void RowUpdateKernel(RowUpdate<T> u, int64_t rows, int64_t inner,
                                const Index* __restrict__ indices, int64_t total) {
  for (int64_t k = FirstIndex(); k < total; k += Stride()) {
    const int64_t at = Target(indices, k, rows, inner);
    if (at < 0) continue;
    const T g = u.grad[k];
    if (kRule == RowRule::kMomentum) {
      MomentumAt(u, at, g);
    } else if (kRule == RowRule::kKerasMomentum) {
      KerasMomentumAt(u, at, g);
    } else if (kRule == RowRule::kAdagrad) {
      AdagradAt(u, at, g, /*sparse=*/indices != nullptr);
    } else {
      FtrlAt(u, at, g);
    }
  }
}

}  // namespace

template <typename T, typename Index>
cudaError_t LaunchScatter(ScatterKind kind, T* var, int64_t rows, int64_t inner,
                          const Index* indices, int64_t n, const T* updates, bool scalar_updates,
                          cudaStream_t stream) {
  const int64_t total = n * inner;
  if (total <= 0) return cudaSuccess;
  switch (kind) {
    case ScatterKind::kUpdate:
      ScatterKernel<T, Index, ScatterKind::kUpdate><<<GridFor(total), kThreads, 0, stream>>>(
          var, rows, inner, indices, total, updates, scalar_updates);
      break;
    case ScatterKind::kAdd:
      ScatterKernel<T, Index, ScatterKind::kAdd><<<GridFor(total), kThreads, 0, stream>>>(
          var, rows, inner, indices, total, updates, scalar_updates);
      break;
    case ScatterKind::kSub:
      ScatterKernel<T, Index, ScatterKind::kSub><<<GridFor(total), kThreads, 0, stream>>>(
          var, rows, inner, indices, total, updates, scalar_updates);
      break;
  }
  return cudaGetLastError();
}

template <typename T, typename Index>
cudaError_t LaunchRowUpdate(const RowUpdate<T>& u, int64_t rows, int64_t inner,
                            const Index* indices, int64_t n, cudaStream_t stream) {
  const int64_t total = n * inner;
  if (total <= 0) return cudaSuccess;
  switch (u.rule) {
    case RowRule::kMomentum:
      RowUpdateKernel<T, Index, RowRule::kMomentum>
          <<<GridFor(total), kThreads, 0, stream>>>(u, rows, inner, indices, total);
      break;
    case RowRule::kKerasMomentum:
      RowUpdateKernel<T, Index, RowRule::kKerasMomentum>
          <<<GridFor(total), kThreads, 0, stream>>>(u, rows, inner, indices, total);
      break;
    case RowRule::kAdagrad:
      RowUpdateKernel<T, Index, RowRule::kAdagrad>
          <<<GridFor(total), kThreads, 0, stream>>>(u, rows, inner, indices, total);
      break;
    case RowRule::kFtrl:
      RowUpdateKernel<T, Index, RowRule::kFtrl>
          <<<GridFor(total), kThreads, 0, stream>>>(u, rows, inner, indices, total);
      break;
  }
  return cudaGetLastError();
}

#define SLUICE_INSTANTIATE_ROWS_(T, Index)                                                      \
  template cudaError_t LaunchScatter<T, Index>(ScatterKind, T*, int64_t, int64_t, const Index*, \
                                               int64_t, const T*, bool, cudaStream_t);          \
  template cudaError_t LaunchRowUpdate<T, Index>(const RowUpdate<T>&, int64_t, int64_t,         \
                                                 const Index*, int64_t, cudaStream_t);
SLUICE_INSTANTIATE_ROWS_(float, int32_t)
SLUICE_INSTANTIATE_ROWS_(float, int64_t)
SLUICE_INSTANTIATE_ROWS_(double, int32_t)
SLUICE_INSTANTIATE_ROWS_(double, int64_t)
#undef SLUICE_INSTANTIATE_ROWS_

}  // namespace sluice::gpu
