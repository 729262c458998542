// CPU kernels of the 2-D window ops, for float and double, NHWC only:
// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (im2col + GEMM
// through ops/internal/blas.h, in chunks of output pixels whose column
// buffer stays in L2), MaxPool and MaxPoolGrad.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "ops/internal/bf16_gemm.h"
#include "ops/internal/blas.h"
#include "ops/internal/index_tensors.h"
#include "ops/nn/internal/nn_kernel_util.h"
#include "ops/nn/internal/window_checks.h"
#include "ops/nn/internal/window_geometry.h"
#include "ops/nn/nn_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::Conv2DGeometry;
using internal::PoolGeometry;
using internal::Map2;
using internal::ParallelRange;
using internal::WindowAttrs;

// ---------------------------------------------------------------------------
// Conv2D family: im2col + gemm.

// Row-major C[m,n] = op(A)[m,k] * op(B)[k,n] + beta * C.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float beta, float* c) {
  internal::Gemm(trans_a, trans_b, m, n, k, a, trans_a ? m : k, b, trans_b ? k : n, c, n, beta);
}
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
          const double* b, double beta, double* c) {
  internal::Gemm(trans_a, trans_b, m, n, k, a, trans_a ? m : k, b, trans_b ? k : n, c, n, beta);
}
// bfloat16 operands, float sums (mixed precision's convolutions).
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const BFloat16* a,
          const BFloat16* b, float beta, float* c) {
  internal::Bf16Gemm(trans_a, trans_b, m, n, k, a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

// The type a Conv2D-family kernel's GEMM writes: T, or float for bfloat16.
template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, BFloat16>, float, T>;

// Where such a GEMM writes: the output tensor itself, or for bfloat16 a
// float scratch that Finish rounds into the output once.
template <typename T>
class GemmTarget {
 public:
  using Acc = AccOf<T>;
  static absl::StatusOr<GemmTarget> For(OpKernelContext* ctx, Tensor* out) {
    GemmTarget t;
    t.out_ = out;
    if constexpr (std::is_same_v<T, Acc>) {
      t.data_ = out->data<T>();
    } else {
      ASSIGN_OR_RETURN(t.scratch_, ctx->allocate_temp(DataTypeToEnum<Acc>::value, out->shape()));
      t.data_ = t.scratch_.template data<Acc>();
    }
    return t;
  }
  Acc* data() const { return data_; }
  void Finish() const {
    if constexpr (!std::is_same_v<T, Acc>) {
      internal::FloatToBf16(data_, out_->data<T>(), out_->NumElements());
    }
  }

 private:
  Tensor* out_ = nullptr;
  Tensor scratch_;
  Acc* data_ = nullptr;
};


// Column-buffer budget, in elements, for one chunk of output pixels: 256 KiB
// of floats, so that a chunk's columns are still in the core's L2 cache when
// the GEMM reads them. Measured on the Fashion-MNIST CNN (3x3 convolutions
// of 1 and 16 channels, batch 64, one thread): 1.5-1.8x the steps per second
// of an 8 MiB budget; with two threads the same (smaller chunks, 32-64
// KiB, lost 10-20 % there to the per-chunk fork and join).
constexpr int64_t kMaxColumnElements = int64_t{1} << 16;

struct ConvSizes {
  int64_t pixels = 0;   // batch * out_rows * out_cols
  int64_t patch = 0;    // filter_rows * filter_cols * in_depth
  int64_t chunk = 0;    // output pixels per im2col chunk
  bool direct = false;  // 1x1, stride 1, no padding: the input is the column matrix
};

absl::StatusOr<ConvSizes> ComputeConvSizes(absl::string_view op, const Conv2DGeometry& g) {
  ConvSizes s;
  s.pixels = g.batch * g.out_rows * g.out_cols;
  s.patch = g.filter_rows * g.filter_cols * g.in_depth;
  constexpr int64_t kMaxBlas = std::numeric_limits<int>::max();
  if (s.patch > kMaxBlas || g.out_depth > kMaxBlas) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": filter too large for gemm"));
  }
  s.chunk = std::clamp<int64_t>(kMaxColumnElements / std::max<int64_t>(1, s.patch), 1,
                                std::max<int64_t>(1, s.pixels));
  s.direct = g.filter_rows == 1 && g.filter_cols == 1 && g.stride_rows == 1 && g.stride_cols == 1 &&
             g.pad_top == 0 && g.pad_left == 0 && g.out_rows == g.in_rows &&
             g.out_cols == g.in_cols;
  if (s.direct) s.chunk = s.pixels;
  if (s.chunk > kMaxBlas) s.chunk = kMaxBlas;
  return s;
}

