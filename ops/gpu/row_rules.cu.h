// The training rules of the GPU row updates, one element at a time
// (ops/gpu/sparse_training.cu.h lists them and their inputs):
//
//   ApplyRowRule<RowRule::kRMSProp>(u, h, at, g, sparse);
//
// updates element `at` of u.var and of the rule's slots with gradient `g`,
// `h` holding the hyper-parameters' values in the op's order (read once per
// thread from device memory) and `sparse` telling a SparseApply* form from
// the dense one where TensorFlow writes the two differently. The formulas
// are the CPU rules' (ops/training/training_kernels_*.cc), operation for
// operation, so that the two devices agree to rounding.
//
// Every function is __host__ __device__: ops/gpu/row_rules_on_host.cu runs
// the same code on the host, where a test without a GPU compares it with the
// CPU kernels. nvcc only.
#ifndef SLUICE_OPS_GPU_ROW_RULES_CU_H_
#define SLUICE_OPS_GPU_ROW_RULES_CU_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "ops/gpu/device_math.cu.h"
#include "ops/gpu/sparse_training.cu.h"

#define SLUICE_ROW_RULE_FN __host__ __device__ __forceinline__

namespace sluice::gpu::row_rules {

using device_math::Abs;
using device_math::Exp;
using device_math::Pow;
using device_math::Sqrt;

// The element of var that flat position k (of n * inner) updates, grad row
// k / inner going to row indices[k / inner] (element k itself when indices
// is null, the dense forms, where n is rows); -1 when that index is out of
// range.
template <typename Index>
SLUICE_ROW_RULE_FN int64_t RowTarget(const Index* indices, int64_t k, int64_t rows,
                                     int64_t inner) {
  if (indices == nullptr) return k;  // dense: k < rows * inner, no division
  const int64_t i = k / inner;
  const int64_t row = static_cast<int64_t>(indices[i]);
  if (row < 0 || row >= rows) return -1;
  return row * inner + (k - i * inner);
}

// std::max's choice (b only when a < b), as the CPU rules take it.
template <typename T>
SLUICE_ROW_RULE_FN T Max(T a, T b) {
  return a < b ? b : a;
}

// TensorFlow's sign: 0 for 0.
template <typename T>
SLUICE_ROW_RULE_FN T Sign(T x) {
  return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
}

template <typename T>
SLUICE_ROW_RULE_FN void Momentum(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T lr = h[0], momentum = h[1];
  const T a = u.slot[0][at] * momentum + g;
  u.slot[0][at] = a;
  if (u.flag) {
    u.var[at] -= g * lr + a * momentum * lr;
  } else {
    u.var[at] -= a * lr;
  }
}

template <typename T>
SLUICE_ROW_RULE_FN void KerasMomentum(const RowUpdate<T>& u, const T* h, int64_t at,
                                              T g) {
  const T lr = h[0], momentum = h[1];
  const T a = u.slot[0][at] * momentum - g * lr;
  u.slot[0][at] = a;
  u.var[at] += u.flag ? a * momentum - g * lr : a;
}

template <typename T>
SLUICE_ROW_RULE_FN void Adagrad(const RowUpdate<T>& u, const T* h, int64_t at, T g,
                                        bool sparse) {
  const T lr = h[0];
  if (u.flag) u.slot[0][at] += g * g;
  const T accum = u.slot[0][at];
  if (sparse) {
    u.var[at] -= lr * g / Sqrt(accum);
  } else {
    u.var[at] -= g * lr * (T(1) / Sqrt(accum));
  }
}

template <typename T>
SLUICE_ROW_RULE_FN void AdagradV2(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T lr = h[0], epsilon = h[1];
  if (u.flag) u.slot[0][at] += g * g;
  u.var[at] -= lr * g / (Sqrt(u.slot[0][at]) + epsilon);
}

// FTRL-proximal; kShrinkage: FtrlV2, whose h[3] is l2_shrinkage (its
// linear term sees grad + 2 * l2_shrinkage * var; accum still sums grad^2).
template <bool kShrinkage, typename T>
SLUICE_ROW_RULE_FN void Ftrl(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T lr = h[0], l1 = h[1], l2 = h[2];
  const T lr_power = h[kShrinkage ? 4 : 3];
  const bool by_lr = u.flag;
  const bool half = lr_power == T(-0.5);
  const T accum = u.slot[0][at];
  const T new_accum = accum + g * g;
  const T p_new = half ? Sqrt(new_accum) : Pow(new_accum, -lr_power);
  const T p_old = half ? Sqrt(accum) : Pow(accum, -lr_power);
  const T sigma = p_new - p_old;
  const T var = u.var[at];
  const T gs = kShrinkage ? g + T(2) * h[3] * var : g;
  T linear = u.slot[1][at];
  T quadratic;
  if (by_lr) {
    linear += gs * lr - sigma * var;
    quadratic = p_new + T(2) * l2 * lr;
  } else {
    linear += gs - sigma / lr * var;
    quadratic = p_new / lr + T(2) * l2;
  }
  const T l1_eff = by_lr ? l1 * lr : l1;
  u.slot[1][at] = linear;
  u.var[at] =
      Abs(linear) > l1_eff ? ((linear > T(0) ? l1_eff : -l1_eff) - linear) / quadratic : T(0);
  u.slot[0][at] = new_accum;
}

template <typename T>
SLUICE_ROW_RULE_FN void Adadelta(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T lr = h[0], rho = h[1], eps = h[2];
  const T accum = u.slot[0][at] * rho + g * g * (T(1) - rho);
  u.slot[0][at] = accum;
  const T accum_update = u.slot[1][at];
  const T update = Sqrt(accum_update + eps) * (T(1) / Sqrt(accum + eps)) * g;
  u.var[at] -= update * lr;
  u.slot[1][at] = accum_update * rho + update * update * (T(1) - rho);
}

// The moving average of RMSProp's `x` (g or g^2) with decay rho, as
// TensorFlow's dense and sparse kernels write it.
template <typename T>
SLUICE_ROW_RULE_FN T Decayed(T avg, T x, T rho, bool sparse) {
  return sparse ? avg * rho + x * (T(1) - rho) : avg + (x - avg) * (T(1) - rho);
}

template <typename T>
SLUICE_ROW_RULE_FN void RMSProp(const RowUpdate<T>& u, const T* h, int64_t at, T g,
                                        bool sparse) {
  const T lr = h[0], rho = h[1], momentum = h[2], eps = h[3];
  const T ms = Decayed(u.slot[0][at], g * g, rho, sparse);
  u.slot[0][at] = ms;
  const T mom = u.slot[1][at] * momentum + g * lr / Sqrt(ms + eps);
  u.slot[1][at] = mom;
  u.var[at] -= mom;
}

template <typename T>
SLUICE_ROW_RULE_FN void CenteredRMSProp(const RowUpdate<T>& u, const T* h, int64_t at,
                                                T g, bool sparse) {
  const T lr = h[0], rho = h[1], momentum = h[2], eps = h[3];
  const T ms = Decayed(u.slot[1][at], g * g, rho, sparse);
  const T mg = Decayed(u.slot[0][at], g, rho, sparse);
  u.slot[1][at] = ms;
  u.slot[0][at] = mg;
  const T denom = ms - mg * mg + eps;
  const T mom = u.slot[2][at] * momentum + g * lr / Sqrt(denom);
  u.slot[2][at] = mom;
  u.var[at] -= mom;
}

template <typename T>
SLUICE_ROW_RULE_FN void AdaMax(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T beta1_power = h[0], lr = h[1], beta1 = h[2], beta2 = h[3], epsilon = h[4];
  const T rate = lr / (T(1) - beta1_power);
  const T m = u.slot[0][at] + (g - u.slot[0][at]) * (T(1) - beta1);
  const T v = Max(beta2 * u.slot[1][at], Abs(g));
  u.slot[0][at] = m;
  u.slot[1][at] = v;
  u.var[at] -= rate * (m / (v + epsilon));
}

template <typename T>
SLUICE_ROW_RULE_FN void Amsgrad(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T beta1_power = h[0], beta2_power = h[1], lr = h[2], beta1 = h[3], beta2 = h[4],
          epsilon = h[5];
  const T alpha = lr * Sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  const T m = u.slot[0][at] + (g - u.slot[0][at]) * (T(1) - beta1);
  const T v = u.slot[1][at] + (g * g - u.slot[1][at]) * (T(1) - beta2);
  const T vhat = Max(u.slot[2][at], v);
  u.slot[0][at] = m;
  u.slot[1][at] = v;
  u.slot[2][at] = vhat;
  u.var[at] -= m * alpha / (Sqrt(vhat) + epsilon);
}

// AddSign (kPower false: h[1] is alpha) and PowerSign (h[1] is logbase).
template <bool kPower, typename T>
SLUICE_ROW_RULE_FN void SignStep(const RowUpdate<T>& u, const T* h, int64_t at, T g) {
  const T lr = h[0], base = h[1], sign_decay = h[2], beta = h[3];
  const T m = u.slot[0][at] * beta + g * (T(1) - beta);
  u.slot[0][at] = m;
  const T agree = Sign(g) * Sign(m);
  const T scale = kPower ? Exp(base * sign_decay * agree) : base + sign_decay * agree;
  u.var[at] -= lr * scale * g;
}

template <RowRule kRule, typename T>
SLUICE_ROW_RULE_FN void ApplyRowRule(const RowUpdate<T>& u, const T* h, int64_t at, T g,
                                             bool sparse) {
  if constexpr (kRule == RowRule::kMomentum) {
    Momentum(u, h, at, g);
  } else if constexpr (kRule == RowRule::kKerasMomentum) {
    KerasMomentum(u, h, at, g);
  } else if constexpr (kRule == RowRule::kAdagrad) {
    Adagrad(u, h, at, g, sparse);
  } else if constexpr (kRule == RowRule::kAdagradV2) {
    AdagradV2(u, h, at, g);
  } else if constexpr (kRule == RowRule::kFtrl) {
    Ftrl<false>(u, h, at, g);
  } else if constexpr (kRule == RowRule::kFtrlV2) {
    Ftrl<true>(u, h, at, g);
  } else if constexpr (kRule == RowRule::kAdadelta) {
    Adadelta(u, h, at, g);
  } else if constexpr (kRule == RowRule::kRMSProp) {
    RMSProp(u, h, at, g, sparse);
  } else if constexpr (kRule == RowRule::kCenteredRMSProp) {
    CenteredRMSProp(u, h, at, g, sparse);
  } else if constexpr (kRule == RowRule::kAdaMax) {
    AdaMax(u, h, at, g);
  } else if constexpr (kRule == RowRule::kAmsgrad) {
    Amsgrad(u, h, at, g);
  } else if constexpr (kRule == RowRule::kAddSign) {
    SignStep<false>(u, h, at, g);
  } else {
    static_assert(kRule == RowRule::kPowerSign);
    SignStep<true>(u, h, at, g);
  }
}

// Calls visit.template operator()<R>() with R the compile-time value of
// `rule`: how a launcher picks the kernel instantiation for a RowUpdate.
// False, calling nothing, for a value outside RowRule.
template <typename Visitor>
bool VisitRowRule(RowRule rule, Visitor&& visit) {
#define SLUICE_ROW_RULE_CASE_(R)             \
  case RowRule::R:                           \
    visit.template operator()<RowRule::R>(); \
    return true;
  switch (rule) {
    SLUICE_ROW_RULE_CASE_(kMomentum)
    SLUICE_ROW_RULE_CASE_(kKerasMomentum)
    SLUICE_ROW_RULE_CASE_(kAdagrad)
    SLUICE_ROW_RULE_CASE_(kAdagradV2)
    SLUICE_ROW_RULE_CASE_(kFtrl)
    SLUICE_ROW_RULE_CASE_(kFtrlV2)
    SLUICE_ROW_RULE_CASE_(kAdadelta)
    SLUICE_ROW_RULE_CASE_(kRMSProp)
    SLUICE_ROW_RULE_CASE_(kCenteredRMSProp)
    SLUICE_ROW_RULE_CASE_(kAdaMax)
    SLUICE_ROW_RULE_CASE_(kAmsgrad)
    SLUICE_ROW_RULE_CASE_(kAddSign)
    SLUICE_ROW_RULE_CASE_(kPowerSign)
  }
#undef SLUICE_ROW_RULE_CASE_
  return false;
}

}  // namespace sluice::gpu::row_rules

#undef SLUICE_ROW_RULE_FN

#endif  // SLUICE_OPS_GPU_ROW_RULES_CU_H_
