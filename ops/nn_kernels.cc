// CPU kernels of the neural-network ops, for float and double.
//
// Element-wise and per-row loops use GCC/Clang vector extensions (Vec<T>) so
// they vectorize at -O2; convolutions are im2col + OpenBLAS gemm, processed in
// chunks of output pixels to bound the temporary column buffer.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "ops/nn_ops.h"
#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace {

using nn_internal::Conv2DGeometry;
using nn_internal::WindowAttrs;

// ---------------------------------------------------------------------------
// Vector helpers.

#if defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(kVectorBytes)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(kVectorBytes)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int64_t kLanes = kVectorBytes / sizeof(T);

template <typename T>
inline Vec<T> Load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline void Store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}
template <typename T>
inline Vec<T> Splat(T x) {
  return Vec<T>{} + x;
}

// out[i] = f(a[i]); f is a generic lambda, called on vectors and on scalars.
// out may equal a.
template <typename T, typename F>
inline void Map1(const T* a, T* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) Store(out + i, f(Load(a + i)));
  for (; i < n; ++i) out[i] = f(a[i]);
}

// out[i] = f(a[i], b[i]); out may equal a or b.
template <typename T, typename F>
inline void Map2(const T* a, const T* b, T* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) Store(out + i, f(Load(a + i), Load(b + i)));
  for (; i < n; ++i) out[i] = f(a[i], b[i]);
}

template <typename T>
T RowMax(const T* x, int64_t n) {
  T m = x[0];
  int64_t i = 0;
  if (n >= kLanes<T>) {
    Vec<T> acc = Load(x);
    for (i = kLanes<T>; i + kLanes<T> <= n; i += kLanes<T>) {
      const Vec<T> v = Load(x + i);
      acc = acc < v ? v : acc;
    }
    for (int k = 0; k < kLanes<T>; ++k) m = m < acc[k] ? acc[k] : m;
  }
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  return m;
}

template <typename T>
T RowSum(const T* x, int64_t n) {
  Vec<T> acc = {};
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) acc += Load(x + i);
  T s = 0;
  for (; i < n; ++i) s += x[i];
  for (int k = 0; k < kLanes<T>; ++k) s += acc[k];
  return s;
}

// sum of labels[i] * (x[i] - shift).
template <typename T>
T RowDotShifted(const T* labels, const T* x, T shift, int64_t n) {
  Vec<T> acc = {};
  int64_t i = 0;
  for (; i + kLanes<T> <= n; i += kLanes<T>) acc += Load(labels + i) * (Load(x + i) - shift);
  T s = 0;
  for (; i < n; ++i) s += labels[i] * (x[i] - shift);
  for (int k = 0; k < kLanes<T>; ++k) s += acc[k];
  return s;
}

// exp(x) for float (scalar or Vec<float>), Cephes-style: x = n ln2 + r,
// exp(r) by a degree-6 polynomial, 2^n through the exponent bits. Relative
// error ~1e-7 on [-87.3, 88]; inputs outside are clamped.
template <typename V, typename I>
inline V ExpFloat(V x) {
  const V lo = V{} + -87.33654f, hi = V{} + 88.0f;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const V n = (x * 1.44269504088896341f + kRound) - kRound;
  V r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  I bits;
  if constexpr (sizeof(V) == sizeof(float)) {
    bits = (static_cast<int32_t>(n) + 127) << 23;
  } else {
    bits = (__builtin_convertvector(n, I) + 127) << 23;
  }
  V scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

typedef int32_t VecInt32 __attribute__((vector_size(kVectorBytes)));

// out[i] = exp(x[i] - shift); out may equal x.
inline void ExpShifted(const float* x, float shift, float* out, int64_t n) {
  Map1(x, out, n, [shift](auto v) {
    if constexpr (sizeof(v) == sizeof(float)) {
      return ExpFloat<float, int32_t>(v - shift);
    } else {
      return ExpFloat<Vec<float>, VecInt32>(v - shift);
    }
  });
}
inline void ExpShifted(const double* x, double shift, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i] - shift);
}

