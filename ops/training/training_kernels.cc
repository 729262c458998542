// CPU kernels of the training ops. ApplyGradientDescent, ApplyMomentum and
// ApplyAdam (and their Resource forms), and ResourceApplyKerasMomentum, are
// the device-independent shells of
// ops/training/training_kernels.h with CpuTrainingImpl's arithmetic: tight
// elementwise loops with __restrict pointers so the compiler vectorizes them.
// The adaptive rules and FTRL use the Rule shells of training_apply_shell.h.
#include <cmath>
#include <cstdint>

#include "absl/base/attributes.h"
#include "ops/state/state_ops.h"
#include "ops/training/multi_apply_kernels.h"
#include "ops/training/multi_apply_ops.h"
#include "ops/training/training_apply_shell.h"
#include "ops/training/training_kernels.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

// The loops are out of line: inlined into a kernel's Compute, GCC loses
// __restrict and the loop stays scalar.
template <typename T>
ABSL_ATTRIBUTE_NOINLINE void GradientDescentLoop(T* __restrict var, const T* __restrict delta,
                                                 T alpha, int64_t n) {
  internal::ForEachIndex(n, [=](int64_t i) { var[i] -= alpha * delta[i]; });
}

template <typename T, bool kNesterov>
ABSL_ATTRIBUTE_NOINLINE void MomentumLoop(T* __restrict var, T* __restrict accum,
                                          const T* __restrict grad, T lr, T momentum, int64_t n) {
  internal::ForEachIndex(n, [=](int64_t i) {
    const T a = accum[i] * momentum + grad[i];
    accum[i] = a;
    if (kNesterov) {
      var[i] -= grad[i] * lr + a * momentum * lr;
    } else {
      var[i] -= lr * a;
    }
  });
}

// Keras's rule: the velocity holds the step, lr folded in.
template <typename T, bool kNesterov>
ABSL_ATTRIBUTE_NOINLINE void KerasMomentumLoop(T* __restrict var, T* __restrict accum,
                                               const T* __restrict grad, T lr, T momentum,
                                               int64_t n) {
  internal::ForEachIndex(n, [=](int64_t i) {
    const T a = accum[i] * momentum - grad[i] * lr;
    accum[i] = a;
    var[i] += kNesterov ? a * momentum - grad[i] * lr : a;
  });
}

template <typename T>
struct AdamHyper {
  T beta1_power, beta2_power, lr, beta1, beta2, epsilon;
};

template <typename T, bool kNesterov>
ABSL_ATTRIBUTE_NOINLINE void AdamLoop(const AdamHyper<T>& h, const T* __restrict g,
                                      T* __restrict var, T* __restrict m, T* __restrict v,
                                      int64_t n) {
  const T one(1);
  const T lr_t = h.lr * std::sqrt(one - h.beta2_power) / (one - h.beta1_power);
  const T one_minus_beta1 = one - h.beta1;
  const T one_minus_beta2 = one - h.beta2;
  const T beta1 = h.beta1;
  const T epsilon = h.epsilon;
  internal::ForEachIndex(n, [=](int64_t i) {
    const T gi = g[i];
    const T mi = m[i] + (gi - m[i]) * one_minus_beta1;
    const T vi = v[i] + (gi * gi - v[i]) * one_minus_beta2;
    m[i] = mi;
    v[i] = vi;
    const T step = kNesterov ? mi * beta1 + one_minus_beta1 * gi : mi;
    var[i] -= lr_t * step / (std::sqrt(vi) + epsilon);
  });
}

