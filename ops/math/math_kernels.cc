// CPU kernels of the element-wise math ops: unary and binary arithmetic,
// comparisons, the *Grad helpers, Select, SelectV2, AddN, Cast and Range
// (definitions: math_ops.cc; reductions and ArgMax: reduction_kernels.cc;
// MatMul: matmul_kernels.cc).
//
// Element-wise kernels take fast paths for equal shapes and scalar operands
// and otherwise walk a merged broadcast plan (ops/math/internal/broadcast.h) whose
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
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/bf16_gemm.h"
#include "ops/math/cwise_kernels.h"
#include "ops/math/internal/broadcast.h"
#include "ops/math/internal/cpu_cwise_loops.h"
#include "ops/math/internal/fast_math.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "ops/math/internal/math_kernel_util.h"
#include "ops/math/math_ops.h"

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
// Maximum and Minimum give NaN when either operand is NaN, as TensorFlow
// does (a is returned when it is NaN; `b != b` picks a NaN b).
template <typename T> struct MaxF { static T Apply(T a, T b) { return a < b || b != b ? b : a; } };
template <typename T> struct MinF { static T Apply(T a, T b) { return b < a || b != b ? b : a; } };
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
template <typename T> struct SquaredDifferenceF {
  static T Apply(T a, T b) { const T d = a - b; return d * d; }
};
// The remainder with the divisor's sign (FloorMod; integer divisors were
// checked for zero by the kernel).
template <typename T> struct FloorModF {
  static T Apply(T a, T b) {
    T r;
    if constexpr (std::is_floating_point_v<T>) {
      r = std::fmod(a, b);
    } else {
      if (b == T(-1)) return T(0);
      r = a % b;
    }
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  }
};
// Integer division rounding toward zero (TruncateDiv, and Div of integers).
template <typename T> struct TruncateDivF {
  static T Apply(T a, T b) {
    if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    return a / b;
  }
};
// 0 where x is 0, whatever y is (TensorFlow's Xlogy, Xdivy, Xlog1py).
template <typename T> struct XlogyF {
  static T Apply(T x, T y) { return x == T(0) ? T(0) : x * std::log(y); }
};
template <typename T> struct XdivyF {
  static T Apply(T x, T y) { return x == T(0) ? T(0) : x / y; }
};
template <typename T> struct Xlog1pyF {
  static T Apply(T x, T y) { return x == T(0) ? T(0) : x * std::log1p(y); }
};
template <typename T> struct Atan2F {
  static T Apply(T y, T x) { return std::atan2(y, x); }
};
template <typename T> struct MulNoNanF {
  static T Apply(T a, T b) { return b == T(0) ? T(0) : a * b; }
};
// The remainder with the dividend's sign (Mod, TruncateMod; integer
// divisors were checked for zero by the kernel).
template <typename T> struct TruncateModF {
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      return b == T(-1) ? T(0) : a % b;
    }
  }
};
template <typename T> struct DivNoNanF {
  static T Apply(T a, T b) { return b == T(0) ? T(0) : a / b; }
};
template <typename T> struct EqualF { static bool Apply(const T& a, const T& b) { return a == b; } };
template <typename T> struct NotEqualF { static bool Apply(const T& a, const T& b) { return a != b; } };
template <typename T> struct GreaterF { static bool Apply(T a, T b) { return a > b; } };
template <typename T> struct GreaterEqualF { static bool Apply(T a, T b) { return a >= b; } };
template <typename T> struct LessF { static bool Apply(T a, T b) { return a < b; } };
template <typename T> struct LessEqualF { static bool Apply(T a, T b) { return a <= b; } };
template <typename T> struct LogicalAndF { static bool Apply(T a, T b) { return a && b; } };
template <typename T> struct LogicalOrF { static bool Apply(T a, T b) { return a || b; } };

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

