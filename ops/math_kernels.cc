// CPU kernels of the math ops (definitions: math_ops.cc).
//
// Element-wise kernels take fast paths for equal shapes and scalar operands
// and otherwise walk a merged broadcast plan (ops/internal/broadcast.h) whose
// innermost loop is contiguous or a scalar. Reductions merge adjacent reduced
// and kept dimensions and special-case reduce-all, reduce-rows and
// reduce-columns. MatMul calls OpenBLAS on the tensors' buffers. Work over
// kParallelMinElements is split across the device's thread pool.
//
// The project builds at -O2, whose "very cheap" vectorizer skips loops that
// need a runtime aliasing check, and trapping-math keeps float selects (max,
// min, clamps) out of vector code. The element-wise loops here are written to
// vectorize, so this file asks for -O3 without FP traps (results unchanged:
// no code here reads FP exception flags). Set before any include so that
// every inline function in this translation unit agrees.
#pragma GCC optimize("O3", "no-trapping-math")

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "ops/internal/broadcast.h"
#include "ops/math_ops.h"

namespace sluice {
namespace {

constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// Runs fn over [0, units) — on the device's pool when units * unit_elements
// is large, else inline.
void ParallelRange(OpKernelContext* ctx, int64_t units, int64_t unit_elements,
                   const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool* pool = ctx->device() ? ctx->thread_pool() : nullptr;
  if (pool == nullptr || pool->num_threads() < 2 || units < 2 ||
      units * unit_elements < kParallelMinElements) {
    fn(0, units);
    return;
  }
  const int64_t min_block = std::max<int64_t>(1, kParallelMinElements / 2 / unit_elements);
  pool->ParallelFor(units, min_block, fn);
}

// ---------------------------------------------------------------------------
// Element-wise functors: static Apply, inlined into the loops.

template <typename T> struct AddF { static T Apply(T a, T b) { return a + b; } };
template <typename T> struct SubF { static T Apply(T a, T b) { return a - b; } };
template <typename T> struct MulF { static T Apply(T a, T b) { return a * b; } };
template <typename T> struct DivF { static T Apply(T a, T b) { return a / b; } };
template <typename T> struct MaxF { static T Apply(T a, T b) { return a < b ? b : a; } };
template <typename T> struct MinF { static T Apply(T a, T b) { return b < a ? b : a; } };
template <typename T> struct PowF {
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
      T result = 1;
      for (; b > 0; b >>= 1, a *= a) {
        if (b & 1) result *= a;
      }
      return result;
    }
  }
};
// Floor division; integer divisors were checked for zero by the kernel.
template <typename T> struct FloorDivF {
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::floor(a / b);
    } else {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
  }
};
template <typename T> struct EqualF { static bool Apply(T a, T b) { return a == b; } };
template <typename T> struct NotEqualF { static bool Apply(T a, T b) { return a != b; } };
template <typename T> struct GreaterF { static bool Apply(T a, T b) { return a > b; } };
template <typename T> struct GreaterEqualF { static bool Apply(T a, T b) { return a >= b; } };
template <typename T> struct LessF { static bool Apply(T a, T b) { return a < b; } };
template <typename T> struct LessEqualF { static bool Apply(T a, T b) { return a <= b; } };

// Gradient helpers: Apply(y, dy).
template <typename T> struct TanhGradF {
  static T Apply(T y, T dy) { return dy * (T(1) - y * y); }
};
template <typename T> struct SigmoidGradF {
  static T Apply(T y, T dy) { return dy * y * (T(1) - y); }
};
template <typename T> struct SqrtGradF {
  static T Apply(T y, T dy) { return dy * T(0.5) / y; }
};
template <typename T> struct RsqrtGradF {
  static T Apply(T y, T dy) { return dy * T(-0.5) * y * y * y; }
};
template <typename T> struct ReciprocalGradF {
  static T Apply(T y, T dy) { return -dy * y * y; }
};

