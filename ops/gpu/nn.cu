// CUDA code of the neural-network kernels (launchers: nn.cu.h).
//
// Element-wise kernels (Relu, ReluGrad, BiasAdd) are grid-stride loops.
// Row kernels (softmax, cross-entropies) give each row of `depth` values to
// one warp when depth <= kWarpRowsMaxDepth, else to one block; the group
// reduces the row maximum, then the sums of exp(x - max) (and of the labels),
// then writes the outputs. Each thread writes only the elements it read
// itself, so an output may alias its input.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/gpu/block_reduce.cu.h"
#include "ops/gpu/device_math.cu.h"
#include "ops/gpu/float16.cu.h"
#include "ops/gpu/nn.cu.h"

namespace sluice {
namespace gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kRowBlockThreads = 512;
constexpr int64_t kWarpRowsMaxDepth = 1024;
constexpr int kDefaultSmCount = 80;
constexpr int64_t kMaxElementwiseBlocks = 8192;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
unsigned GridOf(int64_t blocks, int64_t cap) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}
int64_t MaxRowBlocks(int sm_count) {
  return int64_t{sm_count > 0 ? sm_count : kDefaultSmCount} * 64;
}

using device_math::Exp;
using device_math::Log;

struct MaxOp {
  // Only moves to b when a < b: NaNs never become the maximum.
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a < b ? b : a;
  }
};
struct SumOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};

// The threads that share a row: a warp or the whole block.
template <bool kBlock>
struct RowGroup {
  __device__ __forceinline__ static int Rank() {
    return kBlock ? threadIdx.x : threadIdx.x % kWarp;
  }
  __device__ __forceinline__ static int Size() { return kBlock ? blockDim.x : kWarp; }
  __device__ __forceinline__ static int64_t FirstRow() {
    return kBlock ? int64_t{blockIdx.x}
                  : int64_t{blockIdx.x} * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  }
  __device__ __forceinline__ static int64_t RowStride() {
    return kBlock ? int64_t{gridDim.x} : int64_t{gridDim.x} * (blockDim.x / kWarp);
  }
  template <typename A, typename R>
  __device__ __forceinline__ static A AllReduce(A v, R r, A* smem) {
    if constexpr (kBlock) {
      return BlockAllReduce(v, r, smem);
    } else {
      return WarpAllReduce(v, r);
    }
  }
};

// ---------------------------------------------------------------------------
// Element-wise.

template <typename T>
__global__ void ReluKernel(const T* x, T* y, int64_t n) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const T v = x[i];
    y[i] = v < T(0) ? T(0) : v;
  }
}

template <typename T>
__global__ void ReluGradKernel(const T* g, const T* f, T* y, int64_t n) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = f[i] > T(0) ? g[i] : g[i] * T(0);  // g * (f > 0): NaN for a non-finite g
  }
}

template <typename T, bool kInnerOne>
__global__ void BiasAddKernel(const T* x, const T* bias, T* y, int64_t n, int64_t channels,
                              int64_t inner) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = kInnerOne ? i % channels : (i / inner) % channels;
    y[i] = x[i] + bias[c];
  }
}

// 16-bit storage, float arithmetic (float16.cu.h).

template <typename S>
__global__ void Relu16Kernel(const S* x, S* y, int64_t n) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const S v = x[i];
    y[i] = Num<S>::Up(v) < 0.0f ? Num<S>::Down(0.0f) : v;  // NaN stays NaN
  }
}

template <typename S>
__global__ void ReluGrad16Kernel(const S* g, const S* f, S* y, int64_t n) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = Num<S>::Up(f[i]) > 0.0f ? g[i] : Num<S>::Down(Num<S>::Up(g[i]) * 0.0f);
  }
}

template <typename S>
__global__ void BiasAdd16Kernel(const S* x, const S* bias, S* y, int64_t n, int64_t channels,
                                int64_t inner) {
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (i / inner) % channels;
    y[i] = Num<S>::Down(Num<S>::Up(x[i]) + Num<S>::Up(bias[c]));
  }
}

// ---------------------------------------------------------------------------
// Rows.

template <typename T, bool kLog, bool kBlock>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t rows, int64_t depth) {
  using G = RowGroup<kBlock>;
  __shared__ T smem[kWarp];
  const int rank = G::Rank(), size = G::Size();
  for (int64_t row = G::FirstRow(); row < rows; row += G::RowStride()) {
    const T* xr = x + row * depth;
    T* yr = y + row * depth;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = rank; i < depth; i += size) m = MaxOp()(m, xr[i]);
    m = G::AllReduce(m, MaxOp(), smem);
    T sum = 0;
    for (int64_t i = rank; i < depth; i += size) sum += Exp(xr[i] - m);
    sum = G::AllReduce(sum, SumOp(), smem);
    if constexpr (kLog) {
      const T log_sum = Log(sum);
      for (int64_t i = rank; i < depth; i += size) yr[i] = (xr[i] - m) - log_sum;
    } else {
      const T inv = T(1) / sum;
      for (int64_t i = rank; i < depth; i += size) yr[i] = Exp(xr[i] - m) * inv;
    }
  }
}