// Blocks of one ParallelRange call, claimed by whichever thread gets there
// first. Shared so that a helper closure the pool starts late (after the
// caller has claimed and finished every block) still finds live state.
struct BlockWork {
  std::function<void(int64_t, int64_t)> fn;
  int64_t total = 0, block = 0, blocks = 0;
  std::atomic<int64_t> next{0};
  absl::Mutex mu;
  int64_t finished ABSL_GUARDED_BY(mu) = 0;

  void RunClaimed() {
    for (int64_t b = next.fetch_add(1); b < blocks; b = next.fetch_add(1)) {
      fn(b * block, std::min(total, (b + 1) * block));
      absl::MutexLock lock(&mu);
      ++finished;
    }
  }
};

// Runs fn(begin, end) over [0, n), split across the device's threads when the
// work (n * cost_per_item, roughly in element operations) is large. The
// caller works through unclaimed blocks itself and waits only for blocks
// other threads are already running, so it cannot deadlock when called from
// a pool thread while every other pool thread is busy.
template <typename Fn>
void ParallelRange(OpKernelContext* ctx, int64_t n, int64_t cost_per_item, const Fn& fn) {
  constexpr int64_t kMinBlockCost = 1 << 17;
  ThreadPool* pool = ctx->thread_pool();
  const int64_t cost = std::max<int64_t>(1, cost_per_item);
  const int64_t max_blocks = pool == nullptr ? 1 : pool->num_threads() + 1;
  const int64_t blocks = std::min(max_blocks, n * cost / kMinBlockCost);
  if (blocks <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  auto work = std::make_shared<BlockWork>();
  work->fn = fn;
  work->total = n;
  work->block = (n + blocks - 1) / blocks;
  work->blocks = (n + work->block - 1) / work->block;
  for (int64_t i = 1; i < work->blocks; ++i) pool->Schedule([work] { work->RunClaimed(); });
  work->RunClaimed();
  absl::MutexLock lock(&work->mu);
  work->mu.Await(absl::Condition(
      +[](BlockWork* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu) { return w->finished == w->blocks; },
      work.get()));
}

std::string ShapeStr(const Tensor& t) { return t.shape().DebugString(); }

// ---------------------------------------------------------------------------
// Relu, ReluGrad.

template <typename T>
class ReluOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ParallelRange(ctx, x.NumElements(), 1, [in, out](int64_t b, int64_t e) {
      Map1(in + b, out + b, e - b, [](auto v) {
        const decltype(v) zero{};
        return v < zero ? zero : v;
      });
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
class ReluGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& f = ctx->input(1);
    if (g.shape() != f.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ReluGrad: gradients and features must have the same shape, got ",
                       ShapeStr(g), " and ", ShapeStr(f)));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    const T* gp = g.data<T>();
    const T* fp = f.data<T>();
    T* out = y->data<T>();
    ParallelRange(ctx, g.NumElements(), 1, [gp, fp, out](int64_t b, int64_t e) {
      Map2(gp + b, fp + b, out + b, e - b, [](auto gv, auto fv) {
        const decltype(gv) zero{};
        return fv > zero ? gv : zero;
      });
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// BiasAdd, BiasAddGrad.

absl::StatusOr<bool> ReadNchw(const OpKernelConstruction& ctx) {
  absl::StatusOr<std::string> format = ctx.GetAttr<std::string>("data_format");
  if (!format.ok()) return format.status();
  if (*format != "NHWC" && *format != "NCHW") {
    return absl::InvalidArgumentError(absl::StrCat("unknown data_format '", *format, "'"));
  }
  return *format == "NCHW";
}

// value viewed as [outer, channels, inner]: NHWC has inner 1, NCHW outer = batch.
struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 0;
};

absl::StatusOr<ChannelView> ViewChannels(absl::string_view op, const Tensor& value, bool nchw) {
  if (value.dims() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": value must be at least 2-D, got shape ", ShapeStr(value)));
  }
  ChannelView v;
  const int c = nchw ? 1 : value.dims() - 1;
  v.channels = value.dim_size(c);
  v.outer = 1;
  for (int i = 0; i < c; ++i) v.outer *= value.dim_size(i);
  v.inner = 1;
  for (int i = c + 1; i < value.dims(); ++i) v.inner *= value.dim_size(i);
  return v;
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nchw_, ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    ASSIGN_OR_RETURN(ChannelView v, ViewChannels("BiasAdd", value, nchw_));
    if (bias.dims() != 1 || bias.dim_size(0) != v.channels) {
      return absl::InvalidArgumentError(
          absl::StrCat("BiasAdd: bias must be a vector of the channel size ", v.channels,
                       " (value shape ", ShapeStr(value), "), got bias shape ", ShapeStr(bias)));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, value.shape()));
    const T* in = value.data<T>();
    const T* b = bias.data<T>();
    T* o = out->data<T>();
    const int64_t channels = v.channels, inner = v.inner;
    if (inner == 1) {
      ParallelRange(ctx, v.outer, channels, [=](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          Map2(in + r * channels, b, o + r * channels, channels,
               [](auto x, auto y) { return x + y; });
        }
      });
    } else {
      ParallelRange(ctx, v.outer * channels, inner, [=](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T bias_value = b[r % channels];
          Map1(in + r * inner, o + r * inner, inner,
               [bias_value](auto x) { return x + bias_value; });
        }
      });
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nchw_, ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    ASSIGN_OR_RETURN(ChannelView v, ViewChannels("BiasAddGrad", g, nchw_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({v.channels})));
    T* o = out->data<T>();
    std::fill(o, o + v.channels, T(0));
    const T* in = g.data<T>();
    if (v.inner == 1) {
      for (int64_t r = 0; r < v.outer; ++r) {
        Map2(o, in + r * v.channels, o, v.channels, [](auto x, auto y) { return x + y; });
      }
    } else {
      for (int64_t r = 0; r < v.outer * v.channels; ++r) {
        o[r % v.channels] += RowSum(in + r * v.inner, v.inner);
      }
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax (along the last dimension).

absl::Status CheckLogits(absl::string_view op, const Tensor& logits) {
  if (logits.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": logits must have rank >= 1, got shape ", ShapeStr(logits)));
  }
  return absl::OkStatus();
}

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    RETURN_IF_ERROR(CheckLogits(kLog ? "LogSoftmax" : "Softmax", x));
    // LogSoftmax uses its output as scratch while it still reads x.
    Tensor* y = nullptr;
    if (kLog) {
      ASSIGN_OR_RETURN(y, ctx->allocate_output(0, x.shape()));
    } else {
      ASSIGN_OR_RETURN(y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    }
    const int64_t depth = x.dim_size(x.dims() - 1);
    if (depth == 0) return absl::OkStatus();
    const int64_t rows = x.NumElements() / depth;
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ParallelRange(ctx, rows, depth * 8, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) Row(in + r * depth, out + r * depth, depth);
    });
    return absl::OkStatus();
  }

 private:
  static void Row(const T* x, T* y, int64_t n) {
    const T m = RowMax(x, n);
    ExpShifted(x, m, y, n);
    const T sum = RowSum(y, n);
    if (kLog) {
      // (x - m) first: exact for nearby values, so large logits keep precision.
      const T log_sum = std::log(sum);
      Map1(x, y, n, [m, log_sum](auto v) { return (v - m) - log_sum; });
    } else {
      const T inv = T(1) / sum;
      Map1(y, y, n, [inv](auto v) { return v * inv; });
    }
  }
};

