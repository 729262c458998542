// Unary math and Cast on the GPU (launchers: cwise.cu.h). The functors
// mirror ops/math/math_kernels.cc, evaluated in the compute type (float for half
// and bfloat16); exp, log, tanh and the like use CUDA's accurate libm.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/gpu/cwise.cu.h"
#include "ops/gpu/cwise_impl.cu.h"
#include "ops/gpu/vector_loop.h"

namespace sluice::gpu {
namespace cwise_impl {
namespace {

struct NegF {
  template <typename C>
  __device__ C operator()(C x) const {
    return -x;
  }
};
struct SquareF {
  template <typename C>
  __device__ C operator()(C x) const {
    return x * x;
  }
};
// Floating point: the sign bit cleared, so Abs(-0.0) is +0.0 (TensorFlow's).
struct AbsF {
  __device__ float operator()(float x) const { return fabsf(x); }
  __device__ double operator()(double x) const { return fabs(x); }
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C(0) ? -x : x;
  }
};
struct SignF {
  template <typename C>
  __device__ C operator()(C x) const {
    if (x != x) return x;  // NaN stays NaN
    return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
  }
};
struct SqrtF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Sqrt(x);
  }
};
struct RsqrtF {
  template <typename C>
  __device__ C operator()(C x) const {
    return C(1) / Sqrt(x);
  }
};
struct ExpF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Exp(x);
  }
};
struct LogF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Log(x);
  }
};
struct TanhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Tanh(x);
  }
};
struct SigmoidF {
  template <typename C>
  __device__ C operator()(C x) const {
    return C(1) / (C(1) + Exp(-x));
  }
};
struct ReciprocalF {
  template <typename C>
  __device__ C operator()(C x) const {
    return C(1) / x;
  }
};

// Rounding and the special functions: CUDA's libm (the CPU's std:: ones).
struct FloorF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Floor(x);
  }
};
struct CeilF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Ceil(x);
  }
};
// Halves to even (the default rounding mode), as the CPU's nearbyint.
struct RoundF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Rint(x);
  }
};
struct Log1pF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Log1p(x);
  }
};
struct Expm1F {
  template <typename C>
  __device__ C operator()(C x) const {
    return Expm1(x);
  }
};
struct ErfF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Erf(x);
  }
};
struct ErfcF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Erfc(x);
  }
};
struct SinF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Sin(x);
  }
};
struct CosF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Cos(x);
  }
};

struct TanF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Tan(x);
  }
};
struct SinhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Sinh(x);
  }
};
struct CoshF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Cosh(x);
  }
};
struct AsinF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Asin(x);
  }
};
struct AcosF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Acos(x);
  }
};
struct AtanF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Atan(x);
  }
};
struct AsinhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Asinh(x);
  }
};
struct AcoshF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Acosh(x);
  }
};
struct AtanhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Atanh(x);
  }
};
struct RintF {
  template <typename C>
  __device__ C operator()(C x) const {
    return Rint(x);
  }
};

// y[i] = f(x[i]); whole packs of kVec by Pack (aligned), the rest singly.
template <typename T, typename F, int kVec>
__global__ void __launch_bounds__(kThreads) UnaryKernel(const T* x, T* y, int64_t n, F f) {
  using N = Num<T>;
  ForEachVectorized<kVec>(
      n, FirstIndex<int64_t>(), GridStride<int64_t>(),
      [&](int64_t p) {
        if constexpr (kVec > 1) {
          using P = Pack<T, kVec>;
          P v = reinterpret_cast<const P*>(x)[p];
#pragma unroll
          for (int k = 0; k < kVec; ++k) v.v[k] = N::Down(f(N::Up(v.v[k])));
          reinterpret_cast<P*>(y)[p] = v;
        }
      },
      [&](int64_t i) { y[i] = N::Down(f(N::Up(x[i]))); });
}

template <typename F>
struct Unary {
  const void* x;
  void* y;
  int64_t n;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    using T = typename TagT::type;
    if (n <= 0) return cudaSuccess;
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    constexpr int kVec = kVecOf<T>;
    if (n >= kVec && AlignedTo(in, sizeof(T) * kVec) && AlignedTo(out, sizeof(T) * kVec)) {
      return Launch(UnaryKernel<T, F, kVec>, (n + kVec - 1) / kVec, stream, in, out, n, F{});
    }
    return Launch(UnaryKernel<T, F, 1>, n, stream, in, out, n, F{});
  }
};

// ---------------------------------------------------------------------------
// Cast.

// A source value in its compute type S (float for half and bfloat16) as Dst,
// like the CPU's ConvertValue.
template <typename Dst, typename S>
__device__ __forceinline__ Dst ConvertTo(S s) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return s != S(0);
  } else if constexpr (std::is_same_v<Dst, __half>) {
    if constexpr (std::is_same_v<S, double>) {
      return __double2half(s);
    } else if constexpr (std::is_integral_v<S>) {
      return __ll2half_rn(static_cast<long long>(s));
    } else {
      return __float2half_rn(s);
    }
  } else if constexpr (std::is_same_v<Dst, __nv_bfloat16>) {
    if constexpr (std::is_same_v<S, double>) {
      return __double2bfloat16(s);
    } else if constexpr (std::is_integral_v<S>) {
      return __ll2bfloat16_rn(static_cast<long long>(s));
    } else {
      return __float2bfloat16_rn(s);
    }
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<Dst>) {
    // NaN to 0, out-of-range values saturate.
    if (!(s == s)) return Dst(0);
    if (s <= static_cast<S>(std::numeric_limits<Dst>::lowest())) {
      return std::numeric_limits<Dst>::lowest();
    }
    if (s >= static_cast<S>(std::numeric_limits<Dst>::max())) {
      return std::numeric_limits<Dst>::max();
    }
    return static_cast<Dst>(s);
  } else {
    return static_cast<Dst>(s);
  }
}

