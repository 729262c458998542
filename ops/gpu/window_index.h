// The index arithmetic of the GPU's 2-D window kernels (ops/gpu/conv.cu):
// which input element a column-matrix entry reads (im2col), which entries
// read a given input element (col2im, gathered so that no two threads add
// into one element), which element of a pooling window is its first
// maximum, and average pooling's means and gathered gradients. Plain C++ outside nvcc, so the CPU tests it against the CPU
// kernels (window_index_test.cc).
//
//   gpu::Window2D w = ...;   // the op's geometry, NHWC
//   int64_t from = gpu::Im2ColSource(w, p0, i);   // -1: padding
//
// The column matrix is the CPU kernels' (ops/nn/conv_kernels.cc): one row
// per output pixel (batch, row, column), from pixel p0; patch() columns in
// (filter row, filter column, input channel) order. Thread-safety: pure.
#ifndef SLUICE_OPS_GPU_WINDOW_INDEX_H_
#define SLUICE_OPS_GPU_WINDOW_INDEX_H_

#include <cstdint>

#if defined(__CUDACC__)
#define SLUICE_WINDOW_FN __host__ __device__ __forceinline__
#else
#define SLUICE_WINDOW_FN inline
#endif

namespace sluice::gpu {

// A 2-D window op's geometry over NHWC data (internal::Conv2DGeometry's
// fields; pooling: filter = the window, out_depth unused).
struct Window2D {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;