// Float exp/tanh/sigmoid that vectorize (ops/math/internal/fast_math.h); double
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
template <typename T> struct LogicalNotF { static T Apply(T x) { return !x; } };
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
template <typename T> struct FloorF { static T Apply(T x) { return std::floor(x); } };
template <typename T> struct CeilF { static T Apply(T x) { return std::ceil(x); } };
// Halves to even, as TensorFlow's Round (the default rounding mode).
template <typename T> struct RoundF { static T Apply(T x) { return std::nearbyint(x); } };
template <typename T> struct Log1pF { static T Apply(T x) { return std::log1p(x); } };
template <typename T> struct Expm1F { static T Apply(T x) { return std::expm1(x); } };
// log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0.
template <typename T> struct SoftplusF {
  static T Apply(T x) { return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
};
template <typename T> struct SoftsignF {
  static T Apply(T x) { return x / (T(1) + (x < T(0) ? -x : x)); }
};
template <typename T> struct ErfF { static T Apply(T x) { return std::erf(x); } };
template <typename T> struct ErfcF { static T Apply(T x) { return std::erfc(x); } };
template <typename T> struct SinF { static T Apply(T x) { return std::sin(x); } };
template <typename T> struct TanF { static T Apply(T x) { return std::tan(x); } };
template <typename T> struct SinhF { static T Apply(T x) { return std::sinh(x); } };
template <typename T> struct CoshF { static T Apply(T x) { return std::cosh(x); } };
template <typename T> struct AsinF { static T Apply(T x) { return std::asin(x); } };
template <typename T> struct AcosF { static T Apply(T x) { return std::acos(x); } };
template <typename T> struct AtanF { static T Apply(T x) { return std::atan(x); } };
template <typename T> struct AsinhF { static T Apply(T x) { return std::asinh(x); } };
template <typename T> struct AcoshF { static T Apply(T x) { return std::acosh(x); } };
template <typename T> struct AtanhF { static T Apply(T x) { return std::atanh(x); } };
template <typename T> struct RintF { static T Apply(T x) { return std::nearbyint(x); } };
template <typename T> struct CosF { static T Apply(T x) { return std::cos(x); } };
// Floating point: the sign bit cleared (TensorFlow's fabs: Abs(-0.0) is +0.0).
template <typename T> struct AbsF {
  static T Apply(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else {
      return x < T(0) ? -x : x;
    }
  }
};
template <typename T> struct SignF {
  static T Apply(T x) {
    if (x != x) return x;  // NaN stays NaN
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  }
};

// ---------------------------------------------------------------------------
// The CPU's arithmetic for the shells of ops/math/cwise_kernels.h: one loop per
// (type, functor), reached through the descriptor the kernel was registered
// with.

using internal::BinaryLoop;
using internal::IntegerDivLoop;
using internal::UnaryLoop;

template <typename T>
absl::Status AddNLoop(OpKernelContext* ctx, Tensor* out) {
  const int num = ctx->num_inputs();
  T* o = out->data<T>();
  std::vector<const T*> in(num);
  for (int k = 0; k < num; ++k) in[k] = ctx->input(k).template data<T>();
  constexpr int64_t kChunk = 4096;  // keeps the output chunk in L1 across inputs
  MaybeParallelFor(ctx, out->NumElements(), num, [&](int64_t begin, int64_t end) {
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

// Select with cond of t's shape (kSame) or one per row (kRows); a scalar
// cond never gets here (the shell hands t or e through).
template <typename T>
absl::Status SelectLoop(internal::SelectCondition mode, const Tensor& cond, const Tensor& t,
                        const Tensor& e, Tensor* out) {
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

template <typename T>
absl::Status SelectV2Loop(const internal::BroadcastPlan<3>& plan, const Tensor& cond,
                          const Tensor& t, const Tensor& e, Tensor* out) {
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

template <typename T>
constexpr bool kIsFloat16 = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename Dst, typename Src>
inline Dst ConvertValue(Src v) {
  if constexpr (kIsFloat16<Src>) {
    return ConvertValue<Dst>(v.ToFloat());
  } else if constexpr (kIsFloat16<Dst>) {
    // Through float, as TensorFlow's (Eigen's) conversions.
    return Dst::FromFloat(ConvertValue<float>(v));
  } else if constexpr (std::is_same_v<Dst, bool>) {
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
absl::Status CastLoop(OpKernelContext* ctx, const Tensor& x, Tensor* y) {
  const Src* in = x.data<Src>();
  Dst* out = y->data<Dst>();
  MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = ConvertValue<Dst>(in[i]);
  });
  return absl::OkStatus();
}

struct CpuCwiseImpl : internal::CpuElementwiseImpl {
  using AddNFn = absl::Status (*)(OpKernelContext*, Tensor*);
  struct SelectFn {
    absl::Status (*select)(internal::SelectCondition, const Tensor&, const Tensor&, const Tensor&,
                           Tensor*);
    absl::Status (*select_v2)(const internal::BroadcastPlan<3>&, const Tensor&, const Tensor&,
                              const Tensor&, Tensor*);
  };
  using CastFn = absl::Status (*)(OpKernelContext*, const Tensor&, Tensor*);

  // The condition is in host memory: a scalar one hands t or e through.
  static constexpr bool kConditionOnHost = true;

  static absl::Status AddN(OpKernelContext* ctx, AddNFn fn, Tensor* out) { return fn(ctx, out); }
  static absl::Status Select(OpKernelContext*, const SelectFn& fn, internal::SelectCondition mode,
                             const Tensor& cond, const Tensor& t, const Tensor& e, Tensor* out) {
    return fn.select(mode, cond, t, e, out);
  }
  static absl::Status SelectV2(OpKernelContext*, const SelectFn& fn,
                               const internal::BroadcastPlan<3>& plan, const Tensor& cond,
                               const Tensor& t, const Tensor& e, Tensor* out) {
    return fn.select_v2(plan, cond, t, e, out);
  }
  static absl::Status Cast(OpKernelContext* ctx, CastFn fn, const Tensor& x, Tensor* y) {
    return fn(ctx, x, y);
  }
};

// ---------------------------------------------------------------------------
// Registration.

using Impl = CpuCwiseImpl;

template <template <typename> class F, typename... Ts>
void RegisterUnary(KernelRegistry* k, const char* op) {
  internal::RegisterCpuUnary<F, Ts...>(k, op);
}

template <template <typename> class F, typename... Ts>
void RegisterBinary(KernelRegistry* k, const char* op) {
  internal::RegisterCpuBinary<F, Ts...>(k, op);
}

template <template <typename> class F, typename... Ts>
void RegisterComparison(KernelRegistry* k, const char* op) {
  (k->Register(Cpu<Ts>(op),
               [] {
                 return std::make_unique<BinaryOp<Impl>>(&BinaryLoop<Ts, bool, F<Ts>>,
                                                         /*same_type=*/std::is_same_v<Ts, bool>);
               }),
   ...);
}

template <template <typename> class F, typename... Ts>
void RegisterIntegerDiv(KernelRegistry* k, const char* op) {
  internal::RegisterCpuIntegerDiv<F, Ts...>(k, op);
}

// IsNan, IsInf, IsFinite: a bool per element.
template <typename T, bool (*kTest)(T)>
class PredicateOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const T* in = x.data<T>();
    bool* out = y->data<bool>();
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = kTest(in[i]);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};
template <typename T> bool IsNanOf(T x) { return std::isnan(x); }
template <typename T> bool IsInfOf(T x) { return std::isinf(x); }
template <typename T> bool IsFiniteOf(T x) { return std::isfinite(x); }

template <typename... Ts>
void RegisterPredicates(KernelRegistry* k) {
  (k->Register<PredicateOp<Ts, &IsNanOf<Ts>>>(Cpu<Ts>("IsNan")), ...);
  (k->Register<PredicateOp<Ts, &IsInfOf<Ts>>>(Cpu<Ts>("IsInf")), ...);
  (k->Register<PredicateOp<Ts, &IsFiniteOf<Ts>>>(Cpu<Ts>("IsFinite")), ...);
}

// ClipByValue(t, min, max): min and max are scalars or t's shape.
template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const char* names[] = {"", "clip_value_min", "clip_value_max"};
    for (int i = 1; i < 3; ++i) {
      const Tensor& b = ctx->input(i);
      if (b.dims() != 0 && b.shape() != t.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ClipByValue: ", names[i], " must be a scalar or have t's shape ", t.shape().DebugString(),
            ", got ", b.shape().DebugString()));
      }
    }
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, t.shape()));
    const T* in = t.data<T>();
    const T* l = lo.data<T>();
    const T* h = hi.data<T>();
    const bool l_scalar = lo.dims() == 0, h_scalar = hi.dims() == 0;
    T* o = out->data<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const T low = l[l_scalar ? 0 : i], high = h[h_scalar ? 0 : i];
      const T v = in[i] < low ? low : in[i];
      o[i] = high < v ? high : v;
    }
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

