#include "training/mirrored_strategy.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/array/array_ops.h"
#include "ops/collective/collective_ops.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

// Instance keys of MultiWorkerMirrored's collectives besides the gradient
// buckets (first_instance_key + b), relative to first_instance_key.
constexpr int64_t kLossInstance = 50000;
constexpr int64_t kMetricInstance = 50001;
constexpr int64_t kBroadcastInstance = 100000;
constexpr int64_t kGenerationStride = 1000;
// Sparse gradients' all-gathers: two instances (values, indices) per variable.
constexpr int64_t kSparseInstance = 60000;

int64_t SparseInstanceKey(const AllReduceOptions& ar, size_t var) {
  return ar.first_instance_key + kSparseInstance + 2 * static_cast<int64_t>(var);
}

absl::Status CheckDevices(absl::string_view what, const std::vector<std::string>& devices) {
  if (devices.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no devices"));
  absl::flat_hash_set<std::string> seen;
  for (const std::string& d : devices) {
    if (d.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": empty device name"));
    if (!seen.insert(d).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": device ", d, " is listed twice (one replica per device)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

absl::Status CheckReplica(const ReplicaModel& m, int r, const ReplicaModel* first) {
  const std::string who = absl::StrCat("replica ", r);
  if (!m.loss.valid()) return absl::InvalidArgumentError(absl::StrCat(who, ": the loss is unset"));
  const TensorShape& loss_shape = m.loss.shape();
  if (!loss_shape.unknown_rank() && loss_shape.rank() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": loss ", m.loss.node->name(),
                                                   " has shape ", loss_shape.DebugString(),
                                                   "; it must be a scalar"));
  }
  if (m.variables.empty()) return absl::InvalidArgumentError(absl::StrCat(who, ": no variables"));
  for (const Output& v : m.variables) {
    if (!v.valid() || !IsRefType(v.node->output_type(v.index))) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, ": ", v.valid() ? v.node->name() : std::string("an unset output"),
                       " is not a variable's ref output"));
    }
  }
  for (const Output& metric : m.metrics) {
    if (!metric.valid())
      return absl::InvalidArgumentError(absl::StrCat(who, ": a metric is unset"));
  }
  if (first == nullptr) return absl::OkStatus();
  if (m.variables.size() != first->variables.size() || m.metrics.size() != first->metrics.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, " has ", m.variables.size(), " variables and ", m.metrics.size(),
        " metrics; replica 0 has ", first->variables.size(), " and ", first->metrics.size()));
  }
  for (size_t i = 0; i < m.variables.size(); ++i) {
    const Output& a = first->variables[i];
    const Output& b = m.variables[i];
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          who, ": variable ", b.node->name(), " is ", DataTypeName(BaseType(b.dtype())), " ",
          b.shape().DebugString(), " but replica 0's ", a.node->name(), " is ",
          DataTypeName(BaseType(a.dtype())), " ", a.shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace internal

namespace {

// The Assign initializing `var`: "<var>/Assign", else its only Assign.
absl::StatusOr<Node*> FindInitializer(const Output& var) {
  const std::string want = absl::StrCat(var.node->name(), "/Assign");
  Node* only = nullptr;
  int count = 0;
  for (const Edge* e : var.node->out_edges()) {
    if (e->IsControl() || e->dst_input != 0 || e->dst->op() != "Assign") continue;
    if (e->dst->name() == want) return e->dst;
    only = e->dst;
    ++count;
  }
  if (count == 1) return only;
  return absl::InvalidArgumentError(
      absl::StrCat("variable ", var.node->name(), " has ", count == 0 ? "no" : "several",
                   " Assign nodes and none named ", want,
                   "; list its initializer in ReplicaModel::initializers"));
}

}  // namespace

namespace internal {

absl::StatusOr<std::vector<Node*>> ReplicaInitializers(const ReplicaModel& m) {
  if (!m.initializers.empty()) return m.initializers;
  std::vector<Node*> out;
  for (const Output& v : m.variables) {
    ASSIGN_OR_RETURN(Node * init, FindInitializer(v));
    out.push_back(init);
  }
  return out;
}

Output WithVariableShape(const Scope& scope, const Output& grad, const Output& var) {
  if (!grad.valid() || grad.shape().IsFullyDefined() || !var.shape().IsFullyDefined()) return grad;
  const std::vector<int64_t>& dims = var.shape().dims();
  return ops::Reshape(scope, grad,
                      ops::Const(scope, dims, TensorShape({static_cast<int64_t>(dims.size())})));
}

}  // namespace internal

namespace {

// The mean of scalars `values`, named `name` in `scope`.
Output Mean(const Scope& scope, const std::vector<Output>& values, const std::string& name) {
  if (values.size() == 1) return ops::Identity(scope.WithOpName(name), values[0]);
  return ops::Mul(scope.WithOpName(name), ops::AddN(scope, values),
                  1.0 / static_cast<double>(values.size()));
}

// The initializers `optimizer` has created since it held `mark` of them.
std::vector<Node*> NewInitializers(const Optimizer& optimizer, size_t mark) {
  const std::vector<Node*>& all = optimizer.initializers();
  return std::vector<Node*>(all.begin() + static_cast<std::ptrdiff_t>(mark), all.end());
}

}  // namespace

using internal::CheckReplica;
using internal::WithVariableShape;

absl::StatusOr<MirroredModel> BuildMirrored(const Scope& scope,
                                            const std::vector<Output>& batch_inputs,
                                            const ReplicaFn& fn, Optimizer* optimizer,
                                            const MirroredOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (optimizer == nullptr) return absl::InvalidArgumentError("mirrored: no optimizer");
  RETURN_IF_ERROR(CheckDevices("mirrored", options.devices));
  const int k = static_cast<int>(options.devices.size());
  for (const Output& in : batch_inputs) {
    if (!in.valid()) return absl::InvalidArgumentError("mirrored: a batch input is unset");
    const TensorShape& shape = in.shape();
    if (shape.rank() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("mirrored: batch input ", in.node->name(),
                                                     " is a scalar; it needs a batch dim 0"));
    }
    if (shape.rank() > 0 && shape.dim(0) >= 0 && shape.dim(0) % k != 0) {
      return absl::InvalidArgumentError(absl::StrCat("mirrored: batch input ", in.node->name(),
                                                     " has batch size ", shape.dim(0),
                                                     ", not a multiple of ", k, " replicas"));
    }
  }

  // Slice r of every batch input.
  const Scope mirrored = scope.NewSubScope("mirrored");
  std::vector<std::vector<Output>> inputs(k);
  for (size_t i = 0; i < batch_inputs.size(); ++i) {
    std::vector<Output> pieces = {batch_inputs[i]};
    if (k > 1) {
      pieces = ops::Split(mirrored.WithOpName(absl::StrCat("split_", i)), int32_t{0},
                          batch_inputs[i], k);
    }
    for (int r = 0; r < k; ++r) inputs[r].push_back(pieces[r]);
  }
  RETURN_IF_ERROR(scope.status());

  const size_t init_mark = optimizer->initializers().size();
  MirroredModel out;
  std::vector<Scope> scopes;
  for (int r = 0; r < k; ++r) {
    scopes.push_back(scope.NewSubScope(absl::StrCat("replica_", r)).WithDevice(options.devices[r]));
    absl::StatusOr<ReplicaModel> m = fn(scopes[r], inputs[r]);
    if (!m.ok()) return AddContext(m.status(), absl::StrCat("mirrored: replica ", r));
    RETURN_IF_ERROR(AddContext(scope.status(), absl::StrCat("mirrored: replica ", r)));
    RETURN_IF_ERROR(
        AddContext(CheckReplica(*m, r, r == 0 ? nullptr : &out.replicas[0]), "mirrored"));
    out.replicas.push_back(*std::move(m));
  }

  // Gradients, all-reduced (dense) or all-gathered (sparse: embedding
  // tables), then applied by each replica to its own copy.
  std::vector<std::vector<Output>> grads(k);
  std::vector<std::vector<GradAndVar>> replica_gvs(k);
  for (int r = 0; r < k; ++r) {
    const ReplicaModel& m = out.replicas[r];
    absl::StatusOr<std::vector<GradAndVar>> gvs =
        optimizer->ComputeGradients(scopes[r], m.loss, m.variables);
    if (!gvs.ok()) return AddContext(gvs.status(), absl::StrCat("mirrored: replica ", r));
    for (const GradAndVar& gv : *gvs) {
      grads[r].push_back(gv.grad.valid() ? WithVariableShape(scopes[r], gv.grad, gv.var)
                                         : Output());
    }
    replica_gvs[r] = *std::move(gvs);
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<Output>> reduced,
                   AllReduceGradients(scope.NewSubScope("all_reduce"), grads, options.devices,
                                      options.all_reduce));
  std::vector<Node*> trains;
  for (int r = 0; r < k; ++r) {
    std::vector<GradAndVar> gvs;
    for (size_t v = 0; v < reduced[r].size(); ++v) {
      GradAndVar gv;
      gv.var = out.replicas[r].variables[v];
      gv.grad = reduced[r][v];
      if (!gv.grad.valid() && replica_gvs[r][v].sparse_grad.values.valid()) {
        ASSIGN_OR_RETURN(gv.sparse_grad,
                         AllGatherIndexedSlicesOfMember(
                             scope.NewSubScope(absl::StrCat("all_gather/replica_", r)),
                             replica_gvs[r][v].sparse_grad, options.devices, r,
                             options.all_reduce, SparseInstanceKey(options.all_reduce, v)));
      }
      gvs.push_back(gv);
    }
    absl::StatusOr<Node*> train = optimizer->ApplyGradients(scopes[r], gvs);
    if (!train.ok()) return AddContext(train.status(), absl::StrCat("mirrored: replica ", r));
    trains.push_back(*train);
  }
  out.train = ops::GroupDeps(scope.WithOpName("train"), trains);

  // Means of the replicas' losses and metrics.
  std::vector<Output> losses;
  for (const ReplicaModel& m : out.replicas) losses.push_back(m.loss);
  out.loss = Mean(scope, losses, "loss");
  for (size_t i = 0; i < out.replicas[0].metrics.size(); ++i) {
    std::vector<Output> values;
    for (const ReplicaModel& m : out.replicas) values.push_back(m.metrics[i]);
    out.metrics.push_back(Mean(mirrored, values, absl::StrCat("metric_", i)));
  }

  // Replica 0 initialized, then copied to the others; optimizer slots.
  ASSIGN_OR_RETURN(std::vector<Node*> first_inits, internal::ReplicaInitializers(out.replicas[0]));
  Node* first_init = ops::GroupDeps(mirrored.WithOpName("init_replica_0"), first_inits);
  RETURN_IF_ERROR(scope.status());
  std::vector<Node*> init_deps = {first_init};
  const std::vector<Node*> after_first = {first_init};
  const Scope read = mirrored.WithDevice(options.devices[0]).WithControlDependencies(after_first);
  for (size_t v = 0; v < out.replicas[0].variables.size() && k > 1; ++v) {
    Output value = ops::Identity(read.WithOpName(absl::StrCat("init_value_", v)),
                                 out.replicas[0].variables[v]);
    for (int r = 1; r < k; ++r) {
      const Output& var = out.replicas[r].variables[v];
      init_deps.push_back(ops::Assign(scopes[r].ColocateWith(var), var, value).node);
    }
  }
  for (Node* n : NewInitializers(*optimizer, init_mark)) init_deps.push_back(n);
  out.init = ops::GroupDeps(scope.WithOpName("init"), init_deps);
  RETURN_IF_ERROR(scope.status());
  return out;
}