// Calls fn(in_offset, taps) for the filter rows of output pixel `p`, in
// order: `taps` consecutive filter taps (of in_depth elements each) whose
// input is contiguous from in_offset, or, with in_offset -1, that lie in
// the padding. A filter row wholly inside the input (dilation 1) is one
// call of filter_cols taps: im2col copies it with one copy, not one per tap.
template <typename Fn>
inline void ForEachTapRun(const Conv2DGeometry& g, int64_t p, Fn fn) {
  const int64_t ow = p % g.out_cols;
  const int64_t oh = (p / g.out_cols) % g.out_rows;
  const int64_t b = p / (g.out_cols * g.out_rows);
  const int64_t row0 = oh * g.stride_rows - g.pad_top;
  const int64_t col0 = ow * g.stride_cols - g.pad_left;
  const int64_t image = b * g.in_rows * g.in_cols;
  const bool whole_rows =
      g.dilation_cols == 1 && col0 >= 0 && col0 + g.filter_cols <= g.in_cols;
  for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
    const int64_t ih = row0 + fr * g.dilation_rows;
    if (ih < 0 || ih >= g.in_rows) {
      fn(int64_t{-1}, g.filter_cols);
      continue;
    }
    const int64_t row = image + ih * g.in_cols;
    if (whole_rows) {
      fn((row + col0) * g.in_depth, g.filter_cols);
      continue;
    }
    for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
      const int64_t iw = col0 + fc * g.dilation_cols;
      fn(iw >= 0 && iw < g.in_cols ? (row + iw) * g.in_depth : int64_t{-1}, 1);
    }
  }
}

// col[p - p0, :] = the input patch under output pixel p, for p in [p0, p1).
// Split over the device's threads (each pixel's row of col is its own).
template <typename T>
void Im2Col(OpKernelContext* ctx, const Conv2DGeometry& g, const T* input, int64_t p0,
            int64_t p1, T* col) {
  const int64_t depth = g.in_depth;
  const int64_t patch = g.filter_rows * g.filter_cols * depth;
  ParallelRange(ctx, p1 - p0, patch, [&g, input, p0, col, depth, patch](int64_t b, int64_t e) {
    T* out = col + b * patch;
    for (int64_t p = p0 + b; p < p0 + e; ++p) {
      ForEachTapRun(g, p, [&](int64_t offset, int64_t taps) {
        const int64_t n = taps * depth;
        if (offset < 0) {
          std::fill(out, out + n, T{});
        } else {
          // Short runs (a 1-channel image's three pixels) copy inline; a
          // call of memcpy per run cost more than the copy.
          const T* src = input + offset;
          if (n < 16) {
            for (int64_t i = 0; i < n; ++i) out[i] = src[i];
          } else {
            std::memcpy(out, src, n * sizeof(T));
          }
        }
        out += n;
      });
    }
  });
}

// The adjoint of Im2Col: adds each column entry back into input_grad.
template <typename T>
void Col2Im(const Conv2DGeometry& g, const T* col, int64_t p0, int64_t p1, T* input_grad) {
  const int64_t depth = g.in_depth;
  for (int64_t p = p0; p < p1; ++p) {
    ForEachTapRun(g, p, [&](int64_t offset, int64_t taps) {
      const int64_t n = taps * depth;
      if (offset >= 0) {
        T* dst = input_grad + offset;
        Map2(dst, col, dst, n, [](auto x, auto y) { return x + y; });
      }
      col += n;
    });
  }
}

template <bool kPool>
using WindowOpKernel = internal::WindowOpKernel<kPool, kDeviceTypeCpu>;

