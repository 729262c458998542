// Pipeline parallelism (GPipe-style): a model cut into stages, each on its
// own device, trained on micro-batches so that the stages work at once.
//
//   PipelineStage first{.device = "/device:CPU:0", .create_variables = ..., .apply = ...};
//   PipelineStage second{.device = "/device:CPU:1", ...};
//   auto xent = [](const Scope& s, const Output& logits, absl::Span<const Output> t)
//       -> absl::StatusOr<Output> {
//     return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, t[0])[0], {0});
//   };
//   ASSIGN_OR_RETURN(Pipeline p, BuildPipeline(root, {first, second}, x, {labels}, xent,
//                                              {.num_micro_batches = 4}));
//   GradientDescentOptimizer sgd(0.1);
//   ASSIGN_OR_RETURN(Node* train, sgd.ApplyGradients(root, p.grads_and_vars));
//   // sess->Run({{x, batch_x}, {labels, batch_y}}, {p.loss}, {train})
//
// The batch (`input` and every `targets` tensor) is split along dimension 0
// into M equal micro-batches. Each stage creates its variables once; its
// `apply` is then built once per micro-batch on the stage's device, so every
// micro-batch runs through the same weights. The loss function runs on the
// last stage's device once per micro-batch and must return that micro-batch's
// mean loss; `Pipeline::loss` is the mean of the M losses, which is the batch
// mean. The backward pass of each stage is built on that stage's device
// (each micro-batch seeded with 1/M), so a variable's gradient is the sum of
// its M micro-batch gradients, accumulated on its device: one optimizer step
// per batch then equals the unpipelined step on the whole batch (up to float
// rounding). No schedule is imposed: the stages' partitions run concurrently
// and the dataflow executor starts micro-batch m+1 on one stage while m is on
// the next one, and a micro-batch's backward as soon as its loss is known.
//
// Node names: variables are named by `create_variables` (in the caller's
// scope); the forward pass of micro-batch m, stage s is built under
// "<name>/micro_batch<m>/<stage name>/", the backward of stage s under
// "<name>/backward/<stage name>/", and the outputs below under "<name>/".
//
// Errors (InvalidArgument): no stages, fewer than one micro-batch, an invalid
// input or target, no loss function, a stage with no `apply`, a batch whose
// static size does not divide into M (a batch of unknown size that does not
// divide fails at run time in the node "<name>/split_input", naming both
// numbers), targets whose static row count differs from the input's, no
// stage creating a variable, a loss that is not a float or double scalar.
// Errors of the stage and loss functions and of AddGradients come back with
// the stage and micro-batch added.
//
// Thread-compatible: builds into the scope's graph from one thread.
// Ownership: every node belongs to the scope's graph; `stages` and the
// functions are only called during BuildPipeline.
#ifndef SLUICE_PLACEMENT_PIPELINE_H_
#define SLUICE_PLACEMENT_PIPELINE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"

namespace sluice {

// The layers of one pipeline stage and the device they run on.
struct PipelineStage {
  // A (partial) device name, e.g. "/device:GPU:1"; "" keeps the caller's.
  std::string device;
  // Name scope of the stage's nodes; "" means "stage<s>".
  std::string name;
  // Creates the stage's trainable variables, once, in the caller's scope
  // with `device`; returns their ref outputs. May create none.
  std::function<absl::StatusOr<std::vector<Output>>(const Scope& scope)> create_variables;
  // The stage's computation on one micro-batch: called once per micro-batch
  // with that micro-batch's input (the previous stage's output) and the
  // variables create_variables returned.
  std::function<absl::StatusOr<Output>(const Scope& scope, const Output& input,
                                       absl::Span<const Output> variables)>
      apply;
};

// The mean loss (float scalar) of one micro-batch, given the last stage's
// output and the micro-batch's rows of each `targets` tensor.
using PipelineLossFn = std::function<absl::StatusOr<Output>(
    const Scope& scope, const Output& output, absl::Span<const Output> targets)>;

struct PipelineOptions {
  int num_micro_batches = 1;  // M; the batch size must be a multiple of it
  std::string name = "pipeline";
};

struct Pipeline {
  // Mean of the micro-batch losses ("<name>/loss"), on the last device.
  Output loss;
  // The last stage's output for the whole batch, the micro-batches'
  // outputs concatenated in order ("<name>/output"), on the last device.
  Output output;
  // Every stage's variables in stage order, each with its gradient summed
  // over the micro-batches (invalid when the loss does not depend on it):
  // ready for Optimizer::ApplyGradients.
  std::vector<GradAndVar> grads_and_vars;
  // Per micro-batch: the last stage's output and the loss.
  std::vector<Output> micro_batch_outputs;
  std::vector<Output> micro_batch_losses;
};

absl::StatusOr<Pipeline> BuildPipeline(const Scope& scope, absl::Span<const PipelineStage> stages,
                                       const Output& input, absl::Span<const Output> targets,
                                       const PipelineLossFn& loss_fn,
                                       const PipelineOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_PIPELINE_H_