template <typename T, bool kBlock>
__global__ void XentKernel(const T* f, const T* labels, T* loss, T* backprop, int64_t rows,
                           int64_t depth) {
  using G = RowGroup<kBlock>;
  __shared__ T smem[kWarp];
  const int rank = G::Rank(), size = G::Size();
  for (int64_t row = G::FirstRow(); row < rows; row += G::RowStride()) {
    const T* fr = f + row * depth;
    const T* lr = labels + row * depth;
    T* br = backprop + row * depth;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = rank; i < depth; i += size) m = MaxOp()(m, fr[i]);
    m = G::AllReduce(m, MaxOp(), smem);
    T sum = 0, label_sum = 0, dot = 0;
    for (int64_t i = rank; i < depth; i += size) {
      const T shifted = fr[i] - m;
      const T l = lr[i];
      sum += Exp(shifted);
      label_sum += l;
      dot += l * shifted;
    }
    sum = G::AllReduce(sum, SumOp(), smem);
    label_sum = G::AllReduce(label_sum, SumOp(), smem);
    dot = G::AllReduce(dot, SumOp(), smem);
    const T inv = T(1) / sum;
    for (int64_t i = rank; i < depth; i += size) br[i] = Exp(fr[i] - m) * inv - lr[i];
    if (rank == 0) loss[row] = depth == 0 ? T(0) : Log(sum) * label_sum - dot;
  }
}

// An out-of-range label cannot be reported from here without a host
// synchronization, so its row gets a NaN loss and a NaN backprop (as in
// TensorFlow's GPU kernel); the CPU kernel returns InvalidArgument instead.
template <typename T, typename L, bool kBlock>
__global__ void SparseXentKernel(const T* f, const L* labels, T* loss, T* backprop, int64_t rows,
                                 int64_t depth) {
  using G = RowGroup<kBlock>;
  __shared__ T smem[kWarp];
  const int rank = G::Rank(), size = G::Size();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t row = G::FirstRow(); row < rows; row += G::RowStride()) {
    const T* fr = f + row * depth;
    T* br = backprop + row * depth;
    const int64_t label = static_cast<int64_t>(labels[row]);
    const bool valid = label >= 0 && label < depth;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = rank; i < depth; i += size) m = MaxOp()(m, fr[i]);
    m = G::AllReduce(m, MaxOp(), smem);
    T sum = 0;
    for (int64_t i = rank; i < depth; i += size) sum += Exp(fr[i] - m);
    sum = G::AllReduce(sum, SumOp(), smem);
    const T inv = T(1) / sum;
    const T log_sum = Log(sum);
    for (int64_t i = rank; i < depth; i += size) {
      const T shifted = fr[i] - m;  // read before br[i] (which may be fr[i]) is written
      if (i == label) loss[row] = log_sum - shifted;
      br[i] = valid ? Exp(shifted) * inv - (i == label ? T(1) : T(0)) : nan;
    }
    if (!valid && rank == 0) loss[row] = nan;
  }
}

// Launches kernel<.., false> (a warp per row) or kernel<.., true> (a block
// per row) through `launch(grid, threads, block_rows)`.
template <typename Launch>
cudaError_t LaunchRows(int64_t rows, int64_t depth, int sm_count, Launch launch) {
  if (depth <= kWarpRowsMaxDepth) {
    launch(GridOf(CeilDiv(rows, kThreads / kWarp), MaxRowBlocks(sm_count)), kThreads, false);
  } else {
    launch(GridOf(rows, MaxRowBlocks(sm_count)), kRowBlockThreads, true);
  }
  return cudaGetLastError();
}

unsigned ElementwiseGrid(int64_t n) { return GridOf(CeilDiv(n, kThreads), kMaxElementwiseBlocks); }

}  // namespace