// Float exp/tanh/sigmoid written with selects and bit operations only, so
// loops over them vectorize (libm's are scalar). Relative error below 3e-7
// for normal results; inf, NaN and underflow behave as in libm.
inline float FastExp(float x) {
  float c = x < -104.0f ? -104.0f : x;
  c = c > 88.7228f ? 88.7228f : c;
  // e^c = 2^n * e^r with n = round(c / ln 2), |r| <= ln(2)/2. Adding
  // 1.5 * 2^23 rounds to an integer held in the low mantissa bits.
  const float shifted = c * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  float r = c - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  // Minimax polynomial for e^r on [-ln2/2, ln2/2].
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n as two normal factors, so n may run from -150 (subnormal results) to 128.
  const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
  const int32_t n1 = ni >> 1;
  const int32_t n2 = ni - n1;
  float result = p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
  result = x > 88.7228f ? std::numeric_limits<float>::infinity() : result;
  return x < -104.0f ? 0.0f : result;
}

inline float FastTanh(float x) {
  const float ax = std::fabs(x);
  // Near 0: odd polynomial (1 - 2/(e^2x + 1) would cancel).
  const float z = x * x;
  const float small =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
        1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
  const float big = std::copysign(1.0f - 2.0f / (FastExp(2.0f * ax) + 1.0f), x);
  return ax < 0.625f ? small : big;
}

template <typename T> struct NegF { static T Apply(T x) { return -x; } };
template <typename T> struct SquareF { static T Apply(T x) { return x * x; } };
template <typename T> struct SqrtF { static T Apply(T x) { return std::sqrt(x); } };
template <typename T> struct RsqrtF { static T Apply(T x) { return T(1) / std::sqrt(x); } };
template <typename T> struct ExpF { static T Apply(T x) { return std::exp(x); } };
template <> struct ExpF<float> { static float Apply(float x) { return FastExp(x); } };
template <typename T> struct LogF { static T Apply(T x) { return std::log(x); } };
template <typename T> struct TanhF { static T Apply(T x) { return std::tanh(x); } };
template <> struct TanhF<float> { static float Apply(float x) { return FastTanh(x); } };
template <typename T> struct SigmoidF {
  static T Apply(T x) { return T(1) / (T(1) + std::exp(-x)); }
};
template <> struct SigmoidF<float> {
  static float Apply(float x) { return 1.0f / (1.0f + FastExp(-x)); }
};
template <typename T> struct ReciprocalF { static T Apply(T x) { return T(1) / x; } };
template <typename T> struct AbsF { static T Apply(T x) { return x < T(0) ? -x : x; } };
template <typename T> struct SignF {
  static T Apply(T x) {
    if (x != x) return x;  // NaN stays NaN
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  }
};

// ---------------------------------------------------------------------------
// Unary and binary kernels.

template <typename T, typename F>
class UnaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ParallelRange(ctx, x.NumElements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = F::Apply(in[i]);
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename T, typename Out, typename F>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.shape() == y.shape()) {
      ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, x.shape(), x.NumElements(), x, y));
      const T* xd = x.data<T>();
      const T* yd = y.data<T>();
      ParallelRange(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        internal::BinaryLoopSame<F>(xd + b, yd + b, out + b, e - b);
      });
      return absl::OkStatus();
    }
    if (y.NumElements() == 1 && y.dims() <= x.dims()) {
      ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, x.shape(), x.NumElements(), x, y));
      const T* xd = x.data<T>();
      const T yv = *y.data<T>();
      ParallelRange(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        internal::BinaryLoopScalarY<F>(xd + b, yv, out + b, e - b);
      });
      return absl::OkStatus();
    }
    if (x.NumElements() == 1 && x.dims() <= y.dims()) {
      ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, y.shape(), y.NumElements(), x, y));
      const T xv = *x.data<T>();
      const T* yd = y.data<T>();
      ParallelRange(ctx, y.NumElements(), 1, [&](int64_t b, int64_t e) {
        internal::BinaryLoopScalarX<F>(xv, yd + b, out + b, e - b);
      });
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(internal::BroadcastPlan<2> plan,
                     internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
    const int64_t n = plan.out_shape.num_elements();
    ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, plan.out_shape, n, x, y));
    if (n == 0) return absl::OkStatus();
    const T* xd = x.data<T>();
    const T* yd = y.data<T>();
    ParallelRange(ctx, plan.rows(), plan.inner(), [&](int64_t b, int64_t e) {
      internal::BinaryBroadcastRows<F>(plan, xd, yd, out, b, e);
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }

 private:
  // Reuses the buffer of an input as large as the output when the types
  // match: such an input is read at exactly the output's offsets.
  static absl::StatusOr<Out*> AllocateOutput(OpKernelContext* ctx, const TensorShape& shape,
                                             int64_t n, const Tensor& x, const Tensor& y) {
    Tensor* out;
    if (std::is_same_v<T, Out> && x.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(0, 0, shape));
    } else if (std::is_same_v<T, Out> && y.NumElements() == n) {
      ASSIGN_OR_RETURN(out, ctx->forward_input_or_allocate_output(1, 0, shape));
    } else {
      ASSIGN_OR_RETURN(out, ctx->allocate_output(0, shape));
    }
    return out->data<Out>();
  }
};

