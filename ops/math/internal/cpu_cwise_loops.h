// The CPU's element-wise loops for the shells of ops/math/cwise_kernels.h,
// shared by the files that register element-wise kernels (math_kernels.cc,
// bitwise_kernels.cc, special_function_kernels.cc): one loop per (type,
// functor F with a static Apply), split over the device's threads, and the
// registration of UnaryOp/BinaryOp kernels over them.
//
//   template <typename T> struct NegF { static T Apply(T x) { return -x; } };
//   internal::RegisterCpuUnary<NegF, float, double>(k, "Neg");
//
// The loops are templates instantiated in the including file: a file that
// wants them vectorized asks for it (math_kernels.cc's optimize pragma).
// Internal to ops/math.
#ifndef SLUICE_OPS_MATH_INTERNAL_CPU_CWISE_LOOPS_H_
#define SLUICE_OPS_MATH_INTERNAL_CPU_CWISE_LOOPS_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "ops/math/cwise_kernels.h"
#include "ops/math/internal/broadcast.h"
#include "ops/math/internal/math_kernel_util.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace internal {

template <typename T, typename F>
absl::Status UnaryLoop(OpKernelContext* ctx, const Tensor& x, Tensor* y) {
  const T* in = x.data<T>();
  T* out = y->data<T>();
  MaybeParallelFor(ctx, x.NumElements(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = F::Apply(in[i]);
  });
  return absl::OkStatus();
}

template <typename T, typename Out, typename F>
absl::Status BinaryLoop(OpKernelContext* ctx, const BinaryShapes& shapes, const Tensor& x,
                        const Tensor& y, Tensor* result) {
  const T* xd = x.data<T>();
  const T* yd = y.data<T>();
  Out* out = result->data<Out>();
  const int64_t n = result->NumElements();
  switch (shapes.kind) {
    case BinaryShapes::Kind::kSame:
      MaybeParallelFor(ctx, n, 1, [&](int64_t b, int64_t e) {
        BinaryLoopSame<F>(xd + b, yd + b, out + b, e - b);
      });
      break;
    case BinaryShapes::Kind::kScalarY: {
      const T yv = *yd;
      MaybeParallelFor(ctx, n, 1, [&](int64_t b, int64_t e) {
        BinaryLoopScalarY<F>(xd + b, yv, out + b, e - b);
      });
      break;
    }
    case BinaryShapes::Kind::kScalarX: {
      const T xv = *xd;
      MaybeParallelFor(ctx, n, 1, [&](int64_t b, int64_t e) {
        BinaryLoopScalarX<F>(xv, yd + b, out + b, e - b);
      });
      break;
    }
    case BinaryShapes::Kind::kBroadcast:
      MaybeParallelFor(ctx, shapes.plan.rows(), shapes.plan.inner(), [&](int64_t b, int64_t e) {
        BinaryBroadcastRows<F>(shapes.plan, xd, yd, out, b, e);
      });
      break;
  }
  return absl::OkStatus();
}

// Integer division: a zero divisor is an error, not a crash.
template <typename T, typename F>
absl::Status IntegerDivLoop(OpKernelContext* ctx, const BinaryShapes& shapes, const Tensor& x,
                            const Tensor& y, Tensor* out) {
  const T* yd = y.data<T>();
  bool has_zero = false;
  for (int64_t i = 0; i < y.NumElements(); ++i) has_zero |= yd[i] == T(0);
  if (has_zero) return absl::InvalidArgumentError("Integer division by zero");
  return BinaryLoop<T, T, F>(ctx, shapes, x, y, out);
}

// What UnaryOp and BinaryOp ask of the CPU: the loop they were registered with.
struct CpuElementwiseImpl {
  using UnaryFn = absl::Status (*)(OpKernelContext*, const Tensor&, Tensor*);
  using BinaryFn = absl::Status (*)(OpKernelContext*, const BinaryShapes&, const Tensor&,
                                    const Tensor&, Tensor*);
  static absl::Status Unary(OpKernelContext* ctx, UnaryFn fn, const Tensor& x, Tensor* y) {
    return fn(ctx, x, y);
  }
  static absl::Status Binary(OpKernelContext* ctx, BinaryFn fn, const BinaryShapes& shapes,
                             const Tensor& x, const Tensor& y, Tensor* out) {
    return fn(ctx, shapes, x, y, out);
  }
};

template <template <typename> class F, typename... Ts>
void RegisterCpuUnary(KernelRegistry* k, const char* op) {
  (k->Register(Cpu<Ts>(op),
               [] {
                 return std::make_unique<UnaryOp<CpuElementwiseImpl>>(&UnaryLoop<Ts, F<Ts>>);
               }),
   ...);
}

template <template <typename> class F, typename... Ts>
void RegisterCpuBinary(KernelRegistry* k, const char* op) {
  (k->Register(Cpu<Ts>(op),
               [] {
                 return std::make_unique<BinaryOp<CpuElementwiseImpl>>(
                     &BinaryLoop<Ts, Ts, F<Ts>>, /*same_type=*/true);
               }),
   ...);
}

template <template <typename> class F, typename... Ts>
void RegisterCpuIntegerDiv(KernelRegistry* k, const char* op) {
  (k->Register(Cpu<Ts>(op),
               [] {
                 return std::make_unique<BinaryOp<CpuElementwiseImpl>>(
                     &IntegerDivLoop<Ts, F<Ts>>, /*same_type=*/true);
               }),
   ...);
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_CPU_CWISE_LOOPS_H_
