// CUDA side of the 2-D window kernels (conv.cu.h): one thread per output
// element, over a grid-stride loop.
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "ops/gpu/conv.cu.h"
#include "ops/gpu/float16.cu.h"
#include "ops/gpu/grid_stride.cu.h"
#include "ops/gpu/window_index.h"

namespace sluice::gpu {
namespace {

using grid::FirstIndex;
using grid::GridFor;
using grid::kThreads;
using grid::Stride;

template <typename Bits>
__global__ void Im2ColKernel(const Bits* input, Bits* col, Window2D w, int64_t p0, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    const int64_t from = Im2ColSource(w, p0, i);
    col[i] = from < 0 ? Bits(0) : input[from];
  }
}

template <typename Acc, typename T>
__global__ void Col2ImKernel(const Acc* col, T* input_grad, Window2D w, int64_t image0,
                             int64_t n) {
  const int64_t first = image0 * w.image_elements();
  const int64_t p0 = image0 * w.image_pixels();
  const int64_t p1 = p0 + (n / w.image_elements()) * w.image_pixels();
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    Acc sum = 0;
    ForEachColumnEntryOf(w, p0, p1, first + i, [&](int64_t j) { sum += col[j]; });
    input_grad[first + i] = Num<T>::Down(sum);
  }
}

template <typename S>
__global__ void MaxPoolKernel(const S* input, S* output, Window2D w, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    const int64_t c = i % w.in_depth;
    const int64_t p = i / w.in_depth;
    const int64_t ow = p % w.out_cols;
    const int64_t oh = (p / w.out_cols) % w.out_rows;
    const int64_t b = p / (w.out_cols * w.out_rows);
    int64_t r0, r1, c0, c1;
    PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
    PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
    float m = -FLT_MAX;
    for (int64_t h = r0; h < r1; ++h) {
      for (int64_t x = c0; x < c1; ++x) {
        const float v =
            Num<S>::Up(input[((b * w.in_rows + h) * w.in_cols + x) * w.in_depth + c]);
        m = m < v ? v : m;  // NaN never replaces (the CPU kernel's rule)
      }
    }
    // Exact: m is an element's value (a window of NaNs alone gives the
    // lowest float, -inf in 16 bits).
    output[i] = Num<S>::Down(m);
  }
}

// first_max[i] for each window and channel i = p * in_depth + c.
template <typename S>
__global__ void FirstMaxKernel(const S* input, int64_t* first_max, Window2D w, int64_t n) {
  const auto load = [input](int64_t at) { return Num<S>::Up(input[at]); };
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    first_max[i] = FirstMaxOf(w, load, i / w.in_depth, i % w.in_depth);
  }
}

template <typename S>
__global__ void MaxPoolGradKernel(const int64_t* first_max, const S* grad, S* input_grad,
                                  Window2D w, int64_t n) {
  const auto load = [grad](int64_t at) { return Num<S>::Up(grad[at]); };
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    input_grad[i] = Num<S>::Down(MaxPoolGradOf(w, first_max, load, i));
  }
}

template <typename S>
__global__ void AvgPoolKernel(const S* input, S* output, Window2D w, int64_t n) {
  const auto load = [input](int64_t at) { return Num<S>::Up(input[at]); };
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    output[i] = Num<S>::Down(AvgPoolOf(w, load, i / w.in_depth, i % w.in_depth));
  }
}

template <typename S>
__global__ void AvgPoolGradKernel(const S* grad, S* input_grad, Window2D w, int64_t n) {
  const auto load = [grad](int64_t at) { return Num<S>::Up(grad[at]); };
  for (int64_t i = FirstIndex(); i < n; i += Stride()) {
    input_grad[i] = Num<S>::Down(AvgPoolGradOf(w, load, i));
  }
}