// Integer division: a zero divisor is an error, not a crash.
template <typename T, typename F>
class IntegerDivOp : public BinaryOp<T, T, F> {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(1);
    const T* yd = y.data<T>();
    bool has_zero = false;
    for (int64_t i = 0; i < y.NumElements(); ++i) has_zero |= yd[i] == T(0);
    if (has_zero) return absl::InvalidArgumentError("Integer division by zero");
    return BinaryOp<T, T, F>::Compute(ctx);
  }
};

// ---------------------------------------------------------------------------
// Select, SelectV2, AddN, Cast.

template <typename T>
class SelectOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (t.shape() != e.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("'t' and 'e' must have the same shape: ",
                                                     t.shape().DebugString(), " vs. ",
                                                     e.shape().DebugString()));
    }
    if (cond.dims() == 0) {
      ctx->set_output(0, *cond.data<bool>() ? t : e);
      return absl::OkStatus();
    }
    const bool same = cond.shape() == t.shape();
    const bool rows = cond.dims() == 1 && t.dims() >= 2 && cond.dim_size(0) == t.dim_size(0);
    if (!same && !rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "condition of shape ", cond.shape().DebugString(),
          " must be a scalar, have the shape of t and e ", t.shape().DebugString(),
          ", or be a vector of their first dimension"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
    const bool* c = cond.data<bool>();
    const T* td = t.data<T>();
    const T* ed = e.data<T>();
    T* o = out->data<T>();
    const int64_t n = t.NumElements();
    if (same) {
      for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? td[i] : ed[i];
      return absl::OkStatus();
    }
    const int64_t rows_n = cond.dim_size(0);
    const int64_t width = rows_n == 0 ? 0 : n / rows_n;
    for (int64_t r = 0; r < rows_n; ++r) {
      const T* src = (c[r] ? td : ed) + r * width;
      if (src != o + r * width) std::copy(src, src + width, o + r * width);
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
class SelectV2Op : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (cond.dims() == 0 && t.shape() == e.shape()) {
      ctx->set_output(0, *cond.data<bool>() ? t : e);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(internal::BroadcastPlan<3> plan,
                     internal::MakeBroadcastPlan<3>({&cond.shape(), &t.shape(), &e.shape()}));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const bool* c = cond.data<bool>();
    const T* td = t.data<T>();
    const T* ed = e.data<T>();
    T* o = out->data<T>();
    const int64_t n = plan.inner();
    const auto& s = plan.inner_strides();
    internal::ForEachRow(plan, 0, plan.rows(), [&](int64_t row, const std::array<int64_t, 3>& off) {
      T* orow = o + row * n;
      const bool* cr = c + off[0];
      const T* tr = td + off[1];
      const T* er = ed + off[2];
      if (s[0] != 0 && s[1] != 0 && s[2] != 0) {
        for (int64_t i = 0; i < n; ++i) orow[i] = cr[i] ? tr[i] : er[i];
      } else {
        for (int64_t i = 0; i < n; ++i) orow[i] = cr[i * s[0]] ? tr[i * s[1]] : er[i * s[2]];
      }
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
class AddNOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    const int num = ctx->num_inputs();
    for (int k = 1; k < num; ++k) {
      if (ctx->input(k).shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddN inputs must have the same shape: input 0 has shape ",
            first.shape().DebugString(), ", input ", k, " has shape ",
            ctx->input(k).shape().DebugString()));
      }
    }
    if (num == 1) {
      ctx->set_output(0, first);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, first.shape()));
    T* o = out->data<T>();
    std::vector<const T*> in(num);
    for (int k = 0; k < num; ++k) in[k] = ctx->input(k).template data<T>();
    constexpr int64_t kChunk = 4096;  // keeps the output chunk in L1 across inputs
    ParallelRange(ctx, first.NumElements(), num, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += kChunk) {
        const int64_t e = std::min(end, b + kChunk);
        const T* a0 = in[0];
        const T* a1 = in[1];
        for (int64_t i = b; i < e; ++i) o[i] = a0[i] + a1[i];
        for (int k = 2; k < num; ++k) {
          const T* ak = in[k];
          for (int64_t i = b; i < e; ++i) o[i] += ak[i];
        }
      }
    });
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename Dst, typename Src>
inline Dst ConvertValue(Src v) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    // Defined results for NaN and out-of-range values: 0 and saturation.
    if (!(v == v)) return Dst(0);
    if (v <= static_cast<Src>(std::numeric_limits<Dst>::lowest())) {
      return std::numeric_limits<Dst>::lowest();
    }
    if (v >= static_cast<Src>(std::numeric_limits<Dst>::max())) {
      return std::numeric_limits<Dst>::max();
    }
    return static_cast<Dst>(v);
  } else {
    return static_cast<Dst>(v);
  }
}