// float <-> bfloat16 (mixed precision's casts), by the vectorized
// conversions of ops/internal/bf16_gemm.h.
absl::Status CastToBf16(OpKernelContext* ctx, const Tensor& x, Tensor* y) {
  const float* in = x.data<float>();
  BFloat16* out = y->data<BFloat16>();
  MaybeParallelFor(ctx, x.NumElements(), 1,
                   [&](int64_t b, int64_t e) { internal::FloatToBf16(in + b, out + b, e - b); });
  return absl::OkStatus();
}

absl::Status CastFromBf16(OpKernelContext* ctx, const Tensor& x, Tensor* y) {
  const BFloat16* in = x.data<BFloat16>();
  float* out = y->data<float>();
  MaybeParallelFor(ctx, x.NumElements(), 1,
                   [&](int64_t b, int64_t e) { internal::Bf16ToFloat(in + b, out + b, e - b); });
  return absl::OkStatus();
}

// DataTypeToEnum, and the unsigned words it has no entry for.
template <typename T>
constexpr DataType CastTypeEnum() {
  if constexpr (std::is_same_v<T, uint32_t>) {
    return ::tensorflow::DT_UINT32;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return ::tensorflow::DT_UINT64;
  } else {
    return DataTypeToEnum<T>::value;
  }
}

