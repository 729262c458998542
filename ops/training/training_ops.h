// Training ops: the in-place variable updates optimizers are built from —
// ApplyGradientDescent, ApplyMomentum, ApplyAdam, the adaptive rules
// (Adagrad, AdagradV2, ProximalGradientDescent, ProximalAdagrad, Adadelta,
// RMSProp, CenteredRMSProp, Ftrl, FtrlV2), AdaMax, AddSign, PowerSign, each
// with its Sparse and Resource forms where TensorFlow has them, and the
// resource-only ResourceApplyKerasMomentum, ResourceSparseApplyKerasMomentum
// and ResourceApplyAdamWithAmsgrad (TensorFlow's names, inputs and attrs) —
// with CPU kernels for float and double and typed wrappers for the common
// ones; the others are built with scope.Op("ResourceApplyAdaMax")... .
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
//   Output grad = ...;                                   // float [2]
//   Output out = ops::ApplyGradientDescent(s, w, 0.1f, grad);   // w -= 0.1 * grad
//
// Updates (lr, alpha, beta*, epsilon, momentum are scalars):
//   ApplyGradientDescent: var -= alpha * delta
//   ApplyMomentum:        accum = accum * momentum + grad
//                         var -= lr * accum                       (plain)
//                         var -= lr * grad + lr * momentum * accum  (nesterov)
//   ApplyAdam:            lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//                         m += (grad - m) * (1 - beta1)
//                         v += (grad^2 - v) * (1 - beta2)
//                         var -= lr_t * m / (sqrt(v) + epsilon)     (plain)
//                         var -= lr_t * (beta1 * m + (1 - beta1) * grad)
//                                / (sqrt(v) + epsilon)              (nesterov)
// Each ref form returns `var` (Ref(T)); the Resource forms return nothing.
// The formulas of the others are in their kernels' comments
// (training_kernels_adaptive.cc, _ftrl.cc, _keras.cc, _sign.cc).
//
// Kernels hold every updated variable's lock for the whole update, whatever
// use_locking says, and write copy-on-write, except the SparseApply* forms,
// which write their rows in place (VarUpdate::BeginInPlace in
// ops/state/state_ops.h says why).
// Errors: FailedPrecondition "Attempting to use uninitialized value <name>";
// InvalidArgument naming the shapes when var, slots and grad differ or a
// hyper-parameter is not a scalar, and when var and a slot are one variable.
// Thread-safety: kernels are thread-safe; graph building is thread-compatible.
#ifndef SLUICE_OPS_TRAINING_TRAINING_OPS_H_
#define SLUICE_OPS_TRAINING_TRAINING_OPS_H_

#include "base/source_location.h"

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterTrainingOps(OpRegistry* ops);
void RegisterTrainingKernels(KernelRegistry* kernels);

namespace ops {

struct ApplyGradientDescentAttrs {
  bool use_locking = false;
};
Output ApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                            const ApplyGradientDescentAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());

struct ApplyMomentumAttrs {
  bool use_locking = false;
  bool use_nesterov = false;
};
Output ApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                     Input momentum, const ApplyMomentumAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
// The rows `indices` of var and accum only, in index order (TensorFlow's
// SparseApplyMomentum; ResourceSparseApplyMomentum on handles).
Output SparseApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                           Input indices, Input momentum, const ApplyMomentumAttrs& attrs = {},
                           std::source_location loc = std::source_location::current());

struct ApplyAdamAttrs {
  bool use_locking = false;
  bool use_nesterov = false;
};
Output ApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power,
                 Input beta2_power, Input lr, Input beta1, Input beta2, Input epsilon, Input grad,
                 const ApplyAdamAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

// The adaptive rules (TensorFlow's CPU formulas; see
// ops/training/training_kernels_adaptive.cc and ops/training/training_kernels_ftrl.cc):
//   ApplyAdagrad:         accum += grad^2 (update_slots); var -= lr * grad / sqrt(accum)
//   ApplyProximalAdagrad: accum += grad^2; rate = lr / sqrt(accum); p = var - rate * grad;
//                         var = sign(p) * max(|p| - rate * l1, 0) / (1 + rate * l2)
//   ApplyAdadelta:        accum = rho * accum + (1 - rho) * grad^2;
//                         u = sqrt(accum_update + eps) / sqrt(accum + eps) * grad;
//                         var -= lr * u; accum_update = rho * accum_update + (1 - rho) * u^2
//   ApplyRMSProp:         ms += (grad^2 - ms) * (1 - rho);
//                         mom = momentum * mom + lr * grad / sqrt(ms + eps); var -= mom
//   ApplyCenteredRMSProp: also mg += (grad - mg) * (1 - rho); denominator
//                         sqrt(ms - mg^2 + eps)
//   ApplyAdagradDA:       ga += grad; gsa += grad^2; d = l2 * global_step * lr + sqrt(gsa);
//                         var = -sign(ga) * lr * max(|ga| - l1 * global_step, 0) / d
//                         (var = -ga * lr / d when l1 <= 0); global_step is int64
//   ApplyFtrl, ApplyFtrlV2 (l2_shrinkage): FTRL-proximal, see training_kernels_ftrl.cc.
// Ftrl and ProximalAdagrad check their hyper-parameters (lr > 0, l1, l2,
// l2_shrinkage >= 0, lr_power <= 0) with InvalidArgument.
// Each SparseApply* form takes `indices` (int32 or int64, a vector) after
// grad and updates only the rows var[indices[i]] with grad[i], in order
// (duplicates apply one after another); grad is [len(indices)] +
// var.shape[1:]. An index outside [0, var.dim(0)) is InvalidArgument, and
// nothing is written.
struct ApplyAttrs {
  bool use_locking = false;
};
struct ApplyAdagradAttrs {
  bool use_locking = false;
  bool update_slots = true;
};
struct ApplyFtrlAttrs {
  bool use_locking = false;
  bool multiply_linear_by_lr = false;
};
Output ApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                    const ApplyAdagradAttrs& attrs = {},
                    std::source_location loc = std::source_location::current());