template <typename Src, typename Dst>
class CastOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if constexpr (std::is_same_v<Src, Dst>) {
      ctx->set_output(0, x);
    } else {
      ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
      const Src* in = x.data<Src>();
      Dst* out = y->data<Dst>();
      ParallelRange(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = ConvertValue<Dst>(in[i]);
      });
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// Reductions.

template <typename T> struct SumR {
  static T Init() { return T(0); }
  static T Combine(T a, T b) { return a + b; }
};
template <typename T> struct ProdR {
  static T Init() { return T(1); }
  static T Combine(T a, T b) { return a * b; }
};
template <typename T> struct MaxR {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  static T Combine(T a, T b) { return a < b ? b : a; }
};
template <typename T> struct MinR {
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  static T Combine(T a, T b) { return b < a ? b : a; }
};

// Reduces n contiguous values with independent lanes so the loop vectorizes.
template <typename T, typename R>
T ReduceContiguous(const T* x, int64_t n) {
  constexpr int kLanes = 128 / sizeof(T);  // four AVX2 registers of partial results
  int64_t i = 0;
  T result = R::Init();
  if (n >= kLanes) {
    T acc[kLanes];
    for (int l = 0; l < kLanes; ++l) acc[l] = x[l];
    for (i = kLanes; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) acc[l] = R::Combine(acc[l], x[i + l]);
    }
    for (int l = 0; l < kLanes; ++l) result = R::Combine(result, acc[l]);
  }
  for (; i < n; ++i) result = R::Combine(result, x[i]);
  return result;
}

// The input's dimensions merged into alternating kept / reduced groups
// (size-1 dimensions dropped), and the output shape.
struct ReducePlan {
  TensorShape out_shape;
  std::vector<int64_t> groups;
  bool first_reduced = false;  // groups[0] is a reduced group
  int64_t reduced_count = 1;   // input elements per output element
};

absl::StatusOr<ReducePlan> MakeReducePlan(const TensorShape& in, const Tensor& axes,
                                          bool keep_dims) {
  if (axes.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduction axes must be a scalar or vector, got shape ", axes.shape().DebugString()));
  }
  const int rank = in.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t k = 0; k < axes.NumElements(); ++k) {
    const int64_t a = axes.dtype() == DT_INT64 ? axes.data<int64_t>()[k]
                                               : int64_t{axes.data<int32_t>()[k]};
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction dimension ", a, " for input of shape ",
                       in.DebugString(), " (rank ", rank, ")"));
    }
    reduced[a < 0 ? a + rank : a] = true;
  }
  ReducePlan plan;
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dim(i);
    if (reduced[i]) {
      plan.reduced_count *= d;
      if (keep_dims) plan.out_shape.AddDim(1);
    } else {
      plan.out_shape.AddDim(d);
    }
    if (d == 1) continue;
    const int kind = reduced[i] ? 1 : 0;
    if (kind == last_kind) {
      plan.groups.back() *= d;
    } else {
      if (plan.groups.empty()) plan.first_reduced = reduced[i];
      plan.groups.push_back(d);
      last_kind = kind;
    }
  }
  return plan;
}