template <typename T>
class Conv2DOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ASSIGN_OR_RETURN(Conv2DGeometry g, internal::CheckConv2DInputs(attrs_, input, filter));
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes("Conv2D", g));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.out_depth})));
    using Acc = AccOf<T>;
    if (s.pixels == 0 || g.out_depth == 0) return absl::OkStatus();
    if (s.patch == 0) {
      std::fill(output->data<T>(), output->data<T>() + output->NumElements(), T{});
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(GemmTarget<T> target, GemmTarget<T>::For(ctx, output));
    Acc* out = target.data();
    const T* in = input.data<T>();
    const T* w = filter.data<T>();
    if (s.direct) {
      Gemm(false, false, s.pixels, g.out_depth, s.patch, in, w, Acc(0), out);
      target.Finish();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({s.chunk * s.patch})));
    T* c = col.data<T>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Im2Col(ctx, g, in, p0, p1, c);
      Gemm(false, false, p1 - p0, g.out_depth, s.patch, c, w, Acc(0), out + p0 * g.out_depth);
    }
    target.Finish();
    return absl::OkStatus();
  }
};

template <typename T>
class Conv2DBackpropInputOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropInput";
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    ASSIGN_OR_RETURN(internal::ConvBackpropGeometry b,
                     internal::CheckConv2DBackpropInputInputs(attrs_, ctx->input(0), filter, dy));
    const Conv2DGeometry& g = b.geometry;
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes(kOp, g));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, b.shape));
    using Acc = AccOf<T>;
    ASSIGN_OR_RETURN(GemmTarget<T> target, GemmTarget<T>::For(ctx, output));
    Acc* dx = target.data();
    std::fill(dx, dx + output->NumElements(), Acc(0));
    if (s.pixels == 0 || s.patch == 0 || g.out_depth == 0) {
      target.Finish();
      return absl::OkStatus();
    }
    const T* w = filter.data<T>();
    const T* dyp = dy.data<T>();
    if (s.direct) {
      Gemm(false, true, s.pixels, s.patch, g.out_depth, dyp, w, Acc(0), dx);
      target.Finish();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor col, ctx->allocate_temp(DataTypeToEnum<Acc>::value,
                                                    TensorShape({s.chunk * s.patch})));
    Acc* c = col.data<Acc>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Gemm(false, true, p1 - p0, s.patch, g.out_depth, dyp + p0 * g.out_depth, w, Acc(0), c);
      Col2Im(g, c, p0, p1, dx);
    }
    target.Finish();
    return absl::OkStatus();
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropFilter";
    const Tensor& input = ctx->input(0);
    const Tensor& dy = ctx->input(2);
    ASSIGN_OR_RETURN(internal::ConvBackpropGeometry b,
                     internal::CheckConv2DBackpropFilterInputs(attrs_, input, ctx->input(1), dy));
    const Conv2DGeometry& g = b.geometry;
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes(kOp, g));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, b.shape));
    using Acc = AccOf<T>;
    if (s.pixels == 0 || s.patch == 0 || g.out_depth == 0) {
      std::fill(output->data<T>(), output->data<T>() + output->NumElements(), T{});
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(GemmTarget<T> target, GemmTarget<T>::For(ctx, output));
    Acc* dw = target.data();
    const T* in = input.data<T>();
    const T* dyp = dy.data<T>();
    if (s.direct) {
      Gemm(true, false, s.patch, g.out_depth, s.pixels, in, dyp, Acc(0), dw);
      target.Finish();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({s.chunk * s.patch})));
    T* c = col.data<T>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Im2Col(ctx, g, in, p0, p1, c);
      Gemm(true, false, s.patch, g.out_depth, p1 - p0, c, dyp + p0 * g.out_depth,
           p0 == 0 ? Acc(0) : Acc(1), dw);
    }
    target.Finish();
    return absl::OkStatus();
  }
};

// ---------------------------------------------------------------------------
// MaxPool, MaxPoolGrad (and the helpers AvgPool shares).

// The valid input rows [begin, end) under one window.
struct Span1D {
  int64_t begin, end;
};
inline Span1D WindowSpan(int64_t out, int64_t stride, int64_t pad, int64_t window, int64_t size) {
  const int64_t start = out * stride - pad;
  return {std::max<int64_t>(start, 0), std::min(start + window, size)};
}

