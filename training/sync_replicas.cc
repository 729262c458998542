#include "training/sync_replicas.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/data_flow/data_flow_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

constexpr char kWhat[] = "BuildSyncReplicas";

absl::Status CheckOptions(const SyncReplicasOptions& o) {
  if (o.replica_index >= o.total_num_replicas) {
    return absl::InvalidArgumentError(absl::StrCat("BuildSyncReplicas: replica_index ", o.replica_index,
                                                   " is not below total_num_replicas ",
                                                   o.total_num_replicas));
  }
  if (o.replicas_to_aggregate < 1 || o.total_num_replicas < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWhat, ": replicas_to_aggregate (", o.replicas_to_aggregate,
                     ") and total_num_replicas (", o.total_num_replicas, ") must be at least 1"));
  }
  return absl::OkStatus();
}

absl::Status CheckVariable(const Output& v, absl::string_view role) {
  if (!v.valid() || !IsRefType(v.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWhat, ": ", role, " ",
                     v.valid() ? v.node->DebugName() + " is not a variable (ref)" : "is invalid"));
  }
  return absl::OkStatus();
}

// The node, or the scope's error when building failed.
absl::StatusOr<Node*> Built(const Scope& s, Node* node) {
  RETURN_IF_ERROR(s.status());
  if (node == nullptr) return absl::InternalError(absl::StrCat(kWhat, ": a node was not built"));
  return node;
}

// `n` tokens, each the current value of global_step, read after `after`.
absl::StatusOr<Node*> EnqueueTokens(const Scope& on_step, const Output& global_step, int n,
                                    const ops::SyncTokenQueueSpec& queue,
                                    absl::Span<Node* const> after, absl::string_view name) {
  const Scope s = on_step.WithControlDependencies(after);
  Output step = ops::Identity(s.WithOpName(absl::StrCat(name, "/read_global_step")), global_step);
  Output tokens = ops::Fill(on_step.WithOpName(absl::StrCat(name, "/tokens")),
                            Input({static_cast<int32_t>(n)}), step);
  return Built(on_step, ops::SyncTokenEnqueue(on_step.WithOpName(name), queue, tokens));
}

}  // namespace