template <typename T, typename R, bool kMean>
class ReduceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(keep_dims_, ctx.GetAttr<bool>("keep_dims"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(ReducePlan plan, MakeReducePlan(x.shape(), ctx->input(1), keep_dims_));
    const bool reduces = plan.first_reduced || plan.groups.size() > 1;
    if (!reduces && x.NumElements() > 0) {
      // Only size-1 dimensions are reduced: the output is the input reshaped.
      ASSIGN_OR_RETURN(Tensor same, x.Reshaped(plan.out_shape));
      ctx->set_output(0, std::move(same));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    T* o = out->data<T>();
    const int64_t out_n = out->NumElements();
    if (x.NumElements() == 0) {
      std::fill(o, o + out_n, R::Init());
    } else if (plan.groups.size() == 1) {
      *o = ReduceAll(ctx, x.data<T>(), x.NumElements());
    } else if (plan.groups.size() == 2 && !plan.first_reduced) {
      ReduceRows(ctx, x.data<T>(), plan.groups[0], plan.groups[1], o);
    } else if (plan.groups.size() == 2) {
      ReduceColumns(ctx, x.data<T>(), plan.groups[0], plan.groups[1], o);
    } else {
      ReduceGeneral(plan, x.data<T>(), o, out_n);
    }
    if constexpr (kMean) {
      if (std::is_floating_point_v<T> || plan.reduced_count > 0) {
        const T count = static_cast<T>(plan.reduced_count);
        for (int64_t i = 0; i < out_n; ++i) o[i] /= count;
      }
    }
    return absl::OkStatus();
  }

 private:
  static T ReduceAll(OpKernelContext* ctx, const T* x, int64_t n) {
    constexpr int64_t kBlock = int64_t{1} << 15;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    std::vector<T> partial(blocks);
    ParallelRange(ctx, blocks, kBlock, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        partial[k] = ReduceContiguous<T, R>(x + k * kBlock, std::min(kBlock, n - k * kBlock));
      }
    });
    return ReduceContiguous<T, R>(partial.data(), blocks);
  }

  // x is [rows, width]; o[r] = reduce of row r.
  static void ReduceRows(OpKernelContext* ctx, const T* x, int64_t rows, int64_t width, T* o) {
    ParallelRange(ctx, rows, width, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) o[r] = ReduceContiguous<T, R>(x + r * width, width);
    });
  }

  // x is [rows, width]; o[j] = reduce of column j. Each worker takes a slice
  // of columns and streams through the rows.
  static void ReduceColumns(OpKernelContext* ctx, const T* x, int64_t rows, int64_t width,
                            T* o) {
    const int64_t col_block = 64;
    const int64_t units = (width + col_block - 1) / col_block;
    ParallelRange(ctx, units, rows * col_block, [&](int64_t b, int64_t e) {
      const int64_t j0 = b * col_block;
      const int64_t j1 = std::min(width, e * col_block);
      T* ob = o + j0;
      const int64_t w = j1 - j0;
      std::copy(x + j0, x + j1, ob);
      for (int64_t r = 1; r < rows; ++r) {
        const T* xr = x + r * width + j0;
        for (int64_t j = 0; j < w; ++j) ob[j] = R::Combine(ob[j], xr[j]);
      }
    });
  }

  // Any alternation of kept and reduced groups: walk the input row by row
  // (the last group), accumulating into the output at the row's offset.
  static void ReduceGeneral(const ReducePlan& plan, const T* x, T* o, int64_t out_n) {
    std::fill(o, o + out_n, R::Init());
    internal::BroadcastPlan<1> walk;
    walk.dims = plan.groups;
    walk.strides.resize(plan.groups.size());
    bool reduced = plan.first_reduced;
    for (size_t k = 0; k < plan.groups.size(); ++k, reduced = !reduced) {
      walk.strides[k][0] = reduced ? 0 : 1;
    }
    int64_t running = 1;
    for (int k = static_cast<int>(plan.groups.size()) - 1; k >= 0; --k) {
      if (walk.strides[k][0] != 0) {
        walk.strides[k][0] = running;
        running *= plan.groups[k];
      }
    }
    const int64_t n = walk.inner();
    const bool inner_reduced = walk.inner_strides()[0] == 0;
    internal::ForEachRow(walk, 0, walk.rows(), [&](int64_t row, const std::array<int64_t, 1>& off) {
      const T* xr = x + row * n;
      T* orow = o + off[0];
      if (inner_reduced) {
        *orow = R::Combine(*orow, ReduceContiguous<T, R>(xr, n));
      } else {
        for (int64_t i = 0; i < n; ++i) orow[i] = R::Combine(orow[i], xr[i]);
      }
    });
  }

  bool keep_dims_ = false;
};