// ---------------------------------------------------------------------------
// Cross entropies. One pass per row computes loss and backprop:
//   loss = log(sum exp(f - m)) * sum(labels) - sum(labels * (f - m))
//   backprop = softmax(f) - labels

absl::Status CheckFeatures(absl::string_view op, const Tensor& features) {
  if (features.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": features must be 2-D [batch, classes], got shape ", ShapeStr(features)));
  }
  return absl::OkStatus();
}

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(CheckFeatures("SoftmaxCrossEntropyWithLogits", features));
    if (labels.shape() != features.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SoftmaxCrossEntropyWithLogits: features and labels must have the same shape, got ",
          ShapeStr(features), " and ", ShapeStr(labels)));
    }
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    const T* f = features.data<T>();
    const T* l = labels.data<T>();
    T* lo = loss->data<T>();
    T* bp = backprop->data<T>();
    ParallelRange(ctx, batch, classes * 10, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * classes;
        lo[r] = Row(f + off, l + off, bp + off, classes);
      }
    });
    return absl::OkStatus();
  }

 private:
  // bp may equal f: every f[i] is read before bp[i] is written.
  static T Row(const T* f, const T* l, T* bp, int64_t n) {
    if (n == 0) return T(0);
    const T m = RowMax(f, n);
    const T label_sum = RowSum(l, n);
    const T dot = RowDotShifted(l, f, m, n);
    ExpShifted(f, m, bp, n);
    const T sum = RowSum(bp, n);
    const T inv = T(1) / sum;
    Map2(bp, l, bp, n, [inv](auto e, auto y) { return e * inv - y; });
    return std::log(sum) * label_sum - dot;
  }
};

