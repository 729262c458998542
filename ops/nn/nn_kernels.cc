// CPU arithmetic of the neural-network ops other than the window ops, for
// float and double: Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax, LogSoftmax
// and the softmax cross-entropies (their shells: ops/nn/nn_kernels.h; Conv2D and
// MaxPool kernels: conv_kernels.cc).
//
// Element-wise and per-row loops use GCC/Clang vector extensions (Vec<T>,
// internal/nn_kernel_util.h) so they vectorize at -O2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/math/internal/fast_math.h"
#include "ops/nn/internal/nn_kernel_checks.h"
#include "ops/nn/internal/nn_kernel_util.h"
#include "ops/nn/nn_kernels.h"
#include "ops/nn/nn_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::kLanes;
using internal::kVectorBytes;
using internal::Load;
using internal::Map1;
using internal::Map2;
using internal::ParallelRange;
using internal::Vec;

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

typedef int32_t VecInt32 __attribute__((vector_size(kVectorBytes)));

// out[i] = exp(x[i] - shift); out may equal x.
inline void ExpShifted(const float* x, float shift, float* out, int64_t n) {
  Map1(x, out, n, [shift](auto v) {
    if constexpr (sizeof(v) == sizeof(float)) {
      return internal::ExpApprox<float, int32_t>(v - shift);
    } else {
      return internal::ExpApprox<Vec<float>, VecInt32>(v - shift);
    }
  });
}
inline void ExpShifted(const double* x, double shift, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i] - shift);
}

// ---------------------------------------------------------------------------
// The CPU's arithmetic for the shells of ops/nn/nn_kernels.h.

struct CpuNnImpl {
  // LogSoftmax uses its output as scratch while it still reads x.
  static constexpr bool kLogSoftmaxInPlace = false;

  template <typename T>
  static absl::Status Relu(OpKernelContext* ctx, const T* in, T* out, int64_t n) {
    ParallelRange(ctx, n, 1, [in, out](int64_t b, int64_t e) {
      Map1(in + b, out + b, e - b, [](auto v) {
        const decltype(v) zero{};
        return v < zero ? zero : v;
      });
    });
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status ReluGrad(OpKernelContext* ctx, const T* gp, const T* fp, T* out,
                               int64_t n) {
    ParallelRange(ctx, n, 1, [gp, fp, out](int64_t b, int64_t e) {
      // g * (f > 0), as TensorFlow: an infinite or NaN g where f <= 0
      // gives NaN, not 0.
      Map2(gp + b, fp + b, out + b, e - b, [](auto gv, auto fv) {
        const decltype(gv) zero{};
        return fv > zero ? gv : gv * zero;
      });
    });
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status BiasAdd(OpKernelContext* ctx, const T* in, const T* b, T* o,
                              const internal::ChannelView& v) {
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

  template <typename T>
  static absl::Status BiasAddGrad(OpKernelContext* ctx, const Tensor& g,
                                  const internal::ChannelView& v) {
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

  template <typename T>
  static absl::Status Softmax(OpKernelContext* ctx, const T* in, T* out, int64_t rows,
                              int64_t depth, bool log) {
    ParallelRange(ctx, rows, depth * 8, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) SoftmaxRow(in + r * depth, out + r * depth, depth, log);
    });
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status SoftmaxXent(OpKernelContext* ctx, const T* f, const T* l, T* lo, T* bp,
                                  int64_t batch, int64_t classes) {
    ParallelRange(ctx, batch, classes * 10, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * classes;
        lo[r] = XentRow(f + off, l + off, bp + off, classes);
      }
    });
    return absl::OkStatus();
  }

  template <typename L>
  static absl::Status CheckSparseLabels(const L* lab, int64_t batch, int64_t classes) {
    for (int64_t r = 0; r < batch; ++r) {
      if (lab[r] < 0 || lab[r] >= classes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SparseSoftmaxCrossEntropyWithLogits: received a label value of ", lab[r], " (labels[",
            r, "]) which is outside the valid range of [0, ", classes, ")"));
      }
    }
    return absl::OkStatus();
  }

  template <typename T, typename L>
  static absl::Status SparseSoftmaxXent(OpKernelContext* ctx, const T* f, const L* lab, T* lo,
                                        T* bp, int64_t batch, int64_t classes) {
    ParallelRange(ctx, batch, classes * 8, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * classes;
        lo[r] = SparseXentRow(f + off, static_cast<int64_t>(lab[r]), bp + off, classes);
      }
    });
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static void SoftmaxRow(const T* x, T* y, int64_t n, bool log) {
    const T m = RowMax(x, n);
    ExpShifted(x, m, y, n);
    const T sum = RowSum(y, n);
    if (log) {
      // (x - m) first: exact for nearby values, so large logits keep precision.
      const T log_sum = std::log(sum);
      Map1(x, y, n, [m, log_sum](auto v) { return (v - m) - log_sum; });
    } else {
      const T inv = T(1) / sum;
      Map1(y, y, n, [inv](auto v) { return v * inv; });
    }
  }

  // One pass per row computes loss and backprop:
  //   loss = log(sum exp(f - m)) * sum(labels) - sum(labels * (f - m))
  //   backprop = softmax(f) - labels
  // bp may equal f: every f[i] is read before bp[i] is written.
  template <typename T>
  static T XentRow(const T* f, const T* l, T* bp, int64_t n) {
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

  template <typename T>
  static T SparseXentRow(const T* f, int64_t label, T* bp, int64_t n) {
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

}  // namespace

void RegisterNnKernels(KernelRegistry* kernels) {
  RegisterNnKernelsFor<CpuNnImpl>(kernels, kDeviceTypeCpu);
  internal::RegisterConvKernels(kernels);
}

}  // namespace sluice