absl::StatusOr<MultiWorkerModel> BuildMultiWorkerMirrored(const Scope& scope,
                                                          const std::vector<Output>& inputs,
                                                          const ReplicaFn& fn, Optimizer* optimizer,
                                                          const MultiWorkerOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (optimizer == nullptr)
    return absl::InvalidArgumentError("multi-worker mirrored: no optimizer");
  RETURN_IF_ERROR(CheckDevices("multi-worker mirrored", options.worker_devices));
  const int rank = options.worker_index;
  if (rank < 0 || rank >= static_cast<int>(options.worker_devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("multi-worker mirrored: worker_index ", rank,
                                                   " is out of range for ",
                                                   options.worker_devices.size(), " workers"));
  }
  AllReduceOptions ar = options.all_reduce;
  ar.group_key += kGenerationStride * options.generation;
  const std::vector<std::string>& group = options.worker_devices;
  auto spec = [&](int64_t instance_offset) {
    ops::CollectiveSpec s;
    s.group_key = ar.group_key;
    s.instance_key = ar.first_instance_key + instance_offset;
    s.group_devices = group;
    s.communication_hint = ar.communication_hint;
    s.timeout_seconds = ar.timeout_seconds;
    return s;
  };

  const Scope ws = scope.WithDevice(group[rank]);
  const size_t init_mark = optimizer->initializers().size();
  MultiWorkerModel out;
  absl::StatusOr<ReplicaModel> m = fn(ws, inputs);
  if (!m.ok()) return AddContext(m.status(), absl::StrCat("multi-worker mirrored: worker ", rank));
  RETURN_IF_ERROR(scope.status());
  RETURN_IF_ERROR(AddContext(CheckReplica(*m, rank, nullptr), "multi-worker mirrored"));
  out.replica = *std::move(m);
  const ReplicaModel& rep = out.replica;

  GlobalStep step = CreateGlobalStep(ws);
  RETURN_IF_ERROR(scope.status());
  out.global_step = step.ref;

  ASSIGN_OR_RETURN(std::vector<GradAndVar> gvs,
                   optimizer->ComputeGradients(ws, rep.loss, rep.variables));
  // Dense gradients are all-reduced; sparse ones (embedding tables)
  // all-gathered, after the all-reduce's instance keys.
  std::vector<Output> grads;
  for (const GradAndVar& gv : gvs) {
    grads.push_back(gv.grad.valid() ? WithVariableShape(ws, gv.grad, gv.var) : Output());
  }
  ASSIGN_OR_RETURN(
      std::vector<Output> reduced,
      AllReduceGradientsOfMember(ws.NewSubScope("all_reduce"), grads, group, rank, ar));
  for (size_t v = 0; v < gvs.size(); ++v) {
    if (gvs[v].grad.valid()) {
      gvs[v].grad = reduced[v];
    } else if (gvs[v].sparse_grad.values.valid()) {
      ASSIGN_OR_RETURN(gvs[v].sparse_grad,
                       AllGatherIndexedSlicesOfMember(ws.NewSubScope("all_gather"),
                                                      gvs[v].sparse_grad, group, rank, ar,
                                                      SparseInstanceKey(ar, v)));
    }
  }
  ASSIGN_OR_RETURN(Node * apply, optimizer->ApplyGradients(ws, gvs, &out.global_step));
  out.train = ops::GroupDeps(ws.WithOpName("train"), {apply});

  out.loss = ops::AllReduce(ws.WithOpName("loss"), rep.loss, ReduceOp::kMean, spec(kLossInstance));
  for (size_t i = 0; i < rep.metrics.size(); ++i) {
    out.metrics.push_back(ops::AllReduce(ws.WithOpName(absl::StrCat("metric_", i)), rep.metrics[i],
                                         ReduceOp::kMean,
                                         spec(kMetricInstance + static_cast<int64_t>(i))));
  }

  // init: this worker's variables, its global step and the optimizer's slots.
  ASSIGN_OR_RETURN(std::vector<Node*> init_deps, internal::ReplicaInitializers(rep));
  init_deps.push_back(step.initializer);
  const std::vector<Node*> slot_inits = NewInitializers(*optimizer, init_mark);
  init_deps.insert(init_deps.end(), slot_inits.begin(), slot_inits.end());
  out.init = ops::GroupDeps(ws.WithOpName("init"), init_deps);

  // sync_init: every piece of training state takes the chief's value.
  std::vector<Output> state = rep.variables;
  state.push_back(out.global_step);
  for (Node* init : slot_inits) {
    const Edge* e = init->input_edge(0);
    if (e != nullptr) state.push_back(Output(e->src, e->src_output));
  }
  const Scope sync = ws.NewSubScope("sync_init");
  std::vector<Node*> sync_deps;
  for (size_t v = 0; v < state.size(); ++v) {
    const Output& var = state[v];
    ops::CollectiveSpec s = spec(kBroadcastInstance + static_cast<int64_t>(v));
    if (rank == 0) {
      sync_deps.push_back(ops::BroadcastSend(sync, var, s).node);
      continue;
    }
    if (!var.shape().IsFullyDefined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("multi-worker mirrored: variable ", var.node->name(), " has shape ",
                       var.shape().DebugString(), "; broadcasting it needs a fully defined shape"));
    }
    Output value = ops::BroadcastRecv(sync, BaseType(var.dtype()), var.shape(), s);
    sync_deps.push_back(ops::Assign(ws.ColocateWith(var), var, value).node);
  }
  out.sync_init = ops::GroupDeps(ws.WithOpName("sync_init"), sync_deps);
  RETURN_IF_ERROR(scope.status());
  return out;
}

}  // namespace sluice