template <typename T, typename L>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(CheckFeatures("SparseSoftmaxCrossEntropyWithLogits", features));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    if (labels.dims() != 1 || labels.dim_size(0) != batch) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SparseSoftmaxCrossEntropyWithLogits: labels must be a vector of the batch size ", batch,
          " (features shape ", ShapeStr(features), "), got labels shape ", ShapeStr(labels)));
    }
    const L* lab = labels.data<L>();
    for (int64_t r = 0; r < batch; ++r) {
      if (lab[r] < 0 || lab[r] >= classes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SparseSoftmaxCrossEntropyWithLogits: received a label value of ", lab[r], " (labels[",
            r, "]) which is outside the valid range of [0, ", classes, ")"));
      }
    }
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    const T* f = features.data<T>();
    T* lo = loss->data<T>();
    T* bp = backprop->data<T>();
    ParallelRange(ctx, batch, classes * 8, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * classes;
        lo[r] = Row(f + off, static_cast<int64_t>(lab[r]), bp + off, classes);
      }
    });
    return absl::OkStatus();
  }

 private:
  static T Row(const T* f, int64_t label, T* bp, int64_t n) {
    const T m = RowMax(f, n);
    const T shifted_label_logit = f[label] - m;
    ExpShifted(f, m, bp, n);
    const T sum = RowSum(bp, n);
    const T inv = T(1) / sum;
    Map1(bp, bp, n, [inv](auto e) { return e * inv; });
    bp[label] -= T(1);
    return std::log(sum) - shifted_label_logit;
  }
};

// ---------------------------------------------------------------------------
// Conv2D family: im2col + gemm.

// Row-major C[m,n] = op(A)[m,k] * op(B)[k,n] + beta * C.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
          const float* b, float beta, float* c) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, trans_a ? m : k, b,
              trans_b ? k : n, beta, c, n);
}
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a,
          const double* b, double beta, double* c) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, trans_a ? m : k, b,
              trans_b ? k : n, beta, c, n);
}

// Column-buffer budget, in elements, for one chunk of output pixels.
constexpr int64_t kMaxColumnElements = int64_t{1} << 21;

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

