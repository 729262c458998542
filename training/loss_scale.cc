#include "training/loss_scale.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "placement/auto_mixed_precision.h"

namespace sluice {
namespace {

// True when every element of `t` is finite (a bool scalar).
Output AllFinite(const Scope& s, const Output& t) {
  Output axes = ops::Range(s, 0, ops::Rank(s, t), 1);
  return ops::All(s, ops::IsFinite(s, t), axes);
}

// `t` when `pred` holds; dead otherwise (so whatever consumes it is skipped).
Output OnlyIf(const Scope& s, const Output& t, const Output& pred) {
  return ops::Switch(s, t, pred).output_true;
}

}  // namespace

LossScaleOptimizer::LossScaleOptimizer(Optimizer* inner, DynamicLossScaleOptions options)
    : inner_(inner), options_(options) {}

absl::StatusOr<Node*> LossScaleOptimizer::Minimize(const Scope& scope, Output loss,
                                                   absl::Span<const Output> vars,
                                                   const Output* global_step) {
  if (inner_ == nullptr) return absl::InvalidArgumentError("LossScaleOptimizer: no optimizer");
  if (scale_.valid()) {
    return absl::InvalidArgumentError("LossScaleOptimizer: Minimize was already called");
  }
  if (!(options_.initial_scale >= 1.0) || options_.increment_period < 1 ||
      !(options_.multiplier > 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("LossScaleOptimizer: initial_scale (", options_.initial_scale,
                     ") must be >= 1, ", "increment_period (", options_.increment_period,
                     ") >= 1 and multiplier (", options_.multiplier, ") > 1"));
  }
  if (!loss.valid() || loss.dtype() != DT_FLOAT) {
    return absl::InvalidArgumentError("LossScaleOptimizer: the loss must be a float tensor");
  }
  const Scope s = scope.NewSubScope("loss_scale");
  ops::VariableAndInit scale = ops::VariableWithInit(
      s.WithOpName("scale"), ops::Const(s, static_cast<float>(options_.initial_scale)));
  ops::VariableAndInit good =
      ops::VariableWithInit(s.WithOpName("good_steps"), ops::Const(s, int64_t{0}));
  RETURN_IF_ERROR(s.status());
  scale_ = scale.var;
  good_steps_ = good.var;
  initializers_ = {scale.initializer, good.initializer};

  // Gradients of the scaled loss, unscaled in float.
  Output now = ops::Identity(s.WithOpName("scale_read"), scale_);
  ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                   inner_->ComputeGradients(scope, ops::Mul(s, loss, now), vars));
  Output inverse = ops::Reciprocal(s, now);
  Output finite = ops::Const(s, true);
  // In float even where the gradient came from a 16-bit product: an
  // unscaled gradient below float16's range would flush to zero, which is
  // what scaling is for (AutoMixedPrecision leaves these nodes float).
  auto unscale = [&](const Output& grad) {
    return s.Op("Mul").Input(grad).Input(inverse).Attr(kMixedPrecisionDenyAttr, true).Finalize1();
  };
  for (GradAndVar& g : grads) {
    if (g.grad.valid()) {
      g.grad = unscale(g.grad);
      finite = ops::LogicalAnd(s, finite, AllFinite(s, g.grad));
    } else if (g.sparse_grad.values.valid()) {
      g.sparse_grad.values = unscale(g.sparse_grad.values);
      finite = ops::LogicalAnd(s, finite, AllFinite(s, g.sparse_grad.values));
    }
  }
  finite = ops::Identity(s.WithOpName("all_finite"), finite);
  // The updates only when finite: their gradients come through a Switch.
  for (GradAndVar& g : grads) {
    if (g.grad.valid()) g.grad = OnlyIf(s, g.grad, finite);
    if (g.sparse_grad.values.valid()) {
      g.sparse_grad.values = OnlyIf(s, g.sparse_grad.values, finite);
      g.sparse_grad.indices = OnlyIf(s, g.sparse_grad.indices, finite);
    }
  }
  ASSIGN_OR_RETURN(Node * applied, inner_->ApplyGradients(scope, grads, global_step));
  // Live whichever way the step went (a Merge of the two branches' marks).
  Output applied_mark =
      ops::Const(s.WithControlDependencies(absl::Span<Node* const>(&applied, 1)), true);
  Output skipped_mark = ops::Identity(s, ops::Switch(s, finite, finite).output_false);
  Output done = ops::Merge(s.WithOpName("applied_or_skipped"), {applied_mark, skipped_mark}).output;

  // Then S moves: x multiplier after increment_period good steps, / multiplier
  // (not below 1) after a bad one.
  const Scope after = s.WithControlDependencies(absl::Span<const Output>(&done, 1));
  Output steps = ops::Add(after, ops::Identity(after, good_steps_), int64_t{1});
  Output period_done = ops::GreaterEqual(after, steps, options_.increment_period);
  const float m = static_cast<float>(options_.multiplier);
  // Never up to infinity (TensorFlow's assign-if-finite): an infinite scale
  // would skip every step from then on.
  Output doubled = ops::Mul(after, now, m);
  Output up = ops::SelectV2(
      after, ops::LogicalAnd(after, period_done, ops::IsFinite(after, doubled)), doubled, now);
  Output down = ops::Maximum(after, ops::Mul(after, now, 1.0f / m), 1.0f);
  Output new_scale = ops::SelectV2(after, finite, up, down);
  Output new_steps =
      ops::SelectV2(after, ops::LogicalAnd(after, finite, ops::LogicalNot(after, period_done)),
                    steps, int64_t{0});
  Output set_scale = ops::Assign(after, scale_, new_scale);
  Output set_steps = ops::Assign(after, good_steps_, new_steps);
  RETURN_IF_ERROR(s.status());
  const std::vector<Output> updates = {set_scale, set_steps};
  Node* train =
      ops::NoOp(s.WithOpName("train").WithControlDependencies(absl::Span<const Output>(updates)));
  RETURN_IF_ERROR(scope.status());
  return train;
}

}  // namespace sluice
