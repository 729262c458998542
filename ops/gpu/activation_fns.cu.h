// One element of each GPU activation and its gradient (launchers:
// ops/gpu/activation.cu.h), in the compute type C (float or double):
//
//   y = Activate<ActivationFn::kSelu>(x, alpha);
//   dx = ActivateGrad<ActivationGradFn::kSeluGrad>(g, y, alpha);
//
// The CPU kernels' formulas, operation for operation. __host__ __device__:
// activation_fns_on_host_test.cc runs them on the host against the CPU
// kernels. nvcc only.
#ifndef SLUICE_OPS_GPU_ACTIVATION_FNS_CU_H_
#define SLUICE_OPS_GPU_ACTIVATION_FNS_CU_H_

#include <cuda_runtime.h>

#include "ops/gpu/activation.cu.h"
#include "ops/gpu/device_math.cu.h"

#define SLUICE_ACTIVATION_FN __host__ __device__ __forceinline__

namespace sluice::gpu::activation_fns {

// SELU's constants (Klambauer et al.), as ops/nn/activation_ops.h has them
// (that header is not for nvcc); the host test compares the results.
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

using device_math::Exp;
using device_math::Expm1;
using device_math::Log1p;

template <ActivationFn kFn, typename C>
SLUICE_ACTIVATION_FN C Activate(C x, C alpha) {
  if constexpr (kFn == ActivationFn::kRelu6) {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  } else if constexpr (kFn == ActivationFn::kElu) {
    return x > C(0) ? x : Expm1(x);
  } else if constexpr (kFn == ActivationFn::kSelu) {
    return x > C(0) ? C(kSeluScale) * x : C(kSeluScale * kSeluAlpha) * Expm1(x);
  } else if constexpr (kFn == ActivationFn::kLeakyRelu) {
    return x > C(0) ? x : alpha * x;
  } else if constexpr (kFn == ActivationFn::kSoftplus) {
    // log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0.
    return x > C(0) ? x + Log1p(Exp(-x)) : Log1p(Exp(x));
  } else if constexpr (kFn == ActivationFn::kSoftsign) {
    return x / (C(1) + (x < C(0) ? -x : x));
  } else {
    static_assert(kFn == ActivationFn::kHalfSquare);
    // Halving is exact (but in the subnormal range), so the sum of halves
    // is half the sum; squared in T, as TensorFlow's GPU kernel does (a
    // float beyond about 1.8e19 squares to inf; the CPU sums in double).
    return x * x * C(0.5);
  }
}

// Outside Relu6's (0, 6) the gradient is g * 0 (an infinite or NaN g gives
// NaN), as TensorFlow's mask product.
template <ActivationGradFn kFn, typename C>
SLUICE_ACTIVATION_FN C ActivateGrad(C g, C v, C alpha) {
  if constexpr (kFn == ActivationGradFn::kRelu6Grad) {
    return v > C(0) && v < C(6) ? g : g * C(0);
  } else if constexpr (kFn == ActivationGradFn::kEluGrad) {
    return v > C(0) ? g : g * (v + C(1));
  } else if constexpr (kFn == ActivationGradFn::kSeluGrad) {
    return v > C(0) ? g * C(kSeluScale) : g * (v + C(kSeluScale * kSeluAlpha));
  } else if constexpr (kFn == ActivationGradFn::kLeakyReluGrad) {
    return v > C(0) ? g : g * alpha;
  } else if constexpr (kFn == ActivationGradFn::kSoftplusGrad) {
    return g / (C(1) + Exp(-v));
  } else {
    static_assert(kFn == ActivationGradFn::kSoftsignGrad);
    const C d = C(1) + (v < C(0) ? -v : v);
    return g / (d * d);
  }
}

// Calls visit.template operator()<F>() with F the compile-time value of
// `fn`; false for a value outside the enum.
template <typename Visitor>
bool VisitActivation(ActivationFn fn, Visitor&& visit) {
  switch (fn) {
    case ActivationFn::kRelu6:
      visit.template operator()<ActivationFn::kRelu6>();
      return true;
    case ActivationFn::kElu:
      visit.template operator()<ActivationFn::kElu>();
      return true;
    case ActivationFn::kSelu:
      visit.template operator()<ActivationFn::kSelu>();
      return true;
    case ActivationFn::kLeakyRelu:
      visit.template operator()<ActivationFn::kLeakyRelu>();
      return true;
    case ActivationFn::kSoftplus:
      visit.template operator()<ActivationFn::kSoftplus>();
      return true;
    case ActivationFn::kSoftsign:
      visit.template operator()<ActivationFn::kSoftsign>();
      return true;
    case ActivationFn::kHalfSquare:
      visit.template operator()<ActivationFn::kHalfSquare>();
      return true;
  }
  return false;
}

template <typename Visitor>
bool VisitActivationGrad(ActivationGradFn fn, Visitor&& visit) {
  switch (fn) {
    case ActivationGradFn::kRelu6Grad:
      visit.template operator()<ActivationGradFn::kRelu6Grad>();
      return true;
    case ActivationGradFn::kEluGrad:
      visit.template operator()<ActivationGradFn::kEluGrad>();
      return true;
    case ActivationGradFn::kSeluGrad:
      visit.template operator()<ActivationGradFn::kSeluGrad>();
      return true;
    case ActivationGradFn::kLeakyReluGrad:
      visit.template operator()<ActivationGradFn::kLeakyReluGrad>();
      return true;
    case ActivationGradFn::kSoftplusGrad:
      visit.template operator()<ActivationGradFn::kSoftplusGrad>();
      return true;
    case ActivationGradFn::kSoftsignGrad:
      visit.template operator()<ActivationGradFn::kSoftsignGrad>();
      return true;
  }
  return false;
}

}  // namespace sluice::gpu::activation_fns

#undef SLUICE_ACTIVATION_FN

#endif  // SLUICE_OPS_GPU_ACTIVATION_FNS_CU_H_