// Calls fn(pixel, in_offset_or_-1) for each filter tap (row-major over
// filter rows, cols) of output pixel `p`; in_offset indexes the input in
// elements, -1 for a tap in the padding.
template <typename Fn>
inline void ForEachTap(const Conv2DGeometry& g, int64_t p, Fn fn) {
  const int64_t ow = p % g.out_cols;
  const int64_t oh = (p / g.out_cols) % g.out_rows;
  const int64_t b = p / (g.out_cols * g.out_rows);
  const int64_t row0 = oh * g.stride_rows - g.pad_top;
  const int64_t col0 = ow * g.stride_cols - g.pad_left;
  const int64_t image = b * g.in_rows * g.in_cols;
  for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
    const int64_t ih = row0 + fr * g.dilation_rows;
    const bool row_ok = ih >= 0 && ih < g.in_rows;
    for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
      const int64_t iw = col0 + fc * g.dilation_cols;
      const bool ok = row_ok && iw >= 0 && iw < g.in_cols;
      fn(ok ? (image + ih * g.in_cols + iw) * g.in_depth : int64_t{-1});
    }
  }
}

// col[p - p0, :] = the input patch under output pixel p, for p in [p0, p1).
template <typename T>
void Im2Col(const Conv2DGeometry& g, const T* input, int64_t p0, int64_t p1, T* col) {
  const int64_t depth = g.in_depth;
  for (int64_t p = p0; p < p1; ++p) {
    ForEachTap(g, p, [&](int64_t offset) {
      if (offset >= 0) {
        std::memcpy(col, input + offset, depth * sizeof(T));
      } else {
        std::fill(col, col + depth, T(0));
      }
      col += depth;
    });
  }
}

// The adjoint of Im2Col: adds each column entry back into input_grad.
template <typename T>
void Col2Im(const Conv2DGeometry& g, const T* col, int64_t p0, int64_t p1, T* input_grad) {
  const int64_t depth = g.in_depth;
  for (int64_t p = p0; p < p1; ++p) {
    ForEachTap(g, p, [&](int64_t offset) {
      if (offset >= 0) {
        T* dst = input_grad + offset;
        Map2(dst, col, dst, depth, [](auto x, auto y) { return x + y; });
      }
      col += depth;
    });
  }
}

absl::StatusOr<WindowAttrs> InitWindowAttrs(const OpKernelConstruction& ctx, bool pool) {
  auto attrs = pool ? nn_internal::ReadPoolAttrs(ctx.node().attrs())
                    : nn_internal::ReadConvAttrs(ctx.node().attrs());
  if (!attrs.ok()) return attrs.status();
  if (attrs->nchw) {
    return absl::UnimplementedError(
        absl::StrCat(ctx.node().op(), " on CPU supports only data_format NHWC"));
  }
  return attrs;
}

// Base of the Conv2D-family and pooling kernels: reads and checks the window
// attrs once, at Init.
template <bool kPool>
class WindowOpKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, InitWindowAttrs(ctx, kPool));
    return absl::OkStatus();
  }

 protected:
  WindowAttrs attrs_;
};

absl::Status CheckRank4(absl::string_view op, absl::string_view what, const Tensor& t) {
  if (t.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must be 4-D, got shape ", ShapeStr(t)));
  }
  return absl::OkStatus();
}

// Reads a 4-element int32 sizes tensor (input_sizes / filter_sizes).
absl::StatusOr<TensorShape> ReadSizes(absl::string_view op, const Tensor& t) {
  if (t.dims() != 1 || t.NumElements() != 4 || t.dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": sizes must be an int32 vector of 4 elements, got ", t.DebugString()));
  }
  TensorShape s;
  for (int32_t d : t.flat<int32_t>()) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(op, ": negative size ", d));
    s.AddDim(d);
  }
  return s;
}

