// CPU arithmetic of the adaptive-learning-rate training ops — Adagrad,
// AdagradDA, ProximalAdagrad, Adadelta, RMSProp, CenteredRMSProp — and of the sparse
// forms of Momentum and Keras's momentum, as Rules for the
// shells of ops/training/training_apply_shell.h. The formulas are those of
// TensorFlow's CPU functors (tensorflow/core/kernels/training_ops.cc), the
// sparse variants included where TensorFlow writes them differently.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/training/training_apply_shell.h"

namespace sluice {
namespace internal {
namespace {

// FOBOS's proximal step from `prox` (var after a plain step of size
// `rate`): shrunk toward 0 by rate * l1 (when l1 > 0), then scaled by
// 1 / (1 + rate * l2). ProximalAdagrad and ProximalGradientDescent share it.
template <typename T>
T ProximalStep(T prox, T rate, T l1, T l2) {
  const T shrunk = l1 > T(0) ? Sign(prox) * std::max(std::abs(prox) - rate * l1, T(0)) : prox;
  return shrunk / (T(1) + rate * l2);
}

// InvalidArgument "<op>: <what> is not a <kind> scalar: <value>" unless ok.
absl::Status CheckHyper(OpKernelContext* ctx, bool ok, const char* what, const char* kind,
                        double value) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(ctx->node().op(), ": ", what, " is not a ", kind, " scalar: ", value));
}

// Adagrad(var, accum, lr, grad; update_slots):
//   accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum).
struct AdagradRule : NoCheck {
  static constexpr int kVars = 2;
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 1> kScalars{2};
  static constexpr const char* kFlag = "update_slots";

  template <typename T, bool kSparse>
  static void Update(const T* s, bool update_slots, T* const* v, const T* __restrict g,
                     int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    const T lr = s[0];
    for (int64_t i = 0; i < n; ++i) {
      if (update_slots) accum[i] += g[i] * g[i];
      if (kSparse) {
        var[i] -= lr * g[i] / std::sqrt(accum[i]);
      } else {
        var[i] -= g[i] * lr * (T(1) / std::sqrt(accum[i]));
      }
    }
  }
};

// Momentum(var, accum, lr, grad, momentum; use_nesterov), the sparse forms
// only (the dense ones have their own kernel, training_kernels.cc):
//   accum = accum * momentum + grad
//   var -= lr * accum, or with Nesterov lr * grad + lr * momentum * accum.
// kKeras: Keras's rule (ResourceSparseApplyKerasMomentum only), the velocity
// holding the step itself, lr folded in:
//   accum = accum * momentum - lr * grad
//   var += accum, or with Nesterov accum * momentum - lr * grad.
template <bool kKeras>
struct MomentumRule : NoCheck {
  static constexpr int kVars = 2;
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 2> kScalars{2, 4};
  static constexpr const char* kFlag = "use_nesterov";

  template <typename T, bool kSparse>
  static void Update(const T* s, bool nesterov, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    const T lr = s[0], momentum = s[1];
    for (int64_t i = 0; i < n; ++i) {
      if (kKeras) {
        accum[i] = accum[i] * momentum - g[i] * lr;
        var[i] += nesterov ? accum[i] * momentum - g[i] * lr : accum[i];
        continue;
      }
      accum[i] = accum[i] * momentum + g[i];
      if (nesterov) {
        var[i] -= g[i] * lr + accum[i] * momentum * lr;
      } else {
        var[i] -= accum[i] * lr;
      }
    }
  }
};

// AdagradV2(var, accum, lr, epsilon, grad; update_slots):
//   accum += grad^2 (when update_slots); var -= lr * grad / (sqrt(accum) + epsilon).
struct AdagradV2Rule : NoCheck {
  static constexpr int kVars = 2;
  static constexpr int kGrad = 4;
  static constexpr std::array<int, 2> kScalars{2, 3};
  static constexpr const char* kFlag = "update_slots";

