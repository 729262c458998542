#include "graph/gradients.h"

#include <deque>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

using OutputKey = std::pair<int, int>;  // (node id, output index)

// Nodes reachable from `starts` along data edges, forward or backward.
std::vector<bool> Reach(const Graph& g, absl::Span<const Output> starts, bool forward) {
  std::vector<bool> seen(g.num_node_ids(), false);
  std::deque<Node*> queue;
  for (const Output& o : starts) {
    if (!seen[o.node->id()]) {
      seen[o.node->id()] = true;
      queue.push_back(o.node);
    }
  }
  while (!queue.empty()) {
    Node* n = queue.front();
    queue.pop_front();
    const std::vector<const Edge*>& edges = forward ? n->out_edges() : n->in_edges();
    for (const Edge* e : edges) {
      if (e->IsControl()) continue;
      Node* next = forward ? e->dst : e->src;
      if (!seen[next->id()]) {
        seen[next->id()] = true;
        queue.push_back(next);
      }
    }
  }
  return seen;
}

class GradientBuilder {
 public:
  GradientBuilder(const Scope& scope, absl::Span<const Output> ys, absl::Span<const Output> xs,
                  absl::Span<const Output> grad_ys)
      : scope_(scope.NewSubScope("gradients")), ys_(ys), xs_(xs), grad_ys_(grad_ys) {}

  absl::StatusOr<std::vector<Output>> Run();

 private:
  // The sum of the gradients collected for one output (invalid when none).
  Output SumGradients(const OutputKey& key);
  // Where the backward nodes of `node` go: on the device `node` asked for,
  // if any, else the caller's.
  Scope OnDeviceOf(const Scope& s, const Node* node) const {
    return node->requested_device().empty() ? s : s.WithDevice(node->requested_device());
  }
  absl::Status BackpropNode(Node* node);

  Scope scope_;
  absl::Span<const Output> ys_;
  absl::Span<const Output> xs_;
  absl::Span<const Output> grad_ys_;
  std::vector<bool> on_path_;
  std::vector<int> pending_;
  std::deque<Node*> ready_;
  std::map<OutputKey, std::vector<Output>> grads_;
  std::map<OutputKey, Output> summed_;
};

Output GradientBuilder::SumGradients(const OutputKey& key) {
  auto done = summed_.find(key);
  if (done != summed_.end()) return done->second;
  Output sum;
  auto it = grads_.find(key);
  if (it != grads_.end() && !it->second.empty()) {
    if (it->second.size() == 1) {
      sum = it->second[0];
    } else {
      sum = OnDeviceOf(scope_, scope_.graph()->node(key.first))
                .Op("AddN")
                .InputList(absl::MakeConstSpan(it->second))
                .Finalize1();
    }
  }
  summed_[key] = sum;
  return sum;
}