  SLUICE_WINDOW_FN int64_t patch() const { return filter_rows * filter_cols * in_depth; }
  SLUICE_WINDOW_FN int64_t image_pixels() const { return out_rows * out_cols; }
  SLUICE_WINDOW_FN int64_t image_elements() const { return in_rows * in_cols * in_depth; }
};

// The input element (NHWC offset) that entry i of the column matrix from
// output pixel p0 reads; -1 when it falls in the padding.
SLUICE_WINDOW_FN int64_t Im2ColSource(const Window2D& w, int64_t p0, int64_t i) {
  const int64_t patch = w.patch();
  const int64_t p = p0 + i / patch;
  int64_t j = i % patch;
  const int64_t c = j % w.in_depth;
  j /= w.in_depth;
  const int64_t fc = j % w.filter_cols;
  const int64_t fr = j / w.filter_cols;
  const int64_t ow = p % w.out_cols;
  const int64_t oh = (p / w.out_cols) % w.out_rows;
  const int64_t b = p / (w.out_cols * w.out_rows);
  const int64_t ih = oh * w.stride_rows - w.pad_top + fr * w.dilation_rows;
  const int64_t iw = ow * w.stride_cols - w.pad_left + fc * w.dilation_cols;
  if (ih < 0 || ih >= w.in_rows || iw < 0 || iw >= w.in_cols) return -1;
  return ((b * w.in_rows + ih) * w.in_cols + iw) * w.in_depth + c;
}

// Calls fn(i) for every entry i of the column matrix of pixels [p0, p1)
// that reads input element x (NHWC offset): the entries col2im sums into x.
template <typename Fn>
SLUICE_WINDOW_FN void ForEachColumnEntryOf(const Window2D& w, int64_t p0, int64_t p1, int64_t x,
                                           Fn&& fn) {
  const int64_t c = x % w.in_depth;
  int64_t r = x / w.in_depth;
  const int64_t iw = r % w.in_cols;
  r /= w.in_cols;
  const int64_t ih = r % w.in_rows;
  const int64_t b = r / w.in_rows;
  const int64_t patch = w.patch();
  for (int64_t fr = 0; fr < w.filter_rows; ++fr) {
    const int64_t row = ih + w.pad_top - fr * w.dilation_rows;  // oh * stride_rows
    if (row < 0 || row % w.stride_rows != 0 || row / w.stride_rows >= w.out_rows) continue;
    const int64_t oh = row / w.stride_rows;
    for (int64_t fc = 0; fc < w.filter_cols; ++fc) {
      const int64_t col = iw + w.pad_left - fc * w.dilation_cols;
      if (col < 0 || col % w.stride_cols != 0 || col / w.stride_cols >= w.out_cols) continue;
      const int64_t p = (b * w.out_rows + oh) * w.out_cols + col / w.stride_cols;
      if (p < p0 || p >= p1) continue;
      fn((p - p0) * patch + (fr * w.filter_cols + fc) * w.in_depth + c);
    }
  }
}

// The input rows [*begin, *end) under output row `out` of a window of
// `window` rows (pooling: no dilation), clipped to the input.
SLUICE_WINDOW_FN void PoolSpan(int64_t out, int64_t stride, int64_t pad, int64_t window,
                               int64_t size, int64_t* begin, int64_t* end) {
  const int64_t start = out * stride - pad;
  *begin = start < 0 ? 0 : start;
  *end = start + window < size ? start + window : size;
}

// The NHWC offset of the first maximum (row-major order over the window,
// strictly greater to replace: the CPU's MaxPoolGrad rule) of channel c in
// pooling window p, load(offset) giving an element's value; -1 for a window
// wholly in the padding.
template <typename Load>
SLUICE_WINDOW_FN int64_t FirstMaxOf(const Window2D& w, Load&& load, int64_t p, int64_t c) {
  const int64_t ow = p % w.out_cols;
  const int64_t oh = (p / w.out_cols) % w.out_rows;
  const int64_t b = p / (w.out_cols * w.out_rows);
  int64_t r0, r1, c0, c1;
  PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
  PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
  int64_t best_at = -1;
  decltype(load(int64_t{0})) best{};
  for (int64_t h = r0; h < r1; ++h) {
    for (int64_t x = c0; x < c1; ++x) {
      const int64_t at = ((b * w.in_rows + h) * w.in_cols + x) * w.in_depth + c;
      const auto v = load(at);
      if (best_at < 0 || v > best) {
        best = v;
        best_at = at;
      }
    }
  }
  return best_at;
}

// Calls fn(p) for every pooling window p that holds input element x (NHWC
// offset), in increasing p: the windows that may route a gradient to it.
template <typename Fn>
SLUICE_WINDOW_FN void ForEachPoolWindowOf(const Window2D& w, int64_t x, Fn&& fn) {
  int64_t r = x / w.in_depth;
  const int64_t iw = r % w.in_cols;
  r /= w.in_cols;
  const int64_t ih = r % w.in_rows;
  const int64_t b = r / w.in_rows;
  // Output rows whose window [oh * stride - pad, + window) holds ih.
  const int64_t first_row = ih + w.pad_top - (w.filter_rows - 1);
  const int64_t oh0 = first_row <= 0 ? 0 : (first_row + w.stride_rows - 1) / w.stride_rows;
  int64_t oh1 = (ih + w.pad_top) / w.stride_rows;
  if (oh1 >= w.out_rows) oh1 = w.out_rows - 1;
  const int64_t first_col = iw + w.pad_left - (w.filter_cols - 1);
  const int64_t ow0 = first_col <= 0 ? 0 : (first_col + w.stride_cols - 1) / w.stride_cols;
  int64_t ow1 = (iw + w.pad_left) / w.stride_cols;
  if (ow1 >= w.out_cols) ow1 = w.out_cols - 1;
  for (int64_t oh = oh0; oh <= oh1; ++oh) {
    for (int64_t ow = ow0; ow <= ow1; ++ow) fn((b * w.out_rows + oh) * w.out_cols + ow);
  }
}

// MaxPoolGrad's gather for input element x (NHWC offset): the sum of
// grad(p * in_depth + c) over the windows p holding x whose first maximum
// it is, first_max[p * in_depth + c] being FirstMaxOf(w, ..., p, c)
// (computed once per window: a window's scan is not redone for each of its
// elements). Summed in window order, as float.
template <typename Grad>
SLUICE_WINDOW_FN float MaxPoolGradOf(const Window2D& w, const int64_t* first_max, Grad&& grad,
                                     int64_t x) {
  const int64_t c = x % w.in_depth;
  float sum = 0;
  ForEachPoolWindowOf(w, x, [&](int64_t p) {
    if (first_max[p * w.in_depth + c] == x) sum += grad(p * w.in_depth + c);
  });
  return sum;
}

// The input elements pooling window p covers (padding not counted).
SLUICE_WINDOW_FN int64_t PoolCount(const Window2D& w, int64_t p) {
  const int64_t ow = p % w.out_cols;
  const int64_t oh = (p / w.out_cols) % w.out_rows;
  int64_t r0, r1, c0, c1;
  PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
  PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
  return (r1 > r0 && c1 > c0) ? (r1 - r0) * (c1 - c0) : 0;
}

// AvgPool's window p, channel c: the mean of its elements inside the input
// (load(offset) giving one, summed in row-major order as the CPU kernel
// does, in float); 0 for a window wholly in the padding.
template <typename Load>
SLUICE_WINDOW_FN float AvgPoolOf(const Window2D& w, Load&& load, int64_t p, int64_t c) {
  const int64_t ow = p % w.out_cols;
  const int64_t oh = (p / w.out_cols) % w.out_rows;
  const int64_t b = p / (w.out_cols * w.out_rows);
  int64_t r0, r1, c0, c1;
  PoolSpan(oh, w.stride_rows, w.pad_top, w.filter_rows, w.in_rows, &r0, &r1);
  PoolSpan(ow, w.stride_cols, w.pad_left, w.filter_cols, w.in_cols, &c0, &c1);
  float sum = 0;
  for (int64_t h = r0; h < r1; ++h) {
    for (int64_t x = c0; x < c1; ++x) {
      sum += load(((b * w.in_rows + h) * w.in_cols + x) * w.in_depth + c);
    }
  }
  const int64_t count = PoolCount(w, p);
  return count > 0 ? sum / static_cast<float>(count) : 0.0f;
}

// AvgPoolGrad's gather for input element x (NHWC offset): the sum, in
// window order (the CPU's scatter order), of grad(p * in_depth + c) /
// count(p) over the windows p holding x.
template <typename Grad>
SLUICE_WINDOW_FN float AvgPoolGradOf(const Window2D& w, Grad&& grad, int64_t x) {
  const int64_t c = x % w.in_depth;
  float sum = 0;
  ForEachPoolWindowOf(w, x, [&](int64_t p) {
    sum += grad(p * w.in_depth + c) / static_cast<float>(PoolCount(w, p));
  });
  return sum;
}

}  // namespace sluice::gpu

#endif  // SLUICE_OPS_GPU_WINDOW_INDEX_H_