template <typename Src, typename Dst>
void RegisterCast(KernelRegistry* k, Impl::CastFn fn) {
  k->Register(KernelDef("Cast", kDeviceTypeCpu)
                  .TypeConstraint("SrcT", CastTypeEnum<Src>())
                  .TypeConstraint("DstT", CastTypeEnum<Dst>()),
              [fn] { return std::make_unique<CastOp<Impl>>(fn); });
}

template <typename Src, typename... Dsts>
void RegisterCastFrom(KernelRegistry* k) {
  (RegisterCast<Src, Dsts>(k, &CastLoop<Src, Dsts>), ...);
}

// Casts from each of Srcs to each of Dsts.
template <typename... Dsts>
struct RegisterCastsTo {
  template <typename... Srcs>
  static void From(KernelRegistry* k) {
    (RegisterCastFrom<Srcs, Dsts...>(k), ...);
  }
};

template <typename... Ts>
void RegisterCasts(KernelRegistry* k) {
  (RegisterCastFrom<Ts, Ts...>(k), ...);
}

// LogicalAnd, LogicalOr, LogicalNot: bool only, no T attr.
void RegisterLogical(KernelRegistry* k) {
  k->Register(KernelDef("LogicalAnd", kDeviceTypeCpu), [] {
    return std::make_unique<BinaryOp<Impl>>(&BinaryLoop<bool, bool, LogicalAndF<bool>>, true);
  });
  k->Register(KernelDef("LogicalOr", kDeviceTypeCpu), [] {
    return std::make_unique<BinaryOp<Impl>>(&BinaryLoop<bool, bool, LogicalOrF<bool>>, true);
  });
  k->Register(KernelDef("LogicalNot", kDeviceTypeCpu),
              [] { return std::make_unique<UnaryOp<Impl>>(&UnaryLoop<bool, LogicalNotF<bool>>); });
}