  template <typename T, bool kSparse>
  static void Update(const T* s, bool update_slots, T* const* v, const T* __restrict g,
                     int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    const T lr = s[0], epsilon = s[1];
    for (int64_t i = 0; i < n; ++i) {
      if (update_slots) accum[i] += g[i] * g[i];
      var[i] -= lr * g[i] / (std::sqrt(accum[i]) + epsilon);
    }
  }
};

// AdagradDA(var, gradient_accumulator, gradient_squared_accumulator, grad,
// lr, l1, l2, global_step): Adagrad's dual averaging, var solved afresh from
// the accumulated gradients each step (global_step, int64, read as T):
//   ga += grad; gsa += grad^2; d = l2 * global_step * lr + sqrt(gsa)
//   var = -sign(ga) * lr * max(|ga| - l1 * global_step, 0) / d   (l1 > 0)
//   var = -ga * lr / d                                           (otherwise)
// TensorFlow checks none of the values.
struct AdagradDARule : NoCheck {
  static constexpr int kVars = 3;
  static constexpr int kGrad = 3;
  static constexpr std::array<int, 4> kScalars{4, 5, 6, 7};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict ga = v[1];
    T* __restrict gsa = v[2];
    const T lr = s[0], l1 = s[1], l2 = s[2], step = s[3];
    const T decay = l2 * step * lr;
    for (int64_t i = 0; i < n; ++i) {
      ga[i] += g[i];
      gsa[i] += g[i] * g[i];
      const T denom = decay + std::sqrt(gsa[i]);
      if (l1 > T(0)) {
        var[i] = -Sign(ga[i]) * lr * std::max(std::abs(ga[i]) - step * l1, T(0)) / denom;
      } else {
        var[i] = -ga[i] * lr / denom;
      }
    }
  }
};

// ProximalGradientDescent(var, alpha, l1, l2, delta): FOBOS with a fixed rate
//   prox = var - alpha * delta
//   var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + alpha * l2)
struct ProximalGradientDescentRule {
  static constexpr int kVars = 1;
  static constexpr int kGrad = 4;
  static constexpr std::array<int, 3> kScalars{1, 2, 3};
  static constexpr const char* kFlag = nullptr;

  template <typename T>
  static absl::Status Check(OpKernelContext* ctx, const T* s) {
    RETURN_IF_ERROR(
        CheckHyper(ctx, s[1] >= T(0), "l1 regularization strength", "non-negative", s[1]));
    return CheckHyper(ctx, s[2] >= T(0), "l2 regularization strength", "non-negative", s[2]);
  }

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    const T alpha = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) var[i] = ProximalStep(var[i] - alpha * g[i], alpha, l1, l2);
  }
};

// ProximalAdagrad(var, accum, lr, l1, l2, grad): FOBOS with an Adagrad rate
//   accum += grad^2; rate = lr / sqrt(accum); prox = var - rate * grad
//   var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)
struct ProximalAdagradRule {
  static constexpr int kVars = 2;
  static constexpr int kGrad = 5;
  static constexpr std::array<int, 3> kScalars{2, 3, 4};
  static constexpr const char* kFlag = nullptr;

  template <typename T>
  static absl::Status Check(OpKernelContext* ctx, const T* s) {
    RETURN_IF_ERROR(CheckHyper(ctx, s[0] > T(0), "lr", "positive", s[0]));
    RETURN_IF_ERROR(
        CheckHyper(ctx, s[1] >= T(0), "l1 regularization strength", "non-negative", s[1]));
    return CheckHyper(ctx, s[2] >= T(0), "l2 regularization strength", "non-negative", s[2]);
  }

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    const T lr = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) {
      accum[i] += g[i] * g[i];
      const T rate = lr / std::sqrt(accum[i]);
      var[i] = ProximalStep(var[i] - g[i] * rate, rate, l1, l2);
    }
  }
};

// Adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
//   accum = rho * accum + (1 - rho) * grad^2
//   update = sqrt(accum_update + eps) / sqrt(accum + eps) * grad
//   var -= lr * update; accum_update = rho * accum_update + (1 - rho) * update^2
struct AdadeltaRule : NoCheck {
  static constexpr int kVars = 3;
  static constexpr int kGrad = 6;
  static constexpr std::array<int, 3> kScalars{3, 4, 5};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    T* __restrict accum_update = v[2];
    const T lr = s[0], rho = s[1], eps = s[2];
    for (int64_t i = 0; i < n; ++i) {
      accum[i] = accum[i] * rho + g[i] * g[i] * (T(1) - rho);
      const T update =
          std::sqrt(accum_update[i] + eps) * (T(1) / std::sqrt(accum[i] + eps)) * g[i];
      var[i] -= update * lr;
      accum_update[i] = accum_update[i] * rho + update * update * (T(1) - rho);
    }
  }
};

// RMSProp(var, ms, mom, lr, rho, momentum, epsilon, grad):
//   ms += (grad^2 - ms) * (1 - rho)     (sparse: ms = ms * rho + grad^2 * (1 - rho))
//   mom = mom * momentum + lr * grad / sqrt(ms + epsilon); var -= mom
struct RMSPropRule : NoCheck {
  static constexpr int kVars = 3;
  static constexpr int kGrad = 7;
  static constexpr std::array<int, 4> kScalars{3, 4, 5, 6};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict ms = v[1];
    T* __restrict mom = v[2];
    const T lr = s[0], rho = s[1], momentum = s[2], eps = s[3];
    for (int64_t i = 0; i < n; ++i) {
      const T g2 = g[i] * g[i];
      ms[i] = kSparse ? ms[i] * rho + g2 * (T(1) - rho) : ms[i] + (g2 - ms[i]) * (T(1) - rho);
      mom[i] = mom[i] * momentum + g[i] * lr / std::sqrt(ms[i] + eps);
      var[i] -= mom[i];
    }
  }
};

// CenteredRMSProp(var, mg, ms, mom, lr, rho, momentum, epsilon, grad): as
// RMSProp, with mg += (grad - mg) * (1 - rho) and the denominator
// sqrt(ms - mg^2 + epsilon).
struct CenteredRMSPropRule : NoCheck {
  static constexpr int kVars = 4;
  static constexpr int kGrad = 8;
  static constexpr std::array<int, 4> kScalars{4, 5, 6, 7};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict mg = v[1];
    T* __restrict ms = v[2];
    T* __restrict mom = v[3];
    const T lr = s[0], rho = s[1], momentum = s[2], eps = s[3];
    for (int64_t i = 0; i < n; ++i) {
      const T g2 = g[i] * g[i];
      if (kSparse) {
        ms[i] = ms[i] * rho + g2 * (T(1) - rho);
        mg[i] = mg[i] * rho + g[i] * (T(1) - rho);
      } else {
        ms[i] += (g2 - ms[i]) * (T(1) - rho);
        mg[i] += (g[i] - mg[i]) * (T(1) - rho);
      }
      const T denom = ms[i] - mg[i] * mg[i] + eps;
      mom[i] = mom[i] * momentum + g[i] * lr / std::sqrt(denom);
      var[i] -= mom[i];
    }
  }
};

}  // namespace

void RegisterAdaptiveTrainingKernels(KernelRegistry* kernels) {
  RegisterApplyRule<AdagradRule>(kernels, "Adagrad");
  RegisterSparseApplyRule<MomentumRule<false>>(kernels, "Momentum");
  RegisterSparseApplyRule<MomentumRule<true>>(kernels, "KerasMomentum", ApplyForms::kResourceOnly);
  RegisterApplyRule<AdagradV2Rule>(kernels, "AdagradV2");
  RegisterApplyRule<AdagradDARule>(kernels, "AdagradDA");
  RegisterApplyRule<ProximalGradientDescentRule>(kernels, "ProximalGradientDescent");
  RegisterApplyRule<ProximalAdagradRule>(kernels, "ProximalAdagrad");
  RegisterApplyRule<AdadeltaRule>(kernels, "Adadelta");
  RegisterApplyRule<RMSPropRule>(kernels, "RMSProp");
  RegisterApplyRule<CenteredRMSPropRule>(kernels, "CenteredRMSProp");
}

}  // namespace internal
}  // namespace sluice