template <typename Src, typename Dst>
__global__ void __launch_bounds__(kThreads) CastKernel(const Src* x, Dst* y, int64_t n) {
  for (int64_t i = FirstIndex<int64_t>(); i < n; i += GridStride<int64_t>()) {
    y[i] = ConvertTo<Dst>(Num<Src>::Up(x[i]));
  }
}

template <typename Body>
cudaError_t DispatchCastTypes(CwiseType type, Body&& body) {
  return DispatchAmong<float, __half, __nv_bfloat16, double, int32_t, int64_t, bool>(type, body);
}

template <typename Src>
struct CastTo {
  const void* x;
  void* y;
  int64_t n;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    using Dst = typename TagT::type;
    if constexpr (std::is_same_v<Src, Dst>) {
      return cudaErrorNotSupported;
    } else {
      if (n <= 0) return cudaSuccess;
      return Launch(CastKernel<Src, Dst>, n, stream, static_cast<const Src*>(x),
                    static_cast<Dst*>(y), n);
    }
  }
};

struct CastFrom {
  CwiseType dst;
  const void* x;
  void* y;
  int64_t n;
  cudaStream_t stream;
  template <typename TagT>
  cudaError_t operator()(TagT) const {
    return DispatchCastTypes(dst, CastTo<typename TagT::type>{x, y, n, stream});
  }
};

}  // namespace
}  // namespace cwise_impl

cudaError_t LaunchUnary(UnaryFn fn, CwiseType type, const void* x, void* y, int64_t n,
                        cudaStream_t stream) {
  using namespace cwise_impl;  // NOLINT: the functors and dispatchers
  switch (fn) {
    case UnaryFn::kNeg:
      return DispatchFloatInt64(type, Unary<NegF>{x, y, n, stream});
    case UnaryFn::kSquare:
      return DispatchFloatInt64(type, Unary<SquareF>{x, y, n, stream});
    case UnaryFn::kAbs:
      return DispatchFloatInt64(type, Unary<AbsF>{x, y, n, stream});
    case UnaryFn::kSign:
      return DispatchFloatInt64(type, Unary<SignF>{x, y, n, stream});
    case UnaryFn::kSqrt:
      return DispatchFloat(type, Unary<SqrtF>{x, y, n, stream});
    case UnaryFn::kRsqrt:
      return DispatchFloat(type, Unary<RsqrtF>{x, y, n, stream});
    case UnaryFn::kExp:
      return DispatchFloat(type, Unary<ExpF>{x, y, n, stream});
    case UnaryFn::kLog:
      return DispatchFloat(type, Unary<LogF>{x, y, n, stream});
    case UnaryFn::kTanh:
      return DispatchFloat(type, Unary<TanhF>{x, y, n, stream});
    case UnaryFn::kSigmoid:
      return DispatchFloat(type, Unary<SigmoidF>{x, y, n, stream});
    case UnaryFn::kReciprocal:
      return DispatchFloat(type, Unary<ReciprocalF>{x, y, n, stream});
    case UnaryFn::kFloor:
      return DispatchFloat(type, Unary<FloorF>{x, y, n, stream});
    case UnaryFn::kCeil:
      return DispatchFloat(type, Unary<CeilF>{x, y, n, stream});
    case UnaryFn::kRound:
      return DispatchFloat(type, Unary<RoundF>{x, y, n, stream});
    case UnaryFn::kLog1p:
      return DispatchFloat(type, Unary<Log1pF>{x, y, n, stream});
    case UnaryFn::kExpm1:
      return DispatchFloat(type, Unary<Expm1F>{x, y, n, stream});
    case UnaryFn::kErf:
      return DispatchFloat(type, Unary<ErfF>{x, y, n, stream});
    case UnaryFn::kErfc:
      return DispatchFloat(type, Unary<ErfcF>{x, y, n, stream});
    case UnaryFn::kSin:
      return DispatchFloat(type, Unary<SinF>{x, y, n, stream});
    case UnaryFn::kCos:
      return DispatchFloat(type, Unary<CosF>{x, y, n, stream});
    case UnaryFn::kTan:
      return DispatchFloat(type, Unary<TanF>{x, y, n, stream});
    case UnaryFn::kSinh:
      return DispatchFloat(type, Unary<SinhF>{x, y, n, stream});
    case UnaryFn::kCosh:
      return DispatchFloat(type, Unary<CoshF>{x, y, n, stream});
    case UnaryFn::kAsin:
      return DispatchFloat(type, Unary<AsinF>{x, y, n, stream});
    case UnaryFn::kAcos:
      return DispatchFloat(type, Unary<AcosF>{x, y, n, stream});
    case UnaryFn::kAtan:
      return DispatchFloat(type, Unary<AtanF>{x, y, n, stream});
    case UnaryFn::kAsinh:
      return DispatchFloat(type, Unary<AsinhF>{x, y, n, stream});
    case UnaryFn::kAcosh:
      return DispatchFloat(type, Unary<AcoshF>{x, y, n, stream});
    case UnaryFn::kAtanh:
      return DispatchFloat(type, Unary<AtanhF>{x, y, n, stream});
    case UnaryFn::kRint:
      return DispatchFloat(type, Unary<RintF>{x, y, n, stream});
  }
  return cudaErrorNotSupported;
}

cudaError_t LaunchCast(CwiseType src, CwiseType dst, const void* x, void* y, int64_t n,
                       cudaStream_t stream) {
  return cwise_impl::DispatchCastTypes(src, cwise_impl::CastFrom{dst, x, y, n, stream});
}

}  // namespace sluice::gpu