// The pooling window of output pixel p (over batch, rows, cols): its batch
// and the input rows and columns under it.
struct PoolWindow {
  int64_t b;
  Span1D rows, cols;
};
inline PoolWindow WindowOf(const Conv2DGeometry& g, int64_t p) {
  const int64_t ow = p % g.out_cols, oh = (p / g.out_cols) % g.out_rows;
  return {p / (g.out_cols * g.out_rows),
          WindowSpan(oh, g.stride_rows, g.pad_top, g.filter_rows, g.in_rows),
          WindowSpan(ow, g.stride_cols, g.pad_left, g.filter_cols, g.in_cols)};
}

// The window of MaxPool and MaxPoolGrad: their attrs, read once; or, for
// MaxPoolV2 and MaxPoolGradV2 (kV2), the ksize and strides inputs `at` and
// `at` + 1 of each run.
template <bool kV2>
class MaxPoolWindowKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if (!kV2) {
      ASSIGN_OR_RETURN(attrs_, internal::ReadKernelWindowAttrs(ctx, true, kDeviceTypeCpu));
    }
    return absl::OkStatus();
  }

 protected:
  absl::StatusOr<WindowAttrs> Window(OpKernelContext* ctx, int at) const {
    if (!kV2) return attrs_;
    const std::string& op = ctx->node().op();
    ASSIGN_OR_RETURN(std::vector<int64_t> ksize, internal::ReadInts(ctx->input(at), op + ": ksize"));
    ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                     internal::ReadInts(ctx->input(at + 1), op + ": strides"));
    ASSIGN_OR_RETURN(WindowAttrs attrs, internal::ReadPoolAttrs(ctx->node().attrs(),
                                                                std::move(ksize),
                                                                std::move(strides)));
    if (attrs.nchw) {
      return absl::UnimplementedError(
          absl::StrCat(op, " on ", kDeviceTypeCpu, " supports only data_format NHWC"));
    }
    return attrs;
  }

  WindowAttrs attrs_;
};

template <typename T, bool kV2>
class MaxPoolOp : public MaxPoolWindowKernel<kV2> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(const WindowAttrs attrs, this->Window(ctx, 1));
    ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry(ctx->node().op(), attrs, input));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.in_depth})));
    const T* in = input.data<T>();
    T* out = output->data<T>();
    const int64_t depth = g.in_depth;
    const int64_t pixels = g.batch * g.out_rows * g.out_cols;
    ParallelRange(
        ctx, pixels, depth * g.filter_rows * g.filter_cols,
        [&g, in, out, depth](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const auto [b, rows, cols] = WindowOf(g, p);
            T* o = out + p * depth;
            std::fill(o, o + depth, std::numeric_limits<T>::lowest());
            for (int64_t h = rows.begin; h < rows.end; ++h) {
              for (int64_t w = cols.begin; w < cols.end; ++w) {
                const T* x = in + ((b * g.in_rows + h) * g.in_cols + w) * depth;
                Map2(o, x, o, depth, [](auto m, auto v) { return m < v ? v : m; });
              }
            }
          }
        });
    return absl::OkStatus();
  }
};

// The flat input position of each channel's maximum in output pixel p's
// window (the first maximum in row-major order wins), into best_at; false
// for a window over padding alone.
template <typename T>
bool WindowArgmax(const Conv2DGeometry& g, const T* in, int64_t p, T* best, int64_t* best_at) {
  const auto [b, rows, cols] = WindowOf(g, p);
  if (rows.begin >= rows.end || cols.begin >= cols.end) return false;
  const int64_t depth = g.in_depth;
  bool first = true;
  for (int64_t h = rows.begin; h < rows.end; ++h) {
    for (int64_t w = cols.begin; w < cols.end; ++w) {
      const int64_t at = ((b * g.in_rows + h) * g.in_cols + w) * depth;
      const T* x = in + at;
      for (int64_t c = 0; c < depth; ++c) {
        const bool more = first || x[c] > best[c];
        best[c] = more ? x[c] : best[c];
        best_at[c] = more ? at + c : best_at[c];
      }
      first = false;
    }
  }
  return true;
}