// The CPU's arithmetic for the shells of training_kernels.h: scalars are
// host tensors, read here; nothing can fail once the shell has checked.
struct CpuTrainingImpl {
  template <typename T>
  static absl::Status GradientDescent(OpKernelContext* ctx, T* var, const Tensor& alpha,
                                      const T* delta, int64_t n) {
    GradientDescentLoop<T>(var, delta, alpha.scalar<T>(), n);
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status Momentum(OpKernelContext* ctx, T* var, T* accum, const Tensor& lr,
                               const T* grad, const Tensor& momentum, int64_t n, bool nesterov) {
    if (nesterov) {
      MomentumLoop<T, true>(var, accum, grad, lr.scalar<T>(), momentum.scalar<T>(), n);
    } else {
      MomentumLoop<T, false>(var, accum, grad, lr.scalar<T>(), momentum.scalar<T>(), n);
    }
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status KerasMomentum(OpKernelContext* ctx, T* var, T* accum, const Tensor& lr,
                                    const T* grad, const Tensor& momentum, int64_t n,
                                    bool nesterov) {
    if (nesterov) {
      KerasMomentumLoop<T, true>(var, accum, grad, lr.scalar<T>(), momentum.scalar<T>(), n);
    } else {
      KerasMomentumLoop<T, false>(var, accum, grad, lr.scalar<T>(), momentum.scalar<T>(), n);
    }
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status Adam(OpKernelContext* ctx, T* var, T* m, T* v, const AdamScalarInputs& s,
                           const T* grad, int64_t n, bool nesterov) {
    const AdamHyper<T> h{s.beta1_power->scalar<T>(), s.beta2_power->scalar<T>(),
                         s.lr->scalar<T>(),          s.beta1->scalar<T>(),
                         s.beta2->scalar<T>(),       s.epsilon->scalar<T>()};
    if (nesterov) {
      AdamLoop<T, true>(h, grad, var, m, v, n);
    } else {
      AdamLoop<T, false>(h, grad, var, m, v, n);
    }
    return absl::OkStatus();
  }
};

// The multi-tensor updates (ops/training/multi_apply_ops.h): each piece by
// the single-variable loops.
struct CpuMultiApplyImpl {
  template <typename T>
  static absl::Status MultiGradientDescent(OpKernelContext*,
                                           absl::Span<const GradientDescentPiece<T>> pieces,
                                           const Tensor& alpha) {
    const T a = alpha.scalar<T>();
    for (const GradientDescentPiece<T>& p : pieces) GradientDescentLoop<T>(p.var, p.delta, a, p.n);
    return absl::OkStatus();
  }
  template <typename T>
  static absl::Status MultiAdam(OpKernelContext*, absl::Span<const AdamPiece<T>> pieces,
                                const AdamScalarInputs& s, bool nesterov) {
    const AdamHyper<T> h{s.beta1_power->scalar<T>(), s.beta2_power->scalar<T>(),
                         s.lr->scalar<T>(),          s.beta1->scalar<T>(),
                         s.beta2->scalar<T>(),       s.epsilon->scalar<T>()};
    for (const AdamPiece<T>& p : pieces) {
      if (nesterov) {
        AdamLoop<T, true>(h, p.grad, p.var, p.m, p.v, p.n);
      } else {
        AdamLoop<T, false>(h, p.grad, p.var, p.m, p.v, p.n);
      }
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterMultiApplyKernels(KernelRegistry* kernels) {
  RegisterMultiApplyKernelsFor<CpuMultiApplyImpl, float>(kernels, kDeviceTypeCpu);
  RegisterMultiApplyKernelsFor<CpuMultiApplyImpl, double>(kernels, kDeviceTypeCpu);
}

void RegisterTrainingKernels(KernelRegistry* kernels) {
  // The resource forms share the shells (internal::VarInput reads a handle).
  RegisterTrainingKernelsFor<CpuTrainingImpl, float>(kernels, kDeviceTypeCpu,
                                                     /*with_resource_forms=*/true);
  RegisterTrainingKernelsFor<CpuTrainingImpl, double>(kernels, kDeviceTypeCpu,
                                                      /*with_resource_forms=*/true);
  // ResourceApplyKerasMomentum through the same shell (its sparse form is
  // Momentum's Rule: training_kernels_adaptive.cc).
  RegisterKerasMomentumKernelFor<CpuTrainingImpl, float>(kernels, kDeviceTypeCpu);
  RegisterKerasMomentumKernelFor<CpuTrainingImpl, double>(kernels, kDeviceTypeCpu);
  RegisterMultiApplyKernels(kernels);
  internal::RegisterAdaptiveTrainingKernels(kernels);
  internal::RegisterFtrlTrainingKernels(kernels);
  internal::RegisterKerasTrainingKernels(kernels);
  internal::RegisterSignTrainingKernels(kernels);
}

}  // namespace sluice
