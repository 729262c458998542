// Synchronous data-parallel training across worker tasks (TensorFlow's
// SyncReplicasOptimizer), built from the data-flow ops (ops/data_flow/data_flow_ops.h):
// every step, the chief waits for gradients from replicas_to_aggregate
// workers, applies their average once with an ordinary Optimizer, advances
// the global step and releases the workers into the next step.
//
//   // Each task builds the same graph (between-graph replication):
//   Output loss = ...;                                  // this worker's batch
//   GlobalStep gs = CreateGlobalStep(s);
//   GradientDescentOptimizer sgd(0.1);
//   ASSIGN_OR_RETURN(std::vector<GradAndVar> gv, sgd.ComputeGradients(s, loss, vars));
//   ASSIGN_OR_RETURN(SyncReplicas sync, BuildSyncReplicas(s, &sgd, gv, gs.ref,
//                                                         {.replicas_to_aggregate = 3,
//                                                          .total_num_replicas = 3}));
//   Node* init = ops::GlobalVariablesInitializer(s);   // after: it finds optimizer slots
//   ASSIGN_OR_RETURN(auto ps, ApplyReplicaDeviceSetter(s.graph(), setter_options));
//
// The protocol (every run names the tensors above):
//   chief, once, after init (or a restore):  run(set_global_step); run(init_tokens)
//   chief, in a thread of its own:           loop { run(chief_update) }
//   every worker (the chief's worker too):   step = run(token)   // waits until open
//                                            loop {
//       step = run(apply_gradients, fetch next_token,
//                  feeds {local_step: step, the worker's batch})
//   }
// One run a step: next_token is dequeued after this worker's gradients are
// in, so it waits for the chief's update of the step. (Fetching `token`
// in a run of its own before each step works too, at a round trip more.)
// A next_token that times out (take_timeout_ms; the chief is evaluating or
// gone) fails the run after the contribution was made: take the next token
// with run(token) then.
// The first token of each worker is one of init_tokens; after that, each
// chief_update releases max(total_num_replicas, replicas_to_aggregate) tokens
// holding the new global step. (TensorFlow's order — apply, then dequeue,
// starting from a local step read from global_step — would, with init
// tokens, let every worker apply twice to the first step; taking the token
// first gives each worker one contribution per token.)
//
// What the nodes do ("sync_replicas/..." unless said otherwise):
//  - apply_gradients: per variable v, AccumulatorApplyGradient to the
//    accumulator "<v>/grad_accum" (colocated with v) of the gradient, tagged
//    with the fed local_step. A gradient for a step the chief has finished is
//    stale: dropped (so with replicas_to_aggregate < total_num_replicas the
//    slowest workers are backups whose late gradients are ignored);
//  - chief_update: per variable, AccumulatorTakeGradient(replicas_to_aggregate)
//    — waiting, holding no thread, for that many gradients of the current
//    step — then optimizer->ApplyGradients(scope, averages, &global_step)
//    (its updates, slots and the global_step += 1, named as that function
//    names them), then SyncTokenEnqueue of the tokens (on global_step's
//    device, queue "<global_step>/sync_token_q");
//  - token: SyncTokenDequeue from that queue; next_token: another, run
//    after this worker's AccumulatorApplyGradient nodes;
//  - init_tokens: enqueues the tokens of the current global step;
//  - set_global_step: AccumulatorSetGlobalStep(global_step) on every
//    accumulator.
// Every accumulator op is colocated with its variable and every queue op with
// global_step, so ApplyReplicaDeviceSetter puts them on the ps tasks.
// With options.replica_index < 0, tokens are not bound to workers: a worker
// that loops faster than another can take two tokens of one step and
// contribute twice to it (as in TensorFlow). With replica_index set, each
// replica k has its own queue "<global_step>/sync_token_q_<k>" and the chief
// releases ceil(tokens / total_num_replicas) into each: one contribution per
// worker and step, so the result equals one process with the W-fold batch.
// options.take_timeout_ms > 0 bounds every take and dequeue
// (DeadlineExceeded naming the node) so that a lost worker fails the chief's
// step instead of blocking it forever; there is no other way to cancel them.
//
// Errors (InvalidArgument): replicas_to_aggregate or total_num_replicas < 1;
// global_step not an int64 variable; no valid gradient; a variable that is
// not a variable's ref output or has no fully defined dtype; errors of the
// optimizer and of graph building (naming the node). On error the graph may
// hold some of the new nodes.
//
// Thread-compatible (build from one thread). Ownership: the graph owns the
// nodes; `optimizer` is borrowed for the call (it keeps its slots' initializers).
#ifndef SLUICE_TRAINING_SYNC_REPLICAS_H_
#define SLUICE_TRAINING_SYNC_REPLICAS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"

namespace sluice {

struct SyncReplicasOptions {
  int replicas_to_aggregate = 1;  // gradients averaged per step
  int total_num_replicas = 1;     // worker tasks
  int64_t take_timeout_ms = 0;    // 0: takes and dequeues wait without limit
  // This worker's index (0 .. total_num_replicas-1): each replica then has a
  // token queue of its own, so every worker contributes exactly once per
  // step (what equivalence with the W-fold batch needs). -1: one shared
  // queue, TensorFlow's behaviour (a fast worker may take two tokens).
  int replica_index = -1;
};

struct SyncReplicas {
  Output local_step;                // int64 scalar Placeholder: the step a gradient is for
  Node* apply_gradients = nullptr;  // the workers' train op
  Node* chief_update = nullptr;     // the chief's: average, update, global step, tokens
  Output token;                     // int64 scalar: the next step a worker may compute
  Output next_token;                // the same, dequeued after apply_gradients' nodes
  Node* init_tokens = nullptr;      // the chief, once after init
  Node* set_global_step = nullptr;  // the chief, after a restore (before init_tokens)
};

// `grads_and_vars` as Optimizer::ComputeGradients returns them (pairs with no
// gradient are skipped; a sparse gradient goes through a sparse accumulator,
// so only the rows it touched travel and are averaged: TensorFlow's
// SyncReplicasOptimizer); `global_step` an int64 variable (e.g.
// CreateGlobalStep(scope).ref). `optimizer` builds the update from the
// averaged gradients.
absl::StatusOr<SyncReplicas> BuildSyncReplicas(const Scope& scope, Optimizer* optimizer,
                                               absl::Span<const GradAndVar> grads_and_vars,
                                               const Output& global_step,
                                               const SyncReplicasOptions& options);

}  // namespace sluice

#endif  // SLUICE_TRAINING_SYNC_REPLICAS_H_
