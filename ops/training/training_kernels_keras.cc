// CPU arithmetic of two training ops TensorFlow added for Keras's optimizers
// — AdamWithAmsgrad (resource only) and AdaMax — as Rules for the shells of
// ops/training/training_apply_shell.h. The formulas are those of
// TensorFlow's CPU functors (tensorflow/core/kernels/training_ops.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "ops/training/training_apply_shell.h"

namespace sluice {
namespace internal {
namespace {

// AdamWithAmsgrad(var, m, v, vhat, beta1_power, beta2_power, lr, beta1,
// beta2, epsilon, grad): Adam whose denominator never shrinks:
//   m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2); vhat = max(vhat, v)
//   var -= lr sqrt(1 - beta2_power) / (1 - beta1_power) * m / (sqrt(vhat) + epsilon)
struct AdamWithAmsgradRule : NoCheck {
  static constexpr int kVars = 4;
  static constexpr int kGrad = 10;
  static constexpr std::array<int, 6> kScalars{4, 5, 6, 7, 8, 9};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict m = v[1];
    T* __restrict vv = v[2];
    T* __restrict vhat = v[3];
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            epsilon = s[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    for (int64_t i = 0; i < n; ++i) {
      m[i] += (g[i] - m[i]) * (T(1) - beta1);
      vv[i] += (g[i] * g[i] - vv[i]) * (T(1) - beta2);
      vhat[i] = std::max(vhat[i], vv[i]);
      var[i] -= m[i] * alpha / (std::sqrt(vhat[i]) + epsilon);
    }
  }
};

// AdaMax(var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad): Adam with
// the infinity norm (Kingma and Ba, section 7.1):
//   m += (g - m)(1 - beta1); v = max(beta2 v, |g|)
//   var -= lr / (1 - beta1_power) * m / (v + epsilon)
struct AdaMaxRule : NoCheck {
  static constexpr int kVars = 3;
  static constexpr int kGrad = 8;
  static constexpr std::array<int, 5> kScalars{3, 4, 5, 6, 7};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict m = v[1];
    T* __restrict u = v[2];
    const T beta1_power = s[0], lr = s[1], beta1 = s[2], beta2 = s[3], epsilon = s[4];
    const T rate = lr / (T(1) - beta1_power);
    for (int64_t i = 0; i < n; ++i) {
      m[i] += (g[i] - m[i]) * (T(1) - beta1);
      u[i] = std::max(beta2 * u[i], std::abs(g[i]));
      var[i] -= rate * (m[i] / (u[i] + epsilon));
    }
  }
};

}  // namespace

void RegisterKerasTrainingKernels(KernelRegistry* kernels) {
  RegisterDenseApplyRule<AdamWithAmsgradRule>(kernels, "AdamWithAmsgrad",
                                              ApplyForms::kResourceOnly);
  RegisterDenseApplyRule<AdaMaxRule>(kernels, "AdaMax");
}

}  // namespace internal
}  // namespace sluice
