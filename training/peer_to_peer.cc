#include "training/peer_to_peer.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"
#include "ops/data_flow/queue_ops.h"
#include "ops/state/state_ops.h"

namespace sluice {
namespace {

absl::Status CheckOptions(const PeerToPeerOptions& o) {
  if (o.worker_devices.empty()) {
    return absl::InvalidArgumentError("peer-to-peer: worker_devices is empty");
  }
  absl::flat_hash_set<std::string> seen;
  for (const std::string& d : o.worker_devices) {
    if (d.empty()) return absl::InvalidArgumentError("peer-to-peer: an empty worker device name");
    if (!seen.insert(d).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("peer-to-peer: worker device ", d, " is listed twice"));
    }
  }
  if (o.worker_index < 0 || o.worker_index >= static_cast<int>(o.worker_devices.size())) {
    return absl::InvalidArgumentError(absl::StrCat("peer-to-peer: worker_index ", o.worker_index,
                                                   " is out of range for ",
                                                   o.worker_devices.size(), " workers"));
  }
  if (o.max_staleness < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("peer-to-peer: max_staleness is ", o.max_staleness, "; it must be >= 0"));
  }
  return absl::OkStatus();
}

// The queue's element: (int64 step, one gradient per variable).
struct ElementSpec {
  std::vector<DataType> types;
  std::vector<TensorShape> shapes;
};

absl::StatusOr<ElementSpec> ElementOf(const std::vector<Output>& variables) {
  ElementSpec spec{{DT_INT64}, {TensorShape({})}};
  for (const Output& v : variables) {
    if (!v.shape().IsFullyDefined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "peer-to-peer: variable ", v.node->name(), " has shape ", v.shape().DebugString(),
          "; sending its gradients needs a fully defined shape"));
    }
    spec.types.push_back(BaseType(v.dtype()));
    spec.shapes.push_back(v.shape());
  }
  return spec;
}

Output PeerQueueOp(const Scope& scope, const std::string& name, const ElementSpec& spec) {
  return ops::FIFOQueueV2(scope.WithOpName(name), spec.types,
                          {.shapes = spec.shapes, .capacity = -1, .shared_name = name});
}

// This worker's end of the queue from `peer`: probes, and the gradients
// taken from it, summed over the dequeued steps (one per variable).
PeerQueue IncomingQueue(const Scope& ws, int self, int peer, const std::string& peer_device,
                        const ElementSpec& spec, std::vector<Output>* sums) {
  const Scope s = ws.NewSubScope(absl::StrCat("from_", peer));
  Output q = PeerQueueOp(ws, PeerQueueName(self, peer), spec);
  PeerQueue in;
  in.worker = peer;
  in.device = peer_device;
  in.is_closed = ops::QueueIsClosedV2(s.WithOpName("is_closed"), q);
  // Read after is_closed: a queue seen closed has every element its sender
  // enqueued, so size then counts them all.
  in.size = ops::QueueSizeV2(
      s.WithOpName("size").WithControlDependencies(std::vector<Node*>{in.is_closed.node}), q);
  in.take = ops::Placeholder(s.WithOpName("take"), DT_INT32, {.shape = TensorShape({})});
  std::vector<Output> taken = ops::QueueDequeueManyV2(s.WithOpName("dequeue"), q, in.take,
                                                      spec.types);
  in.steps = taken[0];
  for (size_t v = 1; v < taken.size(); ++v) {
    sums->push_back(ops::Sum(s.WithOpName(absl::StrCat("sum_", v - 1)), taken[v], int32_t{0}));
  }
  return in;
}

}  // namespace

std::string PeerQueueName(int to, int from) {
  return absl::StrCat("p2p/queue_", to, "_from_", from);
}

