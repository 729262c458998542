// Training ops: the in-place variable updates optimizers are built from —
// ApplyGradientDescent, ApplyMomentum, ApplyAdam (TensorFlow's names, inputs
// and attrs) — with CPU kernels for float and double and typed wrappers.
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
// Each returns `var` (Ref(T)).
//
// Kernels hold every updated variable's lock for the whole update, whatever
// use_locking says, and write copy-on-write (see ops/state_ops.h).
// Errors: FailedPrecondition "Attempting to use uninitialized value <name>";
// InvalidArgument naming the shapes when var, slots and grad differ or a
// hyper-parameter is not a scalar, and when var and a slot are one variable.
// Thread-safety: kernels are thread-safe; graph building is thread-compatible.
#ifndef SLUICE_OPS_TRAINING_OPS_H_
#define SLUICE_OPS_TRAINING_OPS_H_

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

struct ApplyAdamAttrs {
  bool use_locking = false;
  bool use_nesterov = false;
};
Output ApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power,
                 Input beta2_power, Input lr, Input beta1, Input beta2, Input epsilon, Input grad,
                 const ApplyAdamAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

// The ResourceApply* forms (ResourceApplyGradientDescent, ResourceApplyMomentum,
// ResourceApplyAdam) take resource handles (ops/resource_variable_ops.h) in
// place of the variables and output nothing.
Node* ResourceApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta,
                                   const ApplyGradientDescentAttrs& attrs = {},
                                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_OPS_H_
