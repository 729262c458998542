// CPU arithmetic of the sign-based training ops — AddSign and PowerSign
// (Bello et al., "Neural Optimizer Search with Reinforcement Learning") — as
// Rules for the shells of ops/training/training_apply_shell.h. The formulas
// are those of TensorFlow's CPU functors
// (tensorflow/core/kernels/training_ops.cc): sign(0) is 0.
#include <array>
#include <cmath>
#include <cstdint>

#include "ops/training/training_apply_shell.h"

namespace sluice {
namespace internal {
namespace {

// Both rules share var, m, lr and beta's places:
//   m = m * beta + g * (1 - beta); agree = sign(g) * sign(m)
// AddSign(var, m, lr, alpha, sign_decay, beta, grad):
//   var -= lr * (alpha + sign_decay * agree) * g
// PowerSign(var, m, lr, logbase, sign_decay, beta, grad):
//   var -= lr * exp(logbase * sign_decay * agree) * g
template <bool kPower>
struct SignRule : NoCheck {
  static constexpr int kVars = 2;
  static constexpr int kGrad = 6;
  static constexpr std::array<int, 4> kScalars{2, 3, 4, 5};
  static constexpr const char* kFlag = nullptr;

  template <typename T, bool kSparse>
  static void Update(const T* s, bool, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict m = v[1];
    const T lr = s[0], base = s[1], sign_decay = s[2], beta = s[3];
    for (int64_t i = 0; i < n; ++i) {
      m[i] = m[i] * beta + g[i] * (T(1) - beta);
      const T agree = Sign(g[i]) * Sign(m[i]);
      const T scale = kPower ? std::exp(base * sign_decay * agree) : base + sign_decay * agree;
      var[i] -= lr * scale * g[i];
    }
  }
};

}  // namespace

void RegisterSignTrainingKernels(KernelRegistry* kernels) {
  RegisterDenseApplyRule<SignRule<false>>(kernels, "AddSign");
  RegisterDenseApplyRule<SignRule<true>>(kernels, "PowerSign");
}

}  // namespace internal
}  // namespace sluice