// MaxPoolGradGrad: grad (shaped like the input) read at each window's
// maximum, into the pooled shape.
template <typename T, bool kV2>
class MaxPoolGradGradOp : public MaxPoolWindowKernel<kV2> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    ASSIGN_OR_RETURN(const WindowAttrs attrs, this->Window(ctx, 3));
    ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry(ctx->node().op(), attrs, input));
    const TensorShape pooled({g.batch, g.out_rows, g.out_cols, g.in_depth});
    if (ctx->input(1).shape() != pooled || grad.shape() != input.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx->node().op(), ": orig_output must have the pooled shape ", pooled.DebugString(),
          " and grad the input's ", input.shape().DebugString(), ", got ",
          ctx->input(1).shape().DebugString(), " and ", grad.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, pooled));
    const int64_t depth = g.in_depth;
    const T* in = input.data<T>();
    const T* gi = grad.data<T>();
    T* out = output->data<T>();
    ParallelRange(ctx, g.batch * g.out_rows * g.out_cols, depth * g.filter_rows * g.filter_cols,
                  [&g, in, gi, out, depth](int64_t begin, int64_t end) {
                    std::vector<T> best(depth);
                    std::vector<int64_t> best_at(depth);
                    for (int64_t p = begin; p < end; ++p) {
                      T* o = out + p * depth;
                      if (!WindowArgmax(g, in, p, best.data(), best_at.data())) {
                        std::fill(o, o + depth, T(0));
                        continue;
                      }
                      for (int64_t c = 0; c < depth; ++c) o[c] = gi[best_at[c]];
                    }
                  });
    return absl::OkStatus();
  }
};

template <typename T, bool kV2>
class MaxPoolGradOp : public MaxPoolWindowKernel<kV2> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(2);
    ASSIGN_OR_RETURN(const WindowAttrs attrs, this->Window(ctx, 3));
    ASSIGN_OR_RETURN(Conv2DGeometry g,
                     internal::CheckMaxPoolGradInputs(attrs, input, ctx->input(1), grad));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, input.shape()));
    T* dx = output->data<T>();
    std::fill(dx, dx + output->NumElements(), T(0));
    const int64_t depth = g.in_depth;
    const T* in = input.data<T>();
    const T* gp = grad.data<T>();
    // Windows of different images never share an input element: images
    // are split over the device's threads.
    const int64_t per_image = g.out_rows * g.out_cols;
    ParallelRange(
        ctx, g.batch, per_image * depth * g.filter_rows * g.filter_cols,
        [&g, in, gp, dx, depth, per_image](int64_t b0, int64_t b1) {
          std::vector<T> best(depth);
          std::vector<int64_t> best_at(depth);
          for (int64_t p = b0 * per_image; p < b1 * per_image; ++p) {
            if (!WindowArgmax(g, in, p, best.data(), best_at.data())) continue;  // nothing to route
            const T* gr = gp + p * depth;
            for (int64_t c = 0; c < depth; ++c) dx[best_at[c]] += gr[c];
          }
        });
    return absl::OkStatus();
  }
};

// The V1 ops' kernels, one type parameter (as RegisterFloatKernels takes).
template <typename T>
using MaxPoolV1Op = MaxPoolOp<T, false>;
template <typename T>
using MaxPoolGradV1Op = MaxPoolGradOp<T, false>;
template <typename T>
using MaxPoolGradGradV1Op = MaxPoolGradGradOp<T, false>;

// ---------------------------------------------------------------------------
// AvgPool, AvgPoolGrad: the mean over the window's elements inside the input
// (padding is not counted, as TensorFlow's AvgPool).