// ---------------------------------------------------------------------------
// ArgMax.

// Index of the first largest of n >= 1 contiguous values: a vectorized max,
// then a search for it (a plain scan when NaNs hide it).
template <typename T>
int64_t ArgMaxContiguous(const T* x, int64_t n) {
  const T best = ReduceContiguous<T, MaxR<T>>(x, n);
  for (int64_t r = 0; r < n; ++r) {
    if (x[r] == best) return r;
  }
  int64_t arg = 0;
  for (int64_t r = 1; r < n; ++r) {
    if (x[r] > x[arg]) arg = r;
  }
  return arg;
}

template <typename T, typename Idx>
class ArgMaxOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& dim_t = ctx->input(1);
    if (dim_t.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension must be a scalar, got shape ", dim_t.shape().DebugString()));
    }
    int64_t dim = dim_t.dtype() == DT_INT64 ? *dim_t.data<int64_t>()
                                           : int64_t{*dim_t.data<int32_t>()};
    const int rank = x.dims();
    if (dim < -rank || dim >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("ArgMax dimension ", dim,
                                                     " is out of range for input of shape ",
                                                     x.shape().DebugString()));
    }
    if (dim < 0) dim += rank;
    const int64_t n = x.dim_size(static_cast<int>(dim));
    TensorShape out_shape = x.shape();
    out_shape.RemoveDim(static_cast<int>(dim));
    if (n == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ArgMax over dimension ", dim, " of size 0 (input shape ", x.shape().DebugString(),
          ")"));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < dim; ++i) outer *= x.dim_size(i);
    for (int i = static_cast<int>(dim) + 1; i < rank; ++i) inner *= x.dim_size(i);
    const T* xd = x.data<T>();
    Idx* o = out->data<Idx>();
    std::vector<T> best(inner);
    for (int64_t a = 0; a < outer; ++a) {
      const T* xa = xd + a * n * inner;
      Idx* oa = o + a * inner;
      if (inner == 1) {
        *oa = static_cast<Idx>(ArgMaxContiguous(xa, n));
        continue;
      }
      std::copy(xa, xa + inner, best.begin());
      std::fill(oa, oa + inner, Idx{0});
      for (int64_t r = 1; r < n; ++r) {
        const T* xr = xa + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (xr[j] > best[j]) {
            best[j] = xr[j];
            oa[j] = static_cast<Idx>(r);
          }
        }
      }
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// MatMul.

// C[m,n] = op(A) op(B), row-major, leading dimensions as stored.
void Gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
              n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
}
void Gemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b,
          int ldb, double* c) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
              n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
}
template <typename T>
void Gemm(bool ta, bool tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb,
          T* c) {
  std::fill(c, c + int64_t{m} * n, T(0));
  for (int i = 0; i < m; ++i) {
    T* ci = c + int64_t{i} * n;
    for (int p = 0; p < k; ++p) {
      const T av = ta ? a[int64_t{p} * lda + i] : a[int64_t{i} * lda + p];
      if (tb) {
        for (int j = 0; j < n; ++j) ci[j] += av * b[int64_t{j} * ldb + p];
      } else {
        const T* bp = b + int64_t{p} * ldb;
        for (int j = 0; j < n; ++j) ci[j] += av * bp[j];
      }
    }
  }
}