// Calls fn with a null pointer of the pooling kernels' storage type.
template <typename Fn>
cudaError_t WithPoolType(WindowType type, Fn fn) {
  switch (type) {
    case WindowType::kFloat:
      return fn(static_cast<float*>(nullptr));
    case WindowType::kBFloat16:
      return fn(static_cast<__nv_bfloat16*>(nullptr));
    case WindowType::kHalf:
      return fn(static_cast<__half*>(nullptr));
    case WindowType::kDouble:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchIm2Col(const void* input, void* col, int element_size, const Window2D& w,
                         int64_t p0, int64_t pixels, cudaStream_t stream) {
  const int64_t n = pixels * w.patch();
  if (n == 0) return cudaSuccess;
  switch (element_size) {
    case 2:
      Im2ColKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const uint16_t*>(input),
                                                        static_cast<uint16_t*>(col), w, p0, n);
      break;
    case 4:
      Im2ColKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const uint32_t*>(input),
                                                        static_cast<uint32_t*>(col), w, p0, n);
      break;
    case 8:
      Im2ColKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const uint64_t*>(input),
                                                        static_cast<uint64_t*>(col), w, p0, n);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCol2Im(const void* col, void* input_grad, WindowType type, const Window2D& w,
                         int64_t image0, int64_t images, cudaStream_t stream) {
  const int64_t n = images * w.image_elements();
  if (n == 0) return cudaSuccess;
  const float* fcol = static_cast<const float*>(col);
  switch (type) {
    case WindowType::kFloat:
      Col2ImKernel<<<GridFor(n), kThreads, 0, stream>>>(fcol, static_cast<float*>(input_grad), w,
                                                        image0, n);
      break;
    case WindowType::kDouble:
      Col2ImKernel<<<GridFor(n), kThreads, 0, stream>>>(
          static_cast<const double*>(col), static_cast<double*>(input_grad), w, image0, n);
      break;
    case WindowType::kBFloat16:
      Col2ImKernel<<<GridFor(n), kThreads, 0, stream>>>(
          fcol, static_cast<__nv_bfloat16*>(input_grad), w, image0, n);
      break;
    case WindowType::kHalf:
      Col2ImKernel<<<GridFor(n), kThreads, 0, stream>>>(fcol, static_cast<__half*>(input_grad),
                                                        w, image0, n);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchMaxPool(const void* input, void* output, WindowType type, const Window2D& w,
                          cudaStream_t stream) {
  const int64_t n = w.batch * w.image_pixels() * w.in_depth;
  if (n == 0) return cudaSuccess;
  return WithPoolType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    MaxPoolKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const S*>(input),
                                                       static_cast<S*>(output), w, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchMaxPoolGrad(const void* input, const void* grad, void* input_grad,
                              int64_t* first_max, WindowType type, const Window2D& w,
                              cudaStream_t stream) {
  const int64_t n = w.batch * w.image_elements();
  if (n == 0) return cudaSuccess;
  const int64_t windows = w.batch * w.image_pixels() * w.in_depth;
  return WithPoolType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    if (windows > 0) {
      FirstMaxKernel<<<GridFor(windows), kThreads, 0, stream>>>(static_cast<const S*>(input),
                                                                first_max, w, windows);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    MaxPoolGradKernel<<<GridFor(n), kThreads, 0, stream>>>(first_max,
                                                           static_cast<const S*>(grad),
                                                           static_cast<S*>(input_grad), w, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchAvgPool(const void* input, void* output, WindowType type, const Window2D& w,
                          cudaStream_t stream) {
  const int64_t n = w.batch * w.image_pixels() * w.in_depth;
  if (n == 0) return cudaSuccess;
  return WithPoolType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    AvgPoolKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const S*>(input),
                                                       static_cast<S*>(output), w, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchAvgPoolGrad(const void* grad, void* input_grad, WindowType type,
                              const Window2D& w, cudaStream_t stream) {
  const int64_t n = w.batch * w.image_elements();
  if (n == 0) return cudaSuccess;
  return WithPoolType(type, [&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    AvgPoolGradKernel<<<GridFor(n), kThreads, 0, stream>>>(static_cast<const S*>(grad),
                                                           static_cast<S*>(input_grad), w, n);
    return cudaGetLastError();
  });
}

}  // namespace sluice::gpu