absl::StatusOr<PeerToPeerModel> BuildPeerToPeer(const Scope& scope,
                                                const std::vector<Output>& inputs,
                                                const ReplicaFn& fn, Optimizer* optimizer,
                                                const PeerToPeerOptions& options) {
  RETURN_IF_ERROR(scope.status());
  if (optimizer == nullptr) return absl::InvalidArgumentError("peer-to-peer: no optimizer");
  RETURN_IF_ERROR(CheckOptions(options));
  const int self = options.worker_index;
  const int num_workers = static_cast<int>(options.worker_devices.size());
  const std::string who = absl::StrCat("peer-to-peer: worker ", self);

  PeerToPeerModel out;
  out.worker_index = self;
  out.num_workers = num_workers;
  out.max_staleness = options.max_staleness;
  out.worker_devices = options.worker_devices;
  const Scope ws = scope.WithDevice(options.worker_devices[self]);
  const size_t init_mark = optimizer->initializers().size();
  absl::StatusOr<ReplicaModel> m = fn(ws, inputs);
  if (!m.ok()) return AddContext(m.status(), who);
  RETURN_IF_ERROR(AddContext(scope.status(), who));
  RETURN_IF_ERROR(AddContext(internal::CheckReplica(*m, self, nullptr), "peer-to-peer"));
  out.replica = *std::move(m);
  const std::vector<Output>& vars = out.replica.variables;
  ASSIGN_OR_RETURN(const ElementSpec spec, ElementOf(vars));

  // This worker's gradients, replaceable by a feed (zeros, to apply only
  // what peers sent).
  ASSIGN_OR_RETURN(std::vector<GradAndVar> gvs,
                   optimizer->ComputeGradients(ws, out.replica.loss, vars));
  gvs = DenseGradients(ws, gvs);  // peers exchange dense gradients
  const Scope p2p = ws.NewSubScope("p2p");
  std::vector<Output> own;
  for (size_t v = 0; v < gvs.size(); ++v) {
    if (!gvs[v].grad.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(who, ": the loss does not depend on variable ",
                                                     vars[v].node->name()));
    }
    own.push_back(ops::PlaceholderWithDefault(
        p2p.WithOpName(absl::StrCat("own_gradient_", v)),
        internal::WithVariableShape(ws, gvs[v].grad, vars[v]), vars[v].shape()));
  }
  out.own_gradients = own;
  out.step = ops::Placeholder(p2p.WithOpName("step"), DT_INT64, {.shape = TensorShape({})});

  // Sent: (step, g_w) into this worker's queue on every peer's device.
  std::vector<Output> element = {out.step};
  element.insert(element.end(), own.begin(), own.end());
  std::vector<Node*> sends, closes;
  // Taken: per variable, the gradients in worker order (own at `self`).
  std::vector<std::vector<Output>> addends(vars.size());
  for (int w = 0; w < num_workers; ++w) {
    if (w == self) {
      for (size_t v = 0; v < vars.size(); ++v) addends[v].push_back(own[v]);
      continue;
    }
    const Scope at_peer =
        scope.WithDevice(options.worker_devices[w]).NewSubScope(absl::StrCat("p2p_to_", w));
    Output q = PeerQueueOp(at_peer, PeerQueueName(w, self), spec);
    sends.push_back(ops::QueueEnqueueV2(at_peer.WithOpName("send"), q, element));
    closes.push_back(ops::QueueCloseV2(at_peer.WithOpName("close"), q));
    std::vector<Output> sums;
    out.peers.push_back(IncomingQueue(p2p, self, w, options.worker_devices[w], spec, &sums));
    for (size_t v = 0; v < vars.size(); ++v) addends[v].push_back(sums[v]);
  }
  RETURN_IF_ERROR(AddContext(scope.status(), who));

  std::vector<GradAndVar> summed;
  for (size_t v = 0; v < vars.size(); ++v) {
    Output total = addends[v].size() == 1
                       ? addends[v][0]
                       : ops::AddN(p2p.WithOpName(absl::StrCat("sum_", v)), addends[v]);
    summed.push_back({total, vars[v]});
  }
  absl::StatusOr<Node*> apply = optimizer->ApplyGradients(ws, summed);
  if (!apply.ok()) return AddContext(apply.status(), who);
  out.apply = *apply;
  sends.push_back(out.apply);
  out.train = ops::GroupDeps(p2p.WithOpName("train"), sends);
  out.close_outgoing = ops::GroupDeps(p2p.WithOpName("close_outgoing"), closes);

  ASSIGN_OR_RETURN(std::vector<Node*> init_deps, internal::ReplicaInitializers(out.replica));
  const std::vector<Node*>& all = optimizer->initializers();
  init_deps.insert(init_deps.end(), all.begin() + static_cast<std::ptrdiff_t>(init_mark),
                   all.end());
  out.init = ops::GroupDeps(p2p.WithOpName("init"), init_deps);
  RETURN_IF_ERROR(AddContext(scope.status(), who));
  return out;
}

}  // namespace sluice