void RegisterElementwiseKernels(KernelRegistry* k) {
  RegisterLogical(k);
  RegisterBinary<AddF, float, double, int32_t, int64_t>(k, "Add");
  RegisterBinary<AddF, float, double, int32_t, int64_t>(k, "AddV2");
  RegisterBinary<SubF, float, double, int32_t, int64_t>(k, "Sub");
  RegisterBinary<MulF, float, double, int32_t, int64_t>(k, "Mul");
  RegisterBinary<DivF, float, double>(k, "RealDiv");
  RegisterBinary<FloorDivF, float, double>(k, "FloorDiv");
  RegisterIntegerDiv<FloorDivF, int32_t, int64_t>(k, "FloorDiv");
  RegisterBinary<SquaredDifferenceF, float, double, int32_t, int64_t>(k, "SquaredDifference");
  RegisterBinary<FloorModF, float, double>(k, "FloorMod");
  RegisterIntegerDiv<FloorModF, int32_t, int64_t>(k, "FloorMod");
  RegisterIntegerDiv<TruncateDivF, int32_t, int64_t>(k, "TruncateDiv");
  RegisterBinary<DivF, float, double>(k, "Div");
  RegisterIntegerDiv<TruncateDivF, int32_t, int64_t>(k, "Div");
  RegisterBinary<DivNoNanF, float, double>(k, "DivNoNan");
  RegisterBinary<MulNoNanF, float, double>(k, "MulNoNan");
  for (const char* op : {"Mod", "TruncateMod"}) {
    RegisterBinary<TruncateModF, float, double>(k, op);
    RegisterIntegerDiv<TruncateModF, int32_t, int64_t>(k, op);
  }
  RegisterBinary<XlogyF, float, double>(k, "Xlogy");
  RegisterBinary<XdivyF, float, double>(k, "Xdivy");
  RegisterBinary<Xlog1pyF, float, double>(k, "Xlog1py");
  RegisterBinary<Atan2F, float, double>(k, "Atan2");
  RegisterUnary<ReciprocalF, float, double>(k, "Inv");
  RegisterPredicates<float, double>(k);
  k->Register<ClipByValueOp<float>>(Cpu<float>("ClipByValue"));
  k->Register<ClipByValueOp<double>>(Cpu<double>("ClipByValue"));
  k->Register<ClipByValueOp<int32_t>>(Cpu<int32_t>("ClipByValue"));
  k->Register<ClipByValueOp<int64_t>>(Cpu<int64_t>("ClipByValue"));
  RegisterBinary<MaxF, float, double, int32_t, int64_t>(k, "Maximum");
  RegisterBinary<MinF, float, double, int32_t, int64_t>(k, "Minimum");
  RegisterBinary<PowF, float, double, int32_t, int64_t>(k, "Pow");
  RegisterComparison<EqualF, float, double, int32_t, int64_t, bool, std::string>(k, "Equal");
  RegisterComparison<NotEqualF, float, double, int32_t, int64_t, bool, std::string>(
      k, "NotEqual");
  RegisterComparison<GreaterF, float, double, int32_t, int64_t>(k, "Greater");
  RegisterComparison<GreaterEqualF, float, double, int32_t, int64_t>(k, "GreaterEqual");
  RegisterComparison<LessF, float, double, int32_t, int64_t>(k, "Less");
  RegisterComparison<LessEqualF, float, double, int32_t, int64_t>(k, "LessEqual");
  RegisterBinary<TanhGradF, float, double>(k, "TanhGrad");
  RegisterBinary<SigmoidGradF, float, double>(k, "SigmoidGrad");
  RegisterBinary<SqrtGradF, float, double>(k, "SqrtGrad");
  RegisterBinary<RsqrtGradF, float, double>(k, "RsqrtGrad");
  RegisterBinary<ReciprocalGradF, float, double>(k, "ReciprocalGrad");
  RegisterBinary<ReciprocalGradF, float, double>(k, "InvGrad");

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
  RegisterUnary<FloorF, float, double>(k, "Floor");
  RegisterUnary<CeilF, float, double>(k, "Ceil");
  RegisterUnary<RoundF, float, double>(k, "Round");
  RegisterUnary<Log1pF, float, double>(k, "Log1p");
  RegisterUnary<Expm1F, float, double>(k, "Expm1");
  RegisterUnary<SoftplusF, float, double>(k, "Softplus");
  RegisterUnary<SoftsignF, float, double>(k, "Softsign");
  RegisterUnary<ErfF, float, double>(k, "Erf");
  RegisterUnary<ErfcF, float, double>(k, "Erfc");
  RegisterUnary<SinF, float, double>(k, "Sin");
  RegisterUnary<CosF, float, double>(k, "Cos");
  RegisterUnary<TanF, float, double>(k, "Tan");
  RegisterUnary<SinhF, float, double>(k, "Sinh");
  RegisterUnary<CoshF, float, double>(k, "Cosh");
  RegisterUnary<AsinF, float, double>(k, "Asin");
  RegisterUnary<AcosF, float, double>(k, "Acos");
  RegisterUnary<AtanF, float, double>(k, "Atan");
  RegisterUnary<AsinhF, float, double>(k, "Asinh");
  RegisterUnary<AcoshF, float, double>(k, "Acosh");
  RegisterUnary<AtanhF, float, double>(k, "Atanh");
  RegisterUnary<RintF, float, double>(k, "Rint");
}

