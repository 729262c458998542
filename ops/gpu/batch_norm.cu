// CUDA kernels of the fused batch normalization (launchers:
// batch_norm.cu.h): per-(chunk, channel) sums with consecutive threads on
// consecutive channels (coalesced rows), one thread per channel to finish,
// a grid-stride loop per element. The arithmetic: batch_norm_fns.cu.h.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ops/gpu/batch_norm.cu.h"
#include "ops/gpu/batch_norm_fns.cu.h"
#include "ops/gpu/grid_stride.cu.h"

namespace sluice::gpu {
namespace {

using batch_norm::Chunks;
using batch_norm::Scratch;
using batch_norm::ScratchOf;
using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

// blockIdx.x: the chunk; blockIdx.y * kThreads + threadIdx.x: the channel.
template <bool kSquares, typename S>
__global__ void ForwardPartialKernel(BatchNormForwardArgs a, Scratch s) {
  const int64_t c = int64_t{blockIdx.y} * blockDim.x + threadIdx.x;
  if (c < a.depth) batch_norm::ForwardPartial<kSquares, S>(a, s, blockIdx.x, c);
}

__global__ void FinishMeanKernel(BatchNormForwardArgs a, Scratch s) {
  for (int64_t c = FirstIndex(); c < a.depth; c += Stride()) batch_norm::FinishMean(a, s, c);
}

__global__ void FinishChannelKernel(BatchNormForwardArgs a, Scratch s) {
  for (int64_t c = FirstIndex(); c < a.depth; c += Stride()) batch_norm::FinishChannel(a, s, c);
}

template <typename S>
__global__ void NormalizeKernel(BatchNormForwardArgs a, Scratch s, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += Stride()) batch_norm::Normalize<S>(a, s, i);
}

template <typename S>
__global__ void GradPartialKernel(BatchNormGradArgs a, Scratch s) {
  const int64_t c = int64_t{blockIdx.y} * blockDim.x + threadIdx.x;
  if (c < a.depth) batch_norm::GradPartial<S>(a, s, blockIdx.x, c);
}

__global__ void FinishGradKernel(BatchNormGradArgs a, Scratch s) {
  for (int64_t c = FirstIndex(); c < a.depth; c += Stride()) {
    batch_norm::FinishGradChannel(a, s, c);
  }
}

template <typename S>
__global__ void GradElementKernel(BatchNormGradArgs a, Scratch s, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += Stride()) batch_norm::GradElement<S>(a, s, i);
}

// One block per (chunk, 256 channels).
dim3 PartialGrid(int64_t rows, int64_t depth) {
  return dim3(static_cast<unsigned>(Chunks(rows)),
              static_cast<unsigned>((depth + kThreads - 1) / kThreads));
}

}  // namespace

cudaError_t LaunchBatchNormForward(const BatchNormForwardArgs& a, cudaStream_t stream) {
  if (a.depth <= 0) return cudaSuccess;
  const Scratch s = ScratchOf(a.scratch, a.rows, a.depth);
  const int64_t n = a.rows * a.depth;
  const bool known = batch_norm::WithStorage(a.type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    if (a.training) {
      ForwardPartialKernel<false, S><<<PartialGrid(a.rows, a.depth), kThreads, 0, stream>>>(a, s);
      FinishMeanKernel<<<GridFor(a.depth), kThreads, 0, stream>>>(a, s);
      ForwardPartialKernel<true, S><<<PartialGrid(a.rows, a.depth), kThreads, 0, stream>>>(a, s);
    }
    FinishChannelKernel<<<GridFor(a.depth), kThreads, 0, stream>>>(a, s);
    if (n > 0) NormalizeKernel<S><<<GridFor(n), kThreads, 0, stream>>>(a, s, n);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchBatchNormGrad(const BatchNormGradArgs& a, cudaStream_t stream) {
  if (a.depth <= 0) return cudaSuccess;
  const Scratch s = ScratchOf(a.scratch, a.rows, a.depth);
  const int64_t n = a.rows * a.depth;
  const bool known = batch_norm::WithStorage(a.type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    GradPartialKernel<S><<<PartialGrid(a.rows, a.depth), kThreads, 0, stream>>>(a, s);
    FinishGradKernel<<<GridFor(a.depth), kThreads, 0, stream>>>(a, s);
    if (n > 0) GradElementKernel<S><<<GridFor(n), kThreads, 0, stream>>>(a, s, n);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace sluice::gpu