absl::Status GradientBuilder::BackpropNode(Node* node) {
  bool any_input_on_path = false;
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e && on_path_[e->src->id()]) any_input_on_path = true;
  }
  std::vector<Output> dx;
  if (any_input_on_path) {
    std::vector<Output> dy;
    bool any_grad = false;
    for (int k = 0; k < node->num_outputs(); ++k) {
      dy.push_back(SumGradients({node->id(), k}));
      any_grad |= dy.back().valid();
    }
    const OpDef& def = node->op_def();
    if (any_grad && !def.no_gradient) {
      if (!def.grad_fn) {
        return absl::FailedPreconditionError(absl::StrCat(
            "no gradient is defined for op '", node->op(), "' (node '", node->name(),
            "'), which lies between the ys and the xs"));
      }
      Scope s = OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad")), node);
      absl::StatusOr<std::vector<Output>> r = def.grad_fn(s, *node, dy);
      if (!r.ok()) return AddContext(r.status(), absl::StrCat("gradient of node ", node->DebugName()));
      RETURN_IF_ERROR(scope_.status());
      dx = *std::move(r);
      if (static_cast<int>(dx.size()) != node->num_inputs()) {
        return absl::InternalError(absl::StrCat("gradient of ", node->DebugName(), " returned ",
                                                dx.size(), " outputs for ", node->num_inputs(),
                                                " inputs"));
      }
    }
  }
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e == nullptr || !on_path_[e->src->id()]) continue;
    if (i < static_cast<int>(dx.size()) && dx[i].valid()) {
      grads_[{e->src->id(), e->src_output}].push_back(dx[i]);
    }
    if (--pending_[e->src->id()] == 0) ready_.push_back(e->src);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Output>> GradientBuilder::Run() {
  for (const Output& o : ys_) {
    if (!o.valid()) return absl::InvalidArgumentError("AddGradients: a y is invalid");
  }
  for (const Output& o : xs_) {
    if (!o.valid()) return absl::InvalidArgumentError("AddGradients: an x is invalid");
  }
  if (!grad_ys_.empty() && grad_ys_.size() != ys_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("AddGradients: ", grad_ys_.size(),
                                                   " grad_ys for ", ys_.size(), " ys"));
  }
  const Graph& g = *scope_.graph();
  std::vector<bool> from_x = Reach(g, xs_, /*forward=*/true);
  std::vector<bool> to_y = Reach(g, ys_, /*forward=*/false);
  on_path_.assign(g.num_node_ids(), false);
  for (int i = 0; i < g.num_node_ids(); ++i) on_path_[i] = from_x[i] && to_y[i];
  for (Node* n : g.nodes()) {
    // A loop between the xs and the ys: its back edge would stall the
    // backward pass (TensorFlow keeps the forward values on stacks; not yet).
    const ControlFlowRole role = n->control_flow();
    if (on_path_[n->id()] && (role == ControlFlowRole::kEnter || role == ControlFlowRole::kExit ||
                              role == ControlFlowRole::kNextIteration)) {
      return absl::UnimplementedError(absl::StrCat(
          "AddGradients: gradients through while loops are not supported yet (", n->DebugName(),
          " lies between the ys and the xs); gradients through conds are"));
    }
  }

  pending_.assign(g.num_node_ids(), 0);
  for (Node* n : g.nodes()) {
    if (!on_path_[n->id()]) continue;
    for (const Edge* e : n->out_edges()) {
      if (!e->IsControl() && on_path_[e->dst->id()]) ++pending_[n->id()];
    }
  }
  for (size_t i = 0; i < ys_.size(); ++i) {
    const Output& y = ys_[i];
    Output seed = grad_ys_.empty() ? scope_.Op("OnesLike").Input(y).Finalize1() : grad_ys_[i];
    RETURN_IF_ERROR(scope_.status());
    grads_[{y.node->id(), y.index}].push_back(seed);
  }
  std::vector<bool> queued(g.num_node_ids(), false);
  for (const Output& y : ys_) {
    if (on_path_[y.node->id()] && pending_[y.node->id()] == 0 && !queued[y.node->id()]) {
      queued[y.node->id()] = true;
      ready_.push_back(y.node);
    }
  }
  while (!ready_.empty()) {
    Node* n = ready_.front();
    ready_.pop_front();
    RETURN_IF_ERROR(BackpropNode(n));
  }
  std::vector<Output> result;
  for (const Output& x : xs_) result.push_back(SumGradients({x.node->id(), x.index}));
  RETURN_IF_ERROR(scope_.status());
  return result;
}

}  // namespace

absl::StatusOr<std::vector<Output>> AddGradients(const Scope& scope, absl::Span<const Output> ys,
                                                 absl::Span<const Output> xs,
                                                 absl::Span<const Output> grad_ys) {
  RETURN_IF_ERROR(scope.status());
  GradientBuilder builder(scope, ys, xs, grad_ys);
  return builder.Run();
}

}  // namespace sluice
