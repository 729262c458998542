// CUDA kernels of the GPU row updates (launchers: ops/gpu/sparse_training.cu.h):
// a grid-stride loop over (index position, element in the row).
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/row_rules.cu.h"
#include "ops/gpu/sparse_training.cu.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

using row_rules::RowTarget;

template <typename T, typename Index, ScatterKind kKind>
__global__ void ScatterKernel(T* __restrict__ var, int64_t rows, int64_t inner,
                              const Index* __restrict__ indices, int64_t total,
                              const T* __restrict__ updates, bool scalar_updates) {
  for (int64_t k = FirstIndex(); k < total; k += Stride()) {
    const int64_t at = RowTarget(indices, k, rows, inner);
    if (at < 0) continue;
    const T v = scalar_updates ? updates[0] : updates[k];
    if (kKind == ScatterKind::kUpdate) {
      var[at] = v;
    } else {
      atomicAdd(var + at, kKind == ScatterKind::kAdd ? v : -v);
    }
  }
}

template <typename T, typename Index, RowRule kRule>
__global__ void RowUpdateKernel(RowUpdate<T> u, int64_t rows, int64_t inner,
                                const Index* __restrict__ indices, int64_t total) {
  T h[kMaxRowHyper];
  for (int k = 0; k < kMaxRowHyper; ++k) h[k] = u.hyper[k] == nullptr ? T(0) : *u.hyper[k];
  const bool sparse = indices != nullptr;
  for (int64_t k = FirstIndex(); k < total; k += Stride()) {
    const int64_t at = RowTarget(indices, k, rows, inner);
    if (at < 0) continue;
    row_rules::ApplyRowRule<kRule>(u, h, at, u.grad[k], sparse);
  }
}

// Launches the kernel of the rule it is called with (row_rules::VisitRowRule).
template <typename T, typename Index>
struct RowKernelLauncher {
  template <RowRule kRule>
  void operator()() const {
    RowUpdateKernel<T, Index, kRule>
        <<<GridFor(total), kThreads, 0, stream>>>(u, rows, inner, indices, total);
  }

  const RowUpdate<T>& u;
  int64_t rows;
  int64_t inner;
  const Index* indices;
  int64_t total;
  cudaStream_t stream;
};

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
  if (!row_rules::VisitRowRule(
          u.rule, RowKernelLauncher<T, Index>{u, rows, inner, indices, total, stream})) {
    return cudaErrorInvalidValue;
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