template <typename T>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(ta_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(tb_, ctx.GetAttr<bool>("transpose_b"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.dims() != 2 || b.dims() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("MatMul needs two matrices, got shapes ",
                                                     a.shape().DebugString(), " and ",
                                                     b.shape().DebugString()));
    }
    const int64_t m = a.dim_size(ta_ ? 1 : 0);
    const int64_t k = a.dim_size(ta_ ? 0 : 1);
    const int64_t kb = b.dim_size(tb_ ? 1 : 0);
    const int64_t n = b.dim_size(tb_ ? 0 : 1);
    if (k != kb) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Matrix size-incompatible: In[0]: ", a.shape().DebugString(), " (transpose_a=", ta_,
          "), In[1]: ", b.shape().DebugString(), " (transpose_b=", tb_, ")"));
    }
    constexpr int64_t kMaxDim = std::numeric_limits<int>::max();
    if (m > kMaxDim || n > kMaxDim || k > kMaxDim || a.dim_size(1) > kMaxDim ||
        b.dim_size(1) > kMaxDim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MatMul dimensions exceed the BLAS limit: ", a.shape().DebugString(), " x ",
          b.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    if (m == 0 || n == 0) return absl::OkStatus();
    T* c = out->data<T>();
    if (k == 0) {
      std::fill(c, c + m * n, T(0));
      return absl::OkStatus();
    }
    Gemm(ta_, tb_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), a.data<T>(),
         static_cast<int>(a.dim_size(1)), b.data<T>(), static_cast<int>(b.dim_size(1)), c);
    return absl::OkStatus();
  }

 private:
  bool ta_ = false;
  bool tb_ = false;
};

// ---------------------------------------------------------------------------
// Registration.

template <typename T>
KernelDef Cpu(const char* op) {
  return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value);
}

template <template <typename> class F, typename... Ts>
void RegisterUnary(KernelRegistry* k, const char* op) {
  (k->Register<UnaryOp<Ts, F<Ts>>>(Cpu<Ts>(op)), ...);
}

template <template <typename> class F, typename... Ts>
void RegisterBinary(KernelRegistry* k, const char* op) {
  (k->Register<BinaryOp<Ts, Ts, F<Ts>>>(Cpu<Ts>(op)), ...);
}

template <template <typename> class F, typename... Ts>
void RegisterComparison(KernelRegistry* k, const char* op) {
  (k->Register<BinaryOp<Ts, bool, F<Ts>>>(Cpu<Ts>(op)), ...);
}

template <template <typename> class R, bool kMean, typename... Ts>
void RegisterReduction(KernelRegistry* k, const char* op) {
  (k->Register<ReduceOp<Ts, R<Ts>, kMean>>(Cpu<Ts>(op)), ...);
}

template <typename Src, typename... Dsts>
void RegisterCastFrom(KernelRegistry* k) {
  (k->Register<CastOp<Src, Dsts>>(KernelDef("Cast", kDeviceTypeCpu)
                                      .TypeConstraint("SrcT", DataTypeToEnum<Src>::value)
                                      .TypeConstraint("DstT", DataTypeToEnum<Dsts>::value)),
   ...);
}

template <typename... Ts>
void RegisterCasts(KernelRegistry* k) {
  (RegisterCastFrom<Ts, Ts...>(k), ...);
}

template <typename T, typename... Idxs>
void RegisterArgMaxFor(KernelRegistry* k) {
  (k->Register<ArgMaxOp<T, Idxs>>(
       Cpu<T>("ArgMax").TypeConstraint("output_type", DataTypeToEnum<Idxs>::value)),
   ...);
}