absl::StatusOr<SyncReplicas> BuildSyncReplicas(const Scope& scope, Optimizer* optimizer,
                                               absl::Span<const GradAndVar> grads_and_vars,
                                               const Output& global_step,
                                               const SyncReplicasOptions& options) {
  RETURN_IF_ERROR(scope.status());
  RETURN_IF_ERROR(CheckOptions(options));
  if (optimizer == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(kWhat, ": no optimizer"));
  RETURN_IF_ERROR(CheckVariable(global_step, "global_step"));
  if (BaseType(global_step.dtype()) != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(kWhat, ": global_step must be int64, ",
                                                   global_step.node->DebugName(), " is ",
                                                   DataTypeName(global_step.dtype())));
  }
  std::vector<GradAndVar> valid;
  for (const GradAndVar& gv : grads_and_vars) {
    RETURN_IF_ERROR(CheckVariable(gv.var, "variable"));
    if (gv.has_grad()) valid.push_back(gv);
  }
  if (valid.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kWhat, ": no variable has a gradient"));
  }

  const Scope sync = scope.NewSubScope("sync_replicas");
  const int tokens_per_step = std::max(options.total_num_replicas, options.replicas_to_aggregate);
  const ops::SyncTokenQueueSpec queue{.shared_name = global_step.node->name() + "/sync_token_q"};
  const Scope on_step = sync.ClearColocation().ColocateWith(global_step);

  SyncReplicas out;
  out.local_step =
      ops::Placeholder(sync.WithOpName("local_step"), DT_INT64, {.shape = TensorShape()});
  std::vector<Node*> applies, set_steps;
  std::vector<GradAndVar> averaged;
  for (const GradAndVar& gv : valid) {
    const std::string& var = gv.var.node->name();
    const ops::AccumulatorSpec spec{.dtype = BaseType(gv.var.dtype()),
                                    .shape = gv.var.shape(),
                                    .shared_name = var + "/grad_accum",
                                    .sparse = gv.sparse_grad.values.valid()};
    const Scope on_var = sync.ClearColocation().ColocateWith(gv.var);
    if (gv.sparse_grad.values.valid()) {
      // An embedding table's gradient: only the touched rows travel to the
      // accumulator and back (TensorFlow's SparseConditionalAccumulator).
      auto int64 = [&](const Output& o) {
        return o.dtype() == DT_INT64 ? o : on_var.Op("Cast").Input(o).Attr("DstT", DT_INT64).Finalize1();
      };
      applies.push_back(ops::SparseAccumulatorApplyGradient(
          on_var.WithOpName("apply_" + var), spec, out.local_step, int64(gv.sparse_grad.indices),
          gv.sparse_grad.values, int64(gv.sparse_grad.dense_shape)));
      ops::SparseAccumulatorTakeOutputs average = ops::SparseAccumulatorTakeGradient(
          on_var.WithOpName("take_" + var), spec, Input(int32_t{options.replicas_to_aggregate}),
          options.take_timeout_ms);
      GradAndVar sparse;
      sparse.var = gv.var;
      sparse.sparse_grad = {average.values, average.indices, average.dense_shape};
      averaged.push_back(sparse);
    } else {
      applies.push_back(ops::AccumulatorApplyGradient(on_var.WithOpName("apply_" + var), spec,
                                                      out.local_step, gv.grad));
      Output average = ops::AccumulatorTakeGradient(on_var.WithOpName("take_" + var), spec,
                                                    Input(int32_t{options.replicas_to_aggregate}),
                                                    options.take_timeout_ms);
      averaged.push_back({average, gv.var});
    }
    set_steps.push_back(ops::AccumulatorSetGlobalStep(on_var.WithOpName("set_global_step_" + var),
                                                      spec, global_step));
  }
  RETURN_IF_ERROR(scope.status());
  ASSIGN_OR_RETURN(out.apply_gradients,
                   Built(sync, ops::GroupDeps(sync.WithOpName("apply_gradients"), applies)));
  ASSIGN_OR_RETURN(out.set_global_step,
                   Built(sync, ops::GroupDeps(sync.WithOpName("set_global_step"), set_steps)));

  // The chief: the wrapped optimizer's update of the averages, which also
  // increments global_step; then the next step's tokens.
  ASSIGN_OR_RETURN(Node * train, optimizer->ApplyGradients(scope, averaged, &global_step));
  const std::vector<Node*> after_train = {train};
  // One shared queue (any worker takes any token), or one queue per replica
  // (each worker takes its own: one contribution per worker and step).
  std::vector<ops::SyncTokenQueueSpec> queues;
  int tokens_per_queue = tokens_per_step;
  if (options.replica_index < 0) {
    queues.push_back(queue);
  } else {
    for (int k = 0; k < options.total_num_replicas; ++k) {
      queues.push_back({.shared_name = absl::StrCat(queue.shared_name, "_", k)});
    }
    tokens_per_queue = (tokens_per_step + options.total_num_replicas - 1) / options.total_num_replicas;
  }
  std::vector<Node*> releases, inits;
  for (size_t q = 0; q < queues.size(); ++q) {
    const std::string suffix = queues.size() == 1 ? "" : absl::StrCat("_", q);
    ASSIGN_OR_RETURN(Node * release,
                     EnqueueTokens(on_step, global_step, tokens_per_queue, queues[q], after_train,
                                   "release_tokens" + suffix));
    releases.push_back(release);
    ASSIGN_OR_RETURN(Node * init, EnqueueTokens(on_step, global_step, tokens_per_queue, queues[q],
                                                {}, "enqueue_init_tokens" + suffix));
    inits.push_back(init);
  }
  ASSIGN_OR_RETURN(out.chief_update,
                   Built(sync, ops::GroupDeps(sync.WithOpName("chief_update"), releases)));
  ASSIGN_OR_RETURN(out.init_tokens,
                   Built(sync, ops::GroupDeps(sync.WithOpName("init_tokens"), inits)));
  const size_t mine = options.replica_index < 0 ? 0 : options.replica_index;
  out.token = ops::SyncTokenDequeue(on_step.WithOpName("token"), queues[mine],
                                    options.take_timeout_ms);
  // After the applies themselves (on the ps), not their group (on the
  // worker): no round trip through the worker before the dequeue.
  out.next_token = ops::SyncTokenDequeue(
      on_step.WithOpName("next_token").WithControlDependencies(absl::MakeConstSpan(applies)),
      queues[mine],
      options.take_timeout_ms);
  RETURN_IF_ERROR(scope.status());
  return out;
}

}  // namespace sluice
