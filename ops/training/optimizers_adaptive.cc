// TensorFlow 1.x's RMSProp and Adadelta optimizers (ops/training/optimizers.h):
// slots, then one Apply* per variable, or SparseApply* on the deduplicated
// rows of a sparse gradient (as TensorFlow's Optimizer base class does).
#include <string>

#include "base/status_macros.h"
#include "ops/training/optimizers.h"
#include "ops/training/training_ops.h"

namespace sluice {

absl::Status RMSPropOptimizer::Prepare(const Scope& scope,
                                       absl::Span<const GradAndVar> grads_and_vars) {
  for (const GradAndVar& gv : grads_and_vars) {
    // TensorFlow's order, which names them: rms, (mg,) momentum.
    if (!GetSlot(gv.var, "rms").valid()) {
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "rms", 1.0).status());
    }
    if (options_.centered && !GetSlot(gv.var, "mg").valid()) {
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "mg", 0.0).status());
    }
    if (!GetSlot(gv.var, "momentum").valid()) {
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "momentum", 0.0).status());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> RMSPropOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                   const Output& var) {
  const Input lr(learning_rate_), rho(options_.decay), momentum(options_.momentum),
      epsilon(options_.epsilon);
  const Output rms = GetSlot(var, "rms"), mom = GetSlot(var, "momentum");
  Output out = options_.centered
                   ? ops::ApplyCenteredRMSProp(scope, var, GetSlot(var, "mg"), rms, mom, lr, rho,
                                               momentum, epsilon, grad)
                   : ops::ApplyRMSProp(scope, var, rms, mom, lr, rho, momentum, epsilon, grad);
  return Built(scope, out.node);
}

absl::StatusOr<Node*> RMSPropOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                                    const Output& var) {
  const IndexedSlices unique = DeduplicateIndexedSlices(scope, grad);
  const Input lr(learning_rate_), rho(options_.decay), momentum(options_.momentum),
      epsilon(options_.epsilon);
  const Output rms = GetSlot(var, "rms"), mom = GetSlot(var, "momentum");
  Output out = options_.centered
                   ? ops::SparseApplyCenteredRMSProp(scope, var, GetSlot(var, "mg"), rms, mom, lr,
                                                     rho, momentum, epsilon, unique.values,
                                                     unique.indices)
                   : ops::SparseApplyRMSProp(scope, var, rms, mom, lr, rho, momentum, epsilon,
                                             unique.values, unique.indices);
  return Built(scope, out.node);
}

absl::Status AdadeltaOptimizer::Prepare(const Scope& scope,
                                        absl::Span<const GradAndVar> grads_and_vars) {
  for (const GradAndVar& gv : grads_and_vars) {
    for (const char* slot : {"accum", "accum_update"}) {
      if (GetSlot(gv.var, slot).valid()) continue;
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, slot, 0.0).status());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> AdadeltaOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                    const Output& var) {
  Output out = ops::ApplyAdadelta(scope, var, GetSlot(var, "accum"), GetSlot(var, "accum_update"),
                                  Input(learning_rate_), Input(rho_), Input(epsilon_), grad);
  return Built(scope, out.node);
}

absl::StatusOr<Node*> AdadeltaOptimizer::ApplySparse(const Scope& scope,
                                                     const IndexedSlices& grad,
                                                     const Output& var) {
  const IndexedSlices unique = DeduplicateIndexedSlices(scope, grad);
  Output out = ops::SparseApplyAdadelta(
      scope, var, GetSlot(var, "accum"), GetSlot(var, "accum_update"), Input(learning_rate_),
      Input(rho_), Input(epsilon_), unique.values, unique.indices);
  return Built(scope, out.node);
}

}  // namespace sluice