void RegisterElementwiseKernels(KernelRegistry* k) {
  RegisterBinary<AddF, float, double, int32_t, int64_t>(k, "Add");
  RegisterBinary<AddF, float, double, int32_t, int64_t>(k, "AddV2");
  RegisterBinary<SubF, float, double, int32_t, int64_t>(k, "Sub");
  RegisterBinary<MulF, float, double, int32_t, int64_t>(k, "Mul");
  RegisterBinary<DivF, float, double>(k, "RealDiv");
  RegisterBinary<FloorDivF, float, double>(k, "FloorDiv");
  k->Register<IntegerDivOp<int32_t, FloorDivF<int32_t>>>(Cpu<int32_t>("FloorDiv"));
  k->Register<IntegerDivOp<int64_t, FloorDivF<int64_t>>>(Cpu<int64_t>("FloorDiv"));
  RegisterBinary<MaxF, float, double, int32_t, int64_t>(k, "Maximum");
  RegisterBinary<MinF, float, double, int32_t, int64_t>(k, "Minimum");
  RegisterBinary<PowF, float, double, int32_t, int64_t>(k, "Pow");
  RegisterComparison<EqualF, float, double, int32_t, int64_t, bool>(k, "Equal");
  RegisterComparison<NotEqualF, float, double, int32_t, int64_t, bool>(k, "NotEqual");
  RegisterComparison<GreaterF, float, double, int32_t, int64_t>(k, "Greater");
  RegisterComparison<GreaterEqualF, float, double, int32_t, int64_t>(k, "GreaterEqual");
  RegisterComparison<LessF, float, double, int32_t, int64_t>(k, "Less");
  RegisterComparison<LessEqualF, float, double, int32_t, int64_t>(k, "LessEqual");
  RegisterBinary<TanhGradF, float, double>(k, "TanhGrad");
  RegisterBinary<SigmoidGradF, float, double>(k, "SigmoidGrad");
  RegisterBinary<SqrtGradF, float, double>(k, "SqrtGrad");
  RegisterBinary<RsqrtGradF, float, double>(k, "RsqrtGrad");
  RegisterBinary<ReciprocalGradF, float, double>(k, "ReciprocalGrad");

  RegisterUnary<NegF, float, double, int32_t, int64_t>(k, "Neg");
  RegisterUnary<SquareF, float, double, int32_t, int64_t>(k, "Square");
  RegisterUnary<AbsF, float, double, int32_t, int64_t>(k, "Abs");
  RegisterUnary<SignF, float, double, int32_t, int64_t>(k, "Sign");
  RegisterUnary<SqrtF, float, double>(k, "Sqrt");
  RegisterUnary<RsqrtF, float, double>(k, "Rsqrt");
  RegisterUnary<ExpF, float, double>(k, "Exp");
  RegisterUnary<LogF, float, double>(k, "Log");
  RegisterUnary<TanhF, float, double>(k, "Tanh");
  RegisterUnary<SigmoidF, float, double>(k, "Sigmoid");
  RegisterUnary<ReciprocalF, float, double>(k, "Reciprocal");
}

template <typename... Ts>
void RegisterSelectAndAddN(KernelRegistry* k) {
  (k->Register<SelectOp<Ts>>(Cpu<Ts>("Select")), ...);
  (k->Register<SelectV2Op<Ts>>(Cpu<Ts>("SelectV2")), ...);
}

}  // namespace

void RegisterMathKernels(KernelRegistry* k) {
  RegisterElementwiseKernels(k);
  RegisterSelectAndAddN<float, double, int32_t, int64_t, bool>(k);
  k->Register<AddNOp<float>>(Cpu<float>("AddN"));
  k->Register<AddNOp<double>>(Cpu<double>("AddN"));
  k->Register<AddNOp<int32_t>>(Cpu<int32_t>("AddN"));
  k->Register<AddNOp<int64_t>>(Cpu<int64_t>("AddN"));
  RegisterCasts<float, double, int32_t, int64_t, bool, uint8_t, int8_t>(k);

  RegisterReduction<SumR, false, float, double, int32_t, int64_t>(k, "Sum");
  RegisterReduction<SumR, true, float, double, int32_t, int64_t>(k, "Mean");
  RegisterReduction<ProdR, false, float, double, int32_t, int64_t>(k, "Prod");
  RegisterReduction<MaxR, false, float, double, int32_t, int64_t>(k, "Max");
  RegisterReduction<MinR, false, float, double, int32_t, int64_t>(k, "Min");

  RegisterArgMaxFor<float, int32_t, int64_t>(k);
  RegisterArgMaxFor<double, int32_t, int64_t>(k);
  RegisterArgMaxFor<int32_t, int32_t, int64_t>(k);
  RegisterArgMaxFor<int64_t, int32_t, int64_t>(k);

  k->Register<MatMulOp<float>>(Cpu<float>("MatMul"));
  k->Register<MatMulOp<double>>(Cpu<double>("MatMul"));
  k->Register<MatMulOp<int32_t>>(Cpu<int32_t>("MatMul"));
  k->Register<MatMulOp<int64_t>>(Cpu<int64_t>("MatMul"));
}

}  // namespace sluice
