// In-graph replication: turns a single-tower training graph into K towers
// that each compute the loss and gradients of one slice of the batch on their
// own device, and averages the gradients once per shared variable, ready for
// any Optimizer::ApplyGradients (data parallelism within one session).
//
//   // The forward graph only: inputs, variables, a loss averaged over the batch.
//   Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, 784}});
//   ...  Output loss = ops::Mean(s.WithOpName("loss"), xent, {0});
//   ReplicationOptions opts;
//   opts.devices = {"/device:CPU:1", "/device:CPU:2"};
//   opts.batch_inputs = {x, labels};
//   opts.loss = loss;
//   opts.variables = {w1, b1, w2, b2};
//   ASSIGN_OR_RETURN(ReplicatedGraph r, ReplicateTraining(s, opts));
//   GradientDescentOptimizer sgd(0.1);
//   ASSIGN_OR_RETURN(Node* train, sgd.ApplyGradients(s.WithOpName("train"), r.grads_and_vars));
//   // sess->Run({{x, batch_of_2B}, {labels, ...}}, {r.loss}, {train}), with
//   // SessionConfig::devices.num_virtual_cpus = 2.
//
// What it adds, for tower k = 0..K-1 on devices[k]:
//  - a Split of each batch input along dim 0 into K equal slices (on the
//    input's requested device, else the variables' device); tower k reads
//    slice k. A batch whose size K does not divide fails: at build time when
//    the size is static, else at run time in the Split ("replicate/split_<x>");
//  - a copy of the forward subgraph, "tower_<k>/<original name>" (under the
//    scope's name prefix), requesting devices[k]. It copies every node the
//    loss depends on (through data and control edges) up to the batch inputs,
//    except the shared state: variable nodes (no inputs, a ref output), the
//    Identity nodes reading them, and Placeholders that are not batch inputs
//    (fed once, read by every tower). A copy's colocation entries ("_class")
//    are redirected to the tower's copies; entries naming shared nodes are
//    dropped, so a tower never drags a variable off its device;
//  - tower k's gradients (AddGradients, "tower_<k>/gradients/...", on
//    devices[k]) of its loss with respect to the variables.
// Then, on each variable's device, the average of its K gradients (AddN times
// 1/K, "replicate/<var>/mean_grad") and the mean of the K tower losses
// ("replicate/loss"). With K = 1 the tower's gradients and loss are used
// directly. Variables with no requested device are pinned to
// options.variable_device, so their Assign/Apply ops follow them.
//
// Since each tower's loss averages over its B examples and the towers share
// the variables, the averaged gradient equals the gradient of the original
// loss over the K*B batch (up to float rounding): K towers with a K*B batch
// train like one device with that batch.
//
// The original forward nodes stay in the graph, untouched (no device added): they
// still compute the loss, prediction, accuracy, ... of a whole batch on one
// device, which is handy for evaluation; a training step that fetches only
// the ReplicatedGraph outputs prunes them away.
//
// Errors (InvalidArgument, naming the node): no devices; an empty or
// malformed device name; no batch inputs, or a batch input the loss does not
// depend on, or whose static batch size K does not divide; no variables, or
// one that is not a variable's ref output; a loss that is not a scalar or does
// not depend on any of the variables; errors of AddGradients (a node on the
// path without a gradient function). A variable the loss does not depend on
// gets an invalid grad, as with Optimizer::ComputeGradients (ApplyGradients
// skips it). On error the graph may hold some of the new nodes; discard it.
//
// Thread-compatible: it adds nodes to the scope's graph, so no other thread
// may build in it meanwhile. Ownership: the new nodes belong to the graph;
// the returned handles borrow them.
#ifndef SLUICE_PLACEMENT_REPLICATE_H_
#define SLUICE_PLACEMENT_REPLICATE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"

namespace sluice {

struct ReplicationOptions {
  // One tower per entry; (partial) device names such as "/device:CPU:1".
  // The same device may appear twice (two towers sharing it).
  std::vector<std::string> devices;
  // Tensors whose dim 0 is the batch (usually Placeholders): each is split
  // into devices.size() equal slices, one per tower.
  std::vector<Output> batch_inputs;
  // A scalar that averages over the batch (e.g. a Mean of cross-entropies).
  Output loss;
  // The shared variables to train: VariableV2 ref outputs.
  std::vector<Output> variables;
  // Where variables with no requested device live, and so where gradients
  // are averaged and updates applied.
  std::string variable_device = "/device:CPU:0";
  // More tensors each tower should compute on its slice of the batch (e.g.
  // an accuracy): copied into every tower with what they depend on, like the
  // loss; ReplicatedGraph::tower_outputs holds the copies. Each must depend
  // only on the batch inputs and shared state, like the loss.
  std::vector<Output> tower_outputs;
};

struct ReplicatedGraph {
  // One entry per options.variables entry, in order: the tower-averaged
  // gradient (invalid when the loss does not depend on the variable).
  std::vector<GradAndVar> grads_and_vars;
  // The mean of the tower losses: the loss of the whole batch.
  Output loss;
  // Tower k's loss, over its slice of the batch.
  std::vector<Output> tower_losses;
  // tower_outputs[k][i]: tower k's copy of options.tower_outputs[i].
  std::vector<std::vector<Output>> tower_outputs;

  // Tower k's copy of an original forward tensor (e.g. the logits), or an
  // invalid Output when that node was not copied (shared state, batch
  // inputs, nodes the loss does not need).
  Output InTower(int tower, const Output& original) const;

  // Per tower: original node -> its copy.
  std::vector<absl::flat_hash_map<const Node*, Node*>> tower_nodes;
};

absl::StatusOr<ReplicatedGraph> ReplicateTraining(const Scope& scope,
                                                  const ReplicationOptions& options);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_REPLICATE_H_