// Geometry of Conv2D with this input and filter shape; checks depths.
absl::StatusOr<Conv2DGeometry> ConvGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const TensorShape& input, const TensorShape& filter) {
  if (input.dim(3) != filter.dim(2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": input depth ", input.dim(3), " must equal the filter's in_depth ", filter.dim(2),
        " (input shape ", input.DebugString(), ", filter shape ", filter.DebugString(), ")"));
  }
  auto g =
      nn_internal::ComputeConv2DGeometry(attrs, input, filter.dim(0), filter.dim(1), filter.dim(3));
  if (!g.ok()) {
    return absl::Status(
        g.status().code(),
        absl::StrCat(op, ": ", g.status().message(), " (input shape ", input.DebugString(),
                     ", filter shape ", filter.DebugString(), ")"));
  }
  return g;
}

absl::Status CheckOutBackprop(absl::string_view op, const Conv2DGeometry& g,
                              const Tensor& out_backprop) {
  const TensorShape expected({g.batch, g.out_rows, g.out_cols, g.out_depth});
  if (out_backprop.shape() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": out_backprop has shape ", ShapeStr(out_backprop),
                     " but the forward output would have shape ", expected.DebugString()));
  }
  return absl::OkStatus();
}

template <typename T>
class Conv2DOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    RETURN_IF_ERROR(CheckRank4("Conv2D", "input", input));
    RETURN_IF_ERROR(CheckRank4("Conv2D", "filter", filter));
    ASSIGN_OR_RETURN(Conv2DGeometry g,
                     ConvGeometry("Conv2D", attrs_, input.shape(), filter.shape()));
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes("Conv2D", g));
    ASSIGN_OR_RETURN(
        Tensor * output,
        ctx->allocate_output(0, TensorShape({g.batch, g.out_rows, g.out_cols, g.out_depth})));
    T* out = output->data<T>();
    if (s.pixels == 0 || g.out_depth == 0) return absl::OkStatus();
    if (s.patch == 0) {
      std::fill(out, out + output->NumElements(), T(0));
      return absl::OkStatus();
    }
    const T* in = input.data<T>();
    const T* w = filter.data<T>();
    if (s.direct) {
      Gemm(false, false, s.pixels, g.out_depth, s.patch, in, w, T(0), out);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({s.chunk * s.patch})));
    T* c = col.data<T>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Im2Col(g, in, p0, p1, c);
      Gemm(false, false, p1 - p0, g.out_depth, s.patch, c, w, T(0), out + p0 * g.out_depth);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class Conv2DBackpropInputOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropInput";
    ASSIGN_OR_RETURN(TensorShape input_shape, ReadSizes(kOp, ctx->input(0)));
    const Tensor& filter = ctx->input(1);
    const Tensor& dy = ctx->input(2);
    RETURN_IF_ERROR(CheckRank4(kOp, "filter", filter));
    RETURN_IF_ERROR(CheckRank4(kOp, "out_backprop", dy));
    ASSIGN_OR_RETURN(Conv2DGeometry g, ConvGeometry(kOp, attrs_, input_shape, filter.shape()));
    RETURN_IF_ERROR(CheckOutBackprop(kOp, g, dy));
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes(kOp, g));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, input_shape));
    T* dx = output->data<T>();
    std::fill(dx, dx + output->NumElements(), T(0));
    if (s.pixels == 0 || s.patch == 0 || g.out_depth == 0) return absl::OkStatus();
    const T* w = filter.data<T>();
    const T* dyp = dy.data<T>();
    if (s.direct) {
      Gemm(false, true, s.pixels, s.patch, g.out_depth, dyp, w, T(0), dx);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({s.chunk * s.patch})));
    T* c = col.data<T>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Gemm(false, true, p1 - p0, s.patch, g.out_depth, dyp + p0 * g.out_depth, w, T(0), c);
      Col2Im(g, c, p0, p1, dx);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public WindowOpKernel</*kPool=*/false> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "Conv2DBackpropFilter";
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(TensorShape filter_shape, ReadSizes(kOp, ctx->input(1)));
    const Tensor& dy = ctx->input(2);
    RETURN_IF_ERROR(CheckRank4(kOp, "input", input));
    RETURN_IF_ERROR(CheckRank4(kOp, "out_backprop", dy));
    ASSIGN_OR_RETURN(Conv2DGeometry g, ConvGeometry(kOp, attrs_, input.shape(), filter_shape));
    RETURN_IF_ERROR(CheckOutBackprop(kOp, g, dy));
    ASSIGN_OR_RETURN(ConvSizes s, ComputeConvSizes(kOp, g));
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, filter_shape));
    T* dw = output->data<T>();
    if (s.pixels == 0 || s.patch == 0 || g.out_depth == 0) {
      std::fill(dw, dw + output->NumElements(), T(0));
      return absl::OkStatus();
    }
    const T* in = input.data<T>();
    const T* dyp = dy.data<T>();
    if (s.direct) {
      Gemm(true, false, s.patch, g.out_depth, s.pixels, in, dyp, T(0), dw);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Tensor col, ctx->allocate_temp(DataTypeToEnum<T>::value, TensorShape({s.chunk * s.patch})));
    T* c = col.data<T>();
    for (int64_t p0 = 0; p0 < s.pixels; p0 += s.chunk) {
      const int64_t p1 = std::min(s.pixels, p0 + s.chunk);
      Im2Col(g, in, p0, p1, c);
      Gemm(true, false, s.patch, g.out_depth, p1 - p0, c, dyp + p0 * g.out_depth,
           p0 == 0 ? T(0) : T(1), dw);
    }
    return absl::OkStatus();
  }
};