template <typename T>
cudaError_t LaunchRelu(const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  ReluKernel<T><<<ElementwiseGrid(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchReluGrad(const T* gradients, const T* features, T* y, int64_t n,
                           cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  ReluGradKernel<T><<<ElementwiseGrid(n), kThreads, 0, stream>>>(gradients, features, y, n);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t outer, int64_t channels,
                          int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * channels * inner;
  if (n <= 0) return cudaSuccess;
  if (inner == 1) {
    BiasAddKernel<T, true>
        <<<ElementwiseGrid(n), kThreads, 0, stream>>>(x, bias, y, n, channels, inner);
  } else {
    BiasAddKernel<T, false>
        <<<ElementwiseGrid(n), kThreads, 0, stream>>>(x, bias, y, n, channels, inner);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchSoftmax(const T* x, T* y, int64_t rows, int64_t depth, bool log_softmax,
                          int sm_count, cudaStream_t stream) {
  if (rows <= 0 || depth <= 0) return cudaSuccess;
  return LaunchRows(rows, depth, sm_count, [&](unsigned grid, int threads, bool block) {
    if (log_softmax && block) {
      SoftmaxKernel<T, true, true><<<grid, threads, 0, stream>>>(x, y, rows, depth);
    } else if (log_softmax) {
      SoftmaxKernel<T, true, false><<<grid, threads, 0, stream>>>(x, y, rows, depth);
    } else if (block) {
      SoftmaxKernel<T, false, true><<<grid, threads, 0, stream>>>(x, y, rows, depth);
    } else {
      SoftmaxKernel<T, false, false><<<grid, threads, 0, stream>>>(x, y, rows, depth);
    }
  });
}

template <typename T>
cudaError_t LaunchSoftmaxXent(const T* features, const T* labels, T* loss, T* backprop,
                              int64_t batch, int64_t classes, int sm_count, cudaStream_t stream) {
  if (batch <= 0 || classes < 0) return cudaSuccess;
  return LaunchRows(batch, classes, sm_count, [&](unsigned grid, int threads, bool block) {
    if (block) {
      XentKernel<T, true>
          <<<grid, threads, 0, stream>>>(features, labels, loss, backprop, batch, classes);
    } else {
      XentKernel<T, false>
          <<<grid, threads, 0, stream>>>(features, labels, loss, backprop, batch, classes);
    }
  });
}

template <typename T, typename L>
cudaError_t LaunchSparseSoftmaxXent(const T* features, const L* labels, T* loss, T* backprop,
                                    int64_t batch, int64_t classes, int sm_count,
                                    cudaStream_t stream) {
  if (batch <= 0 || classes < 0) return cudaSuccess;
  return LaunchRows(batch, classes, sm_count, [&](unsigned grid, int threads, bool block) {
    if (block) {
      SparseXentKernel<T, L, true>
          <<<grid, threads, 0, stream>>>(features, labels, loss, backprop, batch, classes);
    } else {
      SparseXentKernel<T, L, false>
          <<<grid, threads, 0, stream>>>(features, labels, loss, backprop, batch, classes);
    }
  });
}

namespace {

// Calls fn with a null pointer of the storage type of `type`.
template <typename Fn>
cudaError_t With16(Float16Type type, Fn fn) {
  if (type == Float16Type::kHalf) return fn(static_cast<__half*>(nullptr));
  return fn(static_cast<__nv_bfloat16*>(nullptr));
}

}  // namespace

cudaError_t LaunchRelu16(Float16Type type, const void* x, void* y, int64_t n,
                         cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return With16(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    Relu16Kernel<S><<<ElementwiseGrid(n), kThreads, 0, stream>>>(static_cast<const S*>(x),
                                                                   static_cast<S*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchReluGrad16(Float16Type type, const void* gradients, const void* features,
                             void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return With16(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    ReluGrad16Kernel<S><<<ElementwiseGrid(n), kThreads, 0, stream>>>(
        static_cast<const S*>(gradients), static_cast<const S*>(features), static_cast<S*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBiasAdd16(Float16Type type, const void* x, const void* bias, void* y,
                            int64_t outer, int64_t channels, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * channels * inner;
  if (n <= 0) return cudaSuccess;
  return With16(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    BiasAdd16Kernel<S><<<ElementwiseGrid(n), kThreads, 0, stream>>>(
        static_cast<const S*>(x), static_cast<const S*>(bias), static_cast<S*>(y), n, channels,
        inner);
    return cudaGetLastError();
  });
}

#define SLUICE_INSTANTIATE_NN_(T)                                                                 \
  template cudaError_t LaunchRelu<T>(const T*, T*, int64_t, cudaStream_t);                        \
  template cudaError_t LaunchReluGrad<T>(const T*, const T*, T*, int64_t, cudaStream_t);          \
  template cudaError_t LaunchBiasAdd<T>(const T*, const T*, T*, int64_t, int64_t, int64_t,        \
                                        cudaStream_t);                                            \
  template cudaError_t LaunchSoftmax<T>(const T*, T*, int64_t, int64_t, bool, int, cudaStream_t); \
  template cudaError_t LaunchSoftmaxXent<T>(const T*, const T*, T*, T*, int64_t, int64_t, int,    \
                                            cudaStream_t);                                        \
  template cudaError_t LaunchSparseSoftmaxXent<T, int32_t>(const T*, const int32_t*, T*, T*,      \
                                                           int64_t, int64_t, int, cudaStream_t);  \
  template cudaError_t LaunchSparseSoftmaxXent<T, int64_t>(const T*, const int64_t*, T*, T*,      \
                                                           int64_t, int64_t, int, cudaStream_t);
SLUICE_INSTANTIATE_NN_(float)
SLUICE_INSTANTIATE_NN_(double)
#undef SLUICE_INSTANTIATE_NN_

}  // namespace gpu
}  // namespace sluice
