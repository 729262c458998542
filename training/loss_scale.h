// LossScaleOptimizer: dynamic loss scaling around another optimizer, as
// TensorFlow 1.x's mixed-precision LossScaleOptimizer does. float16 keeps
// gradients down to about 6e-8; smaller ones flush to zero. Scaling the loss
// by S (2^15 to start) scales every gradient by S, the optimizer applies
// them divided by S in float, and a step whose gradients are not all finite
// (the scale overflowed float16) is skipped and halves S; after
// `increment_period` good steps in a row S doubles.
//
//   GradientDescentOptimizer sgd(0.1);
//   LossScaleOptimizer scaled(&sgd);
//   ASSIGN_OR_RETURN(Node* train, scaled.Minimize(s.WithOpName("train"), loss, vars));
//   ... session.Run(..., {train}); scaled.loss_scale() is the scale now ...
//
// A skipped step runs no update of the wrapped optimizer (no slot moves, and
// `global_step` does not advance): the updates sit behind a Switch on "all
// gradients finite" and the train op waits on a Merge, so it runs either
// way. Pair it with SessionConfig::MixedPrecision::kFloat16
// (placement/auto_mixed_precision.h); bfloat16 has float's range and needs
// no scaling.
//
// Thread-compatible (like Scope).
#ifndef SLUICE_TRAINING_LOSS_SCALE_H_
#define SLUICE_TRAINING_LOSS_SCALE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"

namespace sluice {

struct DynamicLossScaleOptions {
  double initial_scale = 32768.0;  // 2^15, TensorFlow's
  int64_t increment_period = 2000;
  double multiplier = 2.0;  // up after a good period, down after a bad step
};

class LossScaleOptimizer {
 public:
  // Borrows `inner`, which must outlive this.
  explicit LossScaleOptimizer(Optimizer* inner, DynamicLossScaleOptions options = {});
  LossScaleOptimizer(const LossScaleOptimizer&) = delete;
  LossScaleOptimizer& operator=(const LossScaleOptimizer&) = delete;

  // The gradients of loss * S, divided by S, applied by `inner` when all are
  // finite; then S moves. InvalidArgument for a non-float loss, bad
  // options, a second Minimize, or the inner optimizer's errors.
  absl::StatusOr<Node*> Minimize(const Scope& scope, Output loss, absl::Span<const Output> vars,
                                 const Output* global_step = nullptr);

  // The scale variable (float scalar) and the count of good steps (int64);
  // invalid before Minimize.
  const Output& loss_scale() const { return scale_; }
  const Output& good_steps() const { return good_steps_; }
  // Initializers of the two variables above.
  const std::vector<Node*>& initializers() const { return initializers_; }

 private:
  Optimizer* const inner_;
  const DynamicLossScaleOptions options_;
  Output scale_;
  Output good_steps_;
  std::vector<Node*> initializers_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_LOSS_SCALE_H_