template <typename T>
class AvgPoolOp : public WindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry("AvgPool", attrs_, input));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.in_depth})));
    const T* in = input.data<T>();
    T* out = output->data<T>();
    const int64_t depth = g.in_depth;
    const int64_t pixels = g.batch * g.out_rows * g.out_cols;
    ParallelRange(
        ctx, pixels, depth * g.filter_rows * g.filter_cols,
        [&g, in, out, depth](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const auto [b, rows, cols] = WindowOf(g, p);
            T* o = out + p * depth;
            std::fill(o, o + depth, T(0));
            for (int64_t h = rows.begin; h < rows.end; ++h) {
              for (int64_t w = cols.begin; w < cols.end; ++w) {
                const T* x = in + ((b * g.in_rows + h) * g.in_cols + w) * depth;
                for (int64_t c = 0; c < depth; ++c) o[c] += x[c];
              }
            }
            const T count = static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
            if (count > T(0)) {
              for (int64_t c = 0; c < depth; ++c) o[c] /= count;
            }
          }
        });
    return absl::OkStatus();
  }
};

template <typename T>
class AvgPoolGradOp : public WindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(1);
    ASSIGN_OR_RETURN(const internal::ConvBackpropGeometry checked,
                     internal::CheckAvgPoolGradInputs(attrs_, ctx->input(0), grad));
    const Conv2DGeometry& g = checked.geometry;
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, checked.shape));
    T* dx = output->data<T>();
    std::fill(dx, dx + output->NumElements(), T(0));
    const int64_t depth = g.in_depth;
    const T* gp = grad.data<T>();
    const int64_t pixels = g.batch * g.out_rows * g.out_cols;
    for (int64_t p = 0; p < pixels; ++p) {
      const auto [b, rows, cols] = WindowOf(g, p);
      const T count = static_cast<T>((rows.end - rows.begin) * (cols.end - cols.begin));
      if (count <= T(0)) continue;
      const T* gr = gp + p * depth;
      for (int64_t h = rows.begin; h < rows.end; ++h) {
        for (int64_t w = cols.begin; w < cols.end; ++w) {
          T* d = dx + ((b * g.in_rows + h) * g.in_cols + w) * depth;
          for (int64_t c = 0; c < depth; ++c) d[c] += gr[c] / count;
        }
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

namespace internal {

void RegisterConvKernels(KernelRegistry* kernels) {
  RegisterFloatKernels<AvgPoolOp>(kernels, "AvgPool");
  RegisterFloatKernels<AvgPoolGradOp>(kernels, "AvgPoolGrad");
  RegisterFloatKernels<Conv2DOp>(kernels, "Conv2D");
  RegisterFloatKernels<Conv2DBackpropInputOp>(kernels, "Conv2DBackpropInput");
  RegisterFloatKernels<Conv2DBackpropFilterOp>(kernels, "Conv2DBackpropFilter");
  // bfloat16: mixed precision's convolutions (their GEMMs sum in float).
  const auto bf16 = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_BFLOAT16);
  };
  kernels->Register<Conv2DOp<BFloat16>>(bf16("Conv2D"));
  kernels->Register<Conv2DBackpropInputOp<BFloat16>>(bf16("Conv2DBackpropInput"));
  kernels->Register<Conv2DBackpropFilterOp<BFloat16>>(bf16("Conv2DBackpropFilter"));
  RegisterFloatKernels<MaxPoolV1Op>(kernels, "MaxPool");
  RegisterFloatKernels<MaxPoolGradV1Op>(kernels, "MaxPoolGrad");
  RegisterFloatKernels<MaxPoolGradGradV1Op>(kernels, "MaxPoolGradGrad");
  // The V2 forms: the same kernels, their window read from inputs.
  const auto v2 = [](const char* op, DataType t) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", t).HostMemory("ksize").HostMemory(
        "strides");
  };
  kernels->Register<MaxPoolOp<float, true>>(v2("MaxPoolV2", DT_FLOAT));
  kernels->Register<MaxPoolOp<double, true>>(v2("MaxPoolV2", DT_DOUBLE));
  kernels->Register<MaxPoolGradOp<float, true>>(v2("MaxPoolGradV2", DT_FLOAT));
  kernels->Register<MaxPoolGradOp<double, true>>(v2("MaxPoolGradV2", DT_DOUBLE));
  kernels->Register<MaxPoolGradGradOp<float, true>>(v2("MaxPoolGradGradV2", DT_FLOAT));
  kernels->Register<MaxPoolGradGradOp<double, true>>(v2("MaxPoolGradGradV2", DT_DOUBLE));
}

}  // namespace internal
}  // namespace sluice