// ---------------------------------------------------------------------------
// MaxPool, MaxPoolGrad.

// The valid input rows [begin, end) under one window.
struct Span1D {
  int64_t begin, end;
};
inline Span1D WindowSpan(int64_t out, int64_t stride, int64_t pad, int64_t window, int64_t size) {
  const int64_t start = out * stride - pad;
  return {std::max<int64_t>(start, 0), std::min(start + window, size)};
}

absl::StatusOr<Conv2DGeometry> PoolGeometry(absl::string_view op, const WindowAttrs& attrs,
                                            const Tensor& input) {
  RETURN_IF_ERROR(CheckRank4(op, "input", input));
  auto g = nn_internal::ComputeConv2DGeometry(attrs, input.shape(), attrs.ksize[1], attrs.ksize[2],
                                              input.dim_size(3));
  if (!g.ok()) {
    return absl::Status(g.status().code(), absl::StrCat(op, ": ", g.status().message(),
                                                        " (input shape ", ShapeStr(input), ")"));
  }
  return g;
}

template <typename T>
class MaxPoolOp : public WindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry("MaxPool", attrs_, input));
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
            const int64_t ow = p % g.out_cols, oh = (p / g.out_cols) % g.out_rows;
            const int64_t b = p / (g.out_cols * g.out_rows);
            const Span1D rows = WindowSpan(oh, g.stride_rows, g.pad_top, g.filter_rows, g.in_rows);
            const Span1D cols = WindowSpan(ow, g.stride_cols, g.pad_left, g.filter_cols, g.in_cols);
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