Output SparseApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad,
                          Input indices, const ApplyAdagradAttrs& attrs = {},
                          std::source_location loc = std::source_location::current());
Output ApplyProximalAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input l1,
                            Input l2, Input grad, const ApplyAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());
Output SparseApplyProximalAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input l1,
                                  Input l2, Input grad, Input indices,
                                  const ApplyAttrs& attrs = {},
                                  std::source_location loc = std::source_location::current());
Output ApplyAdadelta(const Scope& scope, Input var, Input accum, Input accum_update, Input lr,
                     Input rho, Input epsilon, Input grad, const ApplyAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output SparseApplyAdadelta(const Scope& scope, Input var, Input accum, Input accum_update,
                           Input lr, Input rho, Input epsilon, Input grad, Input indices,
                           const ApplyAttrs& attrs = {},
                           std::source_location loc = std::source_location::current());
// global_step is int64 (pass int64_t{n} or an int64 tensor).
Output ApplyAdagradDA(const Scope& scope, Input var, Input gradient_accumulator,
                      Input gradient_squared_accumulator, Input grad, Input lr, Input l1,
                      Input l2, Input global_step, const ApplyAttrs& attrs = {},
                      std::source_location loc = std::source_location::current());
Output SparseApplyAdagradDA(const Scope& scope, Input var, Input gradient_accumulator,
                            Input gradient_squared_accumulator, Input grad, Input indices,
                            Input lr, Input l1, Input l2, Input global_step,
                            const ApplyAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());
Output ApplyRMSProp(const Scope& scope, Input var, Input ms, Input mom, Input lr, Input rho,
                    Input momentum, Input epsilon, Input grad, const ApplyAttrs& attrs = {},
                    std::source_location loc = std::source_location::current());
Output SparseApplyRMSProp(const Scope& scope, Input var, Input ms, Input mom, Input lr, Input rho,
                          Input momentum, Input epsilon, Input grad, Input indices,
                          const ApplyAttrs& attrs = {},
                          std::source_location loc = std::source_location::current());
Output ApplyCenteredRMSProp(const Scope& scope, Input var, Input mg, Input ms, Input mom, Input lr,
                            Input rho, Input momentum, Input epsilon, Input grad,
                            const ApplyAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());
Output SparseApplyCenteredRMSProp(const Scope& scope, Input var, Input mg, Input ms, Input mom,
                                  Input lr, Input rho, Input momentum, Input epsilon, Input grad,
                                  Input indices, const ApplyAttrs& attrs = {},
                                  std::source_location loc = std::source_location::current());
Output ApplyFtrl(const Scope& scope, Input var, Input accum, Input linear, Input grad, Input lr,
                 Input l1, Input l2, Input lr_power, const ApplyFtrlAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
Output SparseApplyFtrl(const Scope& scope, Input var, Input accum, Input linear, Input grad,
                       Input indices, Input lr, Input l1, Input l2, Input lr_power,
                       const ApplyFtrlAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());
Output ApplyFtrlV2(const Scope& scope, Input var, Input accum, Input linear, Input grad, Input lr,
                   Input l1, Input l2, Input l2_shrinkage, Input lr_power,
                   const ApplyFtrlAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());
Output SparseApplyFtrlV2(const Scope& scope, Input var, Input accum, Input linear, Input grad,
                         Input indices, Input lr, Input l1, Input l2, Input l2_shrinkage,
                         Input lr_power, const ApplyFtrlAttrs& attrs = {},
                         std::source_location loc = std::source_location::current());

// The ResourceApply* forms (ResourceApplyGradientDescent, ResourceApplyMomentum,
// ResourceApplyAdam) take resource handles (ops/state/resource_variable_ops.h) in
// place of the variables and output nothing. So do ResourceApplyAdagrad,
// ResourceSparseApplyAdagrad and the other adaptive rules' resource forms
// (build them with scope.Op("ResourceSparseApplyFtrl")...), and the
// resource-only Keras ones (ResourceApplyKerasMomentum: accum = accum *
// momentum - lr * grad; var += accum, or with Nesterov accum * momentum -
// lr * grad).
Node* ResourceApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                                   const ApplyGradientDescentAttrs& attrs = {},
                                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_TRAINING_OPS_H_