template <typename... Ts>
void RegisterSelect(KernelRegistry* k) {
  (k->Register(Cpu<Ts>("Select"),
               [] {
                 return std::make_unique<SelectOp<Impl>>(
                     Impl::SelectFn{&SelectLoop<Ts>, &SelectV2Loop<Ts>});
               }),
   ...);
  (k->Register(Cpu<Ts>("SelectV2"),
               [] {
                 return std::make_unique<SelectV2Op<Impl>>(
                     Impl::SelectFn{&SelectLoop<Ts>, &SelectV2Loop<Ts>});
               }),
   ...);
}

// AddN and AccumulateNV2 (tf.math.accumulate_n's AddN).
template <typename... Ts>
void RegisterAddN(KernelRegistry* k) {
  for (const char* op : {"AddN", "AccumulateNV2"}) {
    (k->Register(Cpu<Ts>(op), [] { return std::make_unique<AddNOp<Impl>>(&AddNLoop<Ts>); }), ...);
  }
}

}  // namespace

void RegisterMathKernels(KernelRegistry* k) {
  internal::RegisterSequenceKernels(k);
  RegisterElementwiseKernels(k);
  RegisterSelect<float, double, int32_t, int64_t, bool>(k);
  RegisterAddN<float, double, int32_t, int64_t>(k);
  RegisterCasts<float, double, int32_t, int64_t, bool, uint8_t, int8_t>(k);
  // uint32 and uint64 (RNG keys and counters: tf.random.Generator casts its
  // skip count to uint64) to and from those, and between themselves.
  RegisterCastFrom<uint32_t, uint32_t, uint64_t, float, double, int32_t, int64_t, bool, uint8_t,
                   int8_t>(k);
  RegisterCastFrom<uint64_t, uint32_t, uint64_t, float, double, int32_t, int64_t, bool, uint8_t,
                   int8_t>(k);
  RegisterCastsTo<uint32_t, uint64_t>::From<float, double, int32_t, int64_t, bool, uint8_t,
                                            int8_t>(k);
  // Mixed precision's casts (placement/auto_mixed_precision.h).
  RegisterCast<float, BFloat16>(k, &CastToBf16);
  RegisterCast<BFloat16, float>(k, &CastFromBf16);
  // The 16-bit types to and from the others (bfloat16 and float: above).
  RegisterCastFrom<Half, Half, BFloat16, int16_t, uint16_t, float, double, int32_t, int64_t, bool,
                   uint8_t, int8_t>(k);
  RegisterCastFrom<BFloat16, Half, BFloat16, int16_t, uint16_t, double, int32_t, int64_t, bool,
                   uint8_t, int8_t>(k);
  RegisterCastsTo<Half, int16_t, uint16_t>::From<int16_t, uint16_t, float, double, int32_t, int64_t,
                                                 bool, uint8_t, int8_t>(k);
  RegisterCastFrom<int16_t, BFloat16>(k);
  RegisterCastFrom<uint16_t, BFloat16>(k);
  RegisterCastsTo<BFloat16>::From<double, int32_t, int64_t, bool, uint8_t, int8_t>(k);

  internal::RegisterReductionKernels(k);
  internal::RegisterMatMulKernels(k);
}

}  // namespace sluice
