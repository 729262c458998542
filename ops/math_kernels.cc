// CPU kernels of the element-wise math ops: unary and binary arithmetic,
// comparisons, the *Grad helpers, Select, SelectV2, AddN and Cast
// (definitions: math_ops.cc; reductions and ArgMax: reduction_kernels.cc;
// MatMul: matmul_kernels.cc).
//
// Element-wise kernels take fast paths for equal shapes and scalar operands
// and otherwise walk a merged broadcast plan (ops/internal/broadcast.h) whose
// innermost loop is contiguous or a scalar. Work over kParallelMinElements
// (internal/math_kernel_util.h) is split across the device's thread pool.
//
// The project builds at -O2, whose "very cheap" vectorizer skips loops that
// need a runtime aliasing check, and trapping-math keeps float selects (max,
// min, clamps) out of vector code. The element-wise loops here are written to
// vectorize, so this file asks for -O3 without FP traps (results unchanged:
// no code here reads FP exception flags). Set before any include so that
// every inline function in this translation unit agrees.
#pragma GCC optimize("O3", "no-trapping-math")

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/status_macros.h"
#include "ops/internal/broadcast.h"
#include "ops/internal/fast_math.h"
#include "ops/internal/math_kernel_checks.h"
#include "ops/internal/math_kernel_util.h"
#include "ops/math_ops.h"

namespace sluice {
namespace {

using internal::Cpu;
using internal::MaybeParallelFor;

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

// Float exp/tanh/sigmoid that vectorize (ops/internal/fast_math.h); double
// uses libm.
inline float FastExp(float x) { return internal::ExpApprox<float, int32_t>(x); }

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
    MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t begin, int64_t end) {
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
      MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        internal::BinaryLoopSame<F>(xd + b, yd + b, out + b, e - b);
      });
      return absl::OkStatus();
    }
    if (y.NumElements() == 1 && y.dims() <= x.dims()) {
      ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, x.shape(), x.NumElements(), x, y));
      const T* xd = x.data<T>();
      const T yv = *y.data<T>();
      MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        internal::BinaryLoopScalarY<F>(xd + b, yv, out + b, e - b);
      });
      return absl::OkStatus();
    }
    if (x.NumElements() == 1 && x.dims() <= y.dims()) {
      ASSIGN_OR_RETURN(Out * out, AllocateOutput(ctx, y.shape(), y.NumElements(), x, y));
      const T xv = *x.data<T>();
      const T* yd = y.data<T>();
      MaybeParallelFor(ctx, y.NumElements(), 1, [&](int64_t b, int64_t e) {
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
    MaybeParallelFor(ctx, plan.rows(), plan.inner(), [&](int64_t b, int64_t e) {
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
    ASSIGN_OR_RETURN(internal::SelectCondition mode, internal::CheckSelectShapes(cond, t, e));
    if (mode == internal::SelectCondition::kScalar) {
      ctx->set_output(0, *cond.data<bool>() ? t : e);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(1, 0, t.shape()));
    const bool* c = cond.data<bool>();
    const T* td = t.data<T>();
    const T* ed = e.data<T>();
    T* o = out->data<T>();
    const int64_t n = t.NumElements();
    if (mode == internal::SelectCondition::kSame) {
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
    RETURN_IF_ERROR(internal::CheckAddNShapes(*ctx));
    if (num == 1) {
      ctx->set_output(0, first);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, first.shape()));
    T* o = out->data<T>();
    std::vector<const T*> in(num);
    for (int k = 0; k < num; ++k) in[k] = ctx->input(k).template data<T>();
    constexpr int64_t kChunk = 4096;  // keeps the output chunk in L1 across inputs
    MaybeParallelFor(ctx, first.NumElements(), num, [&](int64_t begin, int64_t end) {
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
      MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = ConvertValue<Dst>(in[i]);
      });
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// Registration.

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

  internal::RegisterReductionKernels(k);
  internal::RegisterMatMulKernels(k);
}

}  // namespace sluice