template <typename T>
class MaxPoolGradOp : public WindowOpKernel</*kPool=*/true> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    constexpr char kOp[] = "MaxPoolGrad";
    const Tensor& input = ctx->input(0);
    const Tensor& orig_output = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    ASSIGN_OR_RETURN(Conv2DGeometry g, PoolGeometry(kOp, attrs_, input));
    const TensorShape out_shape({g.batch, g.out_rows, g.out_cols, g.in_depth});
    if (orig_output.shape() != out_shape || grad.shape() != out_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          kOp, ": orig_output and grad must have the pooled shape ", out_shape.DebugString(),
          ", got ", ShapeStr(orig_output), " and ", ShapeStr(grad)));
    }
    ASSIGN_OR_RETURN(Tensor * output, ctx->allocate_output(0, input.shape()));
    T* dx = output->data<T>();
    std::fill(dx, dx + output->NumElements(), T(0));
    const int64_t depth = g.in_depth;
    const T* in = input.data<T>();
    const T* gp = grad.data<T>();
    std::vector<T> best(depth);
    std::vector<int64_t> best_at(depth);
    const int64_t pixels = g.batch * g.out_rows * g.out_cols;
    for (int64_t p = 0; p < pixels; ++p) {
      const int64_t ow = p % g.out_cols, oh = (p / g.out_cols) % g.out_rows;
      const int64_t b = p / (g.out_cols * g.out_rows);
      const Span1D rows = WindowSpan(oh, g.stride_rows, g.pad_top, g.filter_rows, g.in_rows);
      const Span1D cols = WindowSpan(ow, g.stride_cols, g.pad_left, g.filter_cols, g.in_cols);
      bool first = true;
      for (int64_t h = rows.begin; h < rows.end; ++h) {
        for (int64_t w = cols.begin; w < cols.end; ++w) {
          const int64_t at = ((b * g.in_rows + h) * g.in_cols + w) * depth;
          const T* x = in + at;
          for (int64_t c = 0; c < depth; ++c) {
            if (first || x[c] > best[c]) {
              best[c] = x[c];
              best_at[c] = at + c;
            }
          }
          first = false;
        }
      }
      if (first) continue;  // an empty window: nothing to route
      const T* gr = gp + p * depth;
      for (int64_t c = 0; c < depth; ++c) dx[best_at[c]] += gr[c];
    }
    return absl::OkStatus();
  }
};

// ---------------------------------------------------------------------------
// Registration.

template <template <typename> class K>
void RegisterFloatKernels(KernelRegistry* kernels, const char* op) {
  kernels->Register<K<float>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  kernels->Register<K<double>>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE));
}

template <typename T>
using SoftmaxKernel = SoftmaxOp<T, false>;
template <typename T>
using LogSoftmaxKernel = SoftmaxOp<T, true>;

template <typename T>
void RegisterSparseXent(KernelRegistry* kernels) {
  constexpr char kOp[] = "SparseSoftmaxCrossEntropyWithLogits";
  const DataType t = DataTypeToEnum<T>::value;
  kernels->Register<SparseSoftmaxXentOp<T, int32_t>>(
      KernelDef(kOp, kDeviceTypeCpu).TypeConstraint("T", t).TypeConstraint("Tlabels", DT_INT32));
  kernels->Register<SparseSoftmaxXentOp<T, int64_t>>(
      KernelDef(kOp, kDeviceTypeCpu).TypeConstraint("T", t).TypeConstraint("Tlabels", DT_INT64));
}

}  // namespace

void RegisterNnKernels(KernelRegistry* kernels) {
  RegisterFloatKernels<ReluOp>(kernels, "Relu");
  RegisterFloatKernels<ReluGradOp>(kernels, "ReluGrad");
  RegisterFloatKernels<BiasAddOp>(kernels, "BiasAdd");
  RegisterFloatKernels<BiasAddGradOp>(kernels, "BiasAddGrad");
  RegisterFloatKernels<SoftmaxKernel>(kernels, "Softmax");
  RegisterFloatKernels<LogSoftmaxKernel>(kernels, "LogSoftmax");
  RegisterFloatKernels<SoftmaxXentOp>(kernels, "SoftmaxCrossEntropyWithLogits");
  RegisterSparseXent<float>(kernels);
  RegisterSparseXent<double>(kernels);
  RegisterFloatKernels<Conv2DOp>(kernels, "Conv2D");
  RegisterFloatKernels<Conv2DBackpropInputOp>(kernels, "Conv2DBackpropInput");
  RegisterFloatKernels<Conv2DBackpropFilterOp>(kernels, "Conv2DBackpropFilter");
  RegisterFloatKernels<MaxPoolOp>(kernels, "MaxPool");
  RegisterFloatKernels<MaxPoolGradOp>(kernels, "MaxPoolGrad");
}

}  // namespace sluice
