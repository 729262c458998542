// CPU arithmetic of the FTRL-proximal training ops (Ftrl, FtrlV2 with L2
// shrinkage) as Rules for ops/training/training_apply_shell.h, after TensorFlow's CPU
// functors (tensorflow/core/kernels/training_ops.cc). Per element, with
// p(x) = x^-lr_power (sqrt(x) when lr_power is -0.5):
//   g' = grad + 2 * l2_shrinkage * var              (FtrlV2; Ftrl: g' = grad)
//   accum_new = accum + grad^2                      (grad, not g')
//   linear += g' - (p(accum_new) - p(accum)) / lr * var
//   quadratic = p(accum_new) / lr + 2 * l2
//   var = |linear| > l1 ? (sign(linear) * l1 - linear) / quadratic : 0
//   accum = accum_new
// With multiply_linear_by_lr, linear holds lr times its value: the grad term
// is g' * lr, the accum term loses its "/ lr", l1 becomes l1 * lr and
// quadratic p(accum_new) + 2 * l2 * lr.
#include <array>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/training/training_apply_shell.h"

namespace sluice {
namespace internal {
namespace {

absl::Status CheckNonNegative(OpKernelContext* ctx, double value, const char* what) {
  if (value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": ", what,
                                                 " is not a non-negative scalar: ", value));
}

// kShrinkage: FtrlV2 (var, accum, linear, grad, lr, l1, l2, l2_shrinkage,
// lr_power); else Ftrl (var, accum, linear, grad, lr, l1, l2, lr_power).
template <bool kShrinkage>
struct FtrlRule {
  static constexpr int kVars = 3;
  static constexpr int kGrad = 3;
  // lr, l1, l2, [l2_shrinkage,] lr_power: inputs 4, 5, ...
  static constexpr std::array<int, kShrinkage ? 5 : 4> kScalars = [] {
    std::array<int, kShrinkage ? 5 : 4> a{};
    for (size_t i = 0; i < a.size(); ++i) a[i] = 4 + static_cast<int>(i);
    return a;
  }();
  static constexpr const char* kFlag = "multiply_linear_by_lr";

  template <typename T>
  static absl::Status Check(OpKernelContext* ctx, const T* s) {
    if (!(s[0] > T(0))) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": lr is not a positive scalar: ", s[0]));
    }
    RETURN_IF_ERROR(CheckNonNegative(ctx, s[1], "l1 regularization strength"));
    RETURN_IF_ERROR(CheckNonNegative(ctx, s[2], "l2 regularization strength"));
    if (kShrinkage) {
      RETURN_IF_ERROR(CheckNonNegative(ctx, s[3], "l2 shrinkage regularization strength"));
    }
    const T lr_power = s[kShrinkage ? 4 : 3];
    if (!(lr_power <= T(0))) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": lr_power is not a non-positive scalar: ", lr_power));
    }
    return absl::OkStatus();
  }

  template <typename T, bool kSparse>
  static void Update(const T* s, bool by_lr, T* const* v, const T* __restrict g, int64_t n) {
    T* __restrict var = v[0];
    T* __restrict accum = v[1];
    T* __restrict linear = v[2];
    const T lr = s[0], l1 = s[1], l2 = s[2];
    const T shrinkage = kShrinkage ? s[3] : T(0);
    const T lr_power = s[kShrinkage ? 4 : 3];
    const bool half = lr_power == T(-0.5);
    const auto p = [&](T x) { return half ? std::sqrt(x) : std::pow(x, -lr_power); };
    const T l1_eff = by_lr ? l1 * lr : l1;
    for (int64_t i = 0; i < n; ++i) {
      const T gs = kShrinkage ? g[i] + T(2) * shrinkage * var[i] : g[i];
      const T new_accum = accum[i] + g[i] * g[i];
      const T p_new = p(new_accum);
      const T sigma = p_new - p(accum[i]);
      T quadratic;
      if (by_lr) {
        linear[i] += gs * lr - sigma * var[i];
        quadratic = p_new + T(2) * l2 * lr;
      } else {
        linear[i] += gs - sigma / lr * var[i];
        quadratic = p_new / lr + T(2) * l2;
      }
      const T l = linear[i];
      var[i] = std::abs(l) > l1_eff ? ((l > T(0) ? l1_eff : -l1_eff) - l) / quadratic : T(0);
      accum[i] = new_accum;
    }
  }
};

}  // namespace

void RegisterFtrlTrainingKernels(KernelRegistry* kernels) {
  RegisterApplyRule<FtrlRule<false>>(kernels, "Ftrl");
  RegisterApplyRule<FtrlRule<true>>(kernels, "FtrlV2");
}

}  // namespace internal
}  // namespace sluice
