// CPU kernels of the neural-network ops other than the window ops, for float
// and double: Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax, LogSoftmax and
// the softmax cross-entropies (Conv2D and MaxPool kernels: conv_kernels.cc).
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
#include "ops/internal/fast_math.h"
#include "ops/internal/nn_kernel_checks.h"
#include "ops/internal/nn_kernel_util.h"
#include "ops/nn_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

using internal::kLanes;
using internal::kVectorBytes;
using internal::Load;
using internal::Map1;
using internal::Map2;
using internal::ParallelRange;
using internal::RegisterFloatKernels;
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
    RETURN_IF_ERROR(internal::CheckReluGradShapes(g, f));
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

using internal::ChannelView;
using internal::ReadNchw;
using internal::ViewChannels;

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
    RETURN_IF_ERROR(internal::CheckBiasShape(value, bias, v));
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

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    RETURN_IF_ERROR(internal::CheckLogits(kLog ? "LogSoftmax" : "Softmax", x));
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

template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckSoftmaxXentShapes(features, labels));
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
    RETURN_IF_ERROR(internal::CheckSparseSoftmaxXentShapes(features, labels));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
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
// Registration.

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
  internal::RegisterConvKernels(kernels);
}

}  // namespace sluice
