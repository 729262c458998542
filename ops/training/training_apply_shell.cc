// The shape checks the sparse training shells share
// (ops/training/training_apply_shell.h).
#include "ops/training/training_apply_shell.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace internal {

absl::Status CheckSparseShapes(OpKernelContext* ctx, const Var& var, const TensorShape& var_shape,
                               int grad_input) {
  const std::string& op = ctx->node().op();
  const TensorShape& grad = ctx->input(grad_input).shape();
  const TensorShape& indices = ctx->input(grad_input + 1).shape();
  if (indices.rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": indices must be one-dimensional, got shape ",
                                                   indices.DebugString()));
  }
  if (var_shape.rank() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": var ", var.name, " must be at least 1 dimensional"));
  }
  bool ok = grad.rank() == var_shape.rank() && grad.dim(0) == indices.dim(0);
  for (int d = 1; ok && d < var_shape.rank(); ++d) ok = grad.dim(d) == var_shape.dim(d);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      op, ": grad must have shape [len(indices)] + var.shape[1:]; var ", var.name, " has shape ",
      var_shape.DebugString(), ", indices ", indices.DebugString(), ", grad ",
      grad.DebugString()));
}

}  // namespace internal
}  // namespace sluice
