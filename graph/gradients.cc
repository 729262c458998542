#include "graph/gradients.h"

#include <deque>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/control_flow_info.h"
#include "graph/function_inline.h"
#include "graph/indexed_slices.h"

namespace sluice {
namespace {

using OutputKey = std::pair<int, int>;  // (node id, output index)

// Nodes reachable from `starts` along data edges, forward or backward, not
// entering `boundary` nodes.
std::vector<bool> Reach(const Graph& g, absl::Span<const Output> starts, bool forward,
                        const absl::flat_hash_set<const Node*>& boundary) {
  std::vector<bool> seen(g.num_node_ids(), false);
  std::deque<Node*> queue;
  for (const Output& o : starts) {
    if (!seen[o.node->id()] && !boundary.contains(o.node)) {
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
      if (!seen[next->id()] && !boundary.contains(next)) {
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
                  absl::Span<const Output> grad_ys,
                  const absl::flat_hash_set<const Node*>& boundary)
      : scope_(scope.NewSubScope("gradients")), ys_(ys), xs_(xs), grad_ys_(grad_ys),
        boundary_(boundary) {}

  absl::StatusOr<std::vector<Gradient>> Run();

 private:
  // The sum of the gradients collected for one output (invalid when none):
  // sparse when every one is (concatenated), else dense (AddN).
  Gradient SumGradients(const OutputKey& key);
  // The same, dense (sparse sums become IndexedSlicesToDense nodes beside
  // the node of `key`).
  Output SumDense(const OutputKey& key);
  // Where the backward nodes of `node` go: on the device `node` asked for,
  // if any, else the caller's.
  Scope OnDeviceOf(const Scope& s, const Node* node) const {
    return node->requested_device().empty() ? s : s.WithDevice(node->requested_device());
  }
  absl::Status BackpropNode(Node* node);
  // The gradient function the library names (GradientDef) for the function
  // `call` calls, or "" (then the call is inlined and differentiated).
  std::string GradientFunctionFor(const Node& call) const;
  // A call of that gradient function: the call's inputs, then one gradient
  // per output (zeros where none flows); its results are the inputs'
  // gradients (TensorFlow's GradientDef convention).
  absl::StatusOr<std::vector<Output>> CallGradientFunction(const Scope& s, const Node& call,
                                                           absl::Span<const Output> dy,
                                                           const std::string& grad_function);
  // on_path_: the nodes on a path from an x to a y.
  void FindPath();
  // Function calls on the path become their bodies (graph/function_inline.h;
  // the call nodes stay, as the IdentityN of their results), until none is
  // left on it: gradients flow through the functions' nodes.
  absl::Status InlineCallsOnPath();
  // Finds the while loops between the ys and the xs: loops run as child
  // frames of the ys' frame are each differentiated as one node (the
  // registry's WhileLoopGradFn) once all their on-path Exits are ready.
  absl::Status FindLoops();
  absl::Status BackpropLoop(int loop);
  // Hands `grad` (may be invalid) to input edge `e`'s source and releases it.
  void PassToInput(const Edge* e, const Gradient& grad);

  struct Loop {
    std::vector<Node*> exits;    // on the path
    std::vector<Node*> enters;   // all of the loop's
    int exits_ready = 0;
  };

  Scope scope_;
  absl::Span<const Output> ys_;
  absl::Span<const Output> xs_;
  absl::Span<const Output> grad_ys_;
  std::vector<bool> on_path_;
  std::vector<int> pending_;
  std::deque<Node*> ready_;
  std::map<OutputKey, std::vector<Gradient>> grads_;
  std::map<OutputKey, Gradient> summed_;
  // A copy: AddGradientsWithSlices passes a temporary empty set, which a
  // reference would outlive.
  const absl::flat_hash_set<const Node*> boundary_;
  std::vector<int> loop_of_;  // by node id: index into loops_, -1 outside loops
  std::vector<Loop> loops_;
};

Gradient GradientBuilder::SumGradients(const OutputKey& key) {
  auto done = summed_.find(key);
  if (done != summed_.end()) return done->second;
  Gradient sum;
  auto it = grads_.find(key);
  if (it != grads_.end() && !it->second.empty()) {
    const std::vector<Gradient>& parts = it->second;
    const Node* node = scope_.graph()->node(key.first);
    bool all_sparse = true;
    for (const Gradient& g : parts) all_sparse &= g.sparse();
    // Only a sum of several builds nodes.
    const auto sum_scope = [&] {
      return OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad_sum")), node);
    };
    if (parts.size() == 1) {
      sum = parts[0];
    } else if (all_sparse) {
      const Scope s = sum_scope();
      std::vector<IndexedSlices> slices;
      for (const Gradient& g : parts) slices.push_back(g.slices);
      absl::StatusOr<IndexedSlices> concat = ConcatIndexedSlices(s, slices);
      if (concat.ok()) sum = *concat;  // else the scope holds the error
    } else {
      const Scope s = sum_scope();
      std::vector<Output> dense;
      for (const Gradient& g : parts) dense.push_back(DenseOf(s, g));
      sum = OnDeviceOf(scope_, node).Op("AddN").InputList(absl::MakeConstSpan(dense)).Finalize1();
    }
  }
  summed_[key] = sum;
  return sum;
}

Output GradientBuilder::SumDense(const OutputKey& key) {
  const Gradient g = SumGradients(key);
  if (!g.sparse()) return g.dense;
  const Node* node = scope_.graph()->node(key.first);
  return DenseOf(OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad")), node), g);
}

absl::Status GradientBuilder::BackpropNode(Node* node) {
  bool any_input_on_path = false;
  for (int i = 0; i < node->num_inputs(); ++i) {
    const Edge* e = node->input_edge(i);
    if (e && on_path_[e->src->id()]) any_input_on_path = true;
  }
  std::vector<Gradient> dx;
  if (any_input_on_path) {
    std::vector<Gradient> dy_slices;
    bool any_grad = false;
    for (int k = 0; k < node->num_outputs(); ++k) {
      dy_slices.push_back(SumGradients({node->id(), k}));
      any_grad |= dy_slices.back().valid();
    }
    const OpDef& def = node->op_def();
    const std::string grad_function =
        any_grad && IsFunctionCall(*node) ? GradientFunctionFor(*node) : "";
    if (any_grad && grad_function.empty() && def.sparse_grad_fn) {
      Scope s = OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad")), node);
      absl::StatusOr<std::vector<Gradient>> r = def.sparse_grad_fn(s, *node, dy_slices);
      if (!r.ok())
        return AddContext(r.status(), absl::StrCat("gradient of node ", node->DebugName()));
      RETURN_IF_ERROR(scope_.status());
      if (static_cast<int>(r->size()) != node->num_inputs()) {
        return absl::InternalError(absl::StrCat("sparse gradient of ", node->DebugName(),
                                                " returned ", r->size(), " outputs for ",
                                                node->num_inputs(), " inputs"));
      }
      for (int i = 0; i < node->num_inputs(); ++i) {
        const Edge* e = node->input_edge(i);
        if (e == nullptr || !on_path_[e->src->id()]) continue;
        PassToInput(e, (*r)[i]);
      }
      return absl::OkStatus();
    }
    // Every other gradient function takes dense gradients.
    std::vector<Output> dy;
    for (int k = 0; k < node->num_outputs(); ++k) {
      dy.push_back(dy_slices[k].sparse() ? SumDense({node->id(), k}) : dy_slices[k].dense);
    }
    if (!grad_function.empty()) {
      Scope s = OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad")), node);
      absl::StatusOr<std::vector<Output>> r = CallGradientFunction(s, *node, dy, grad_function);
      if (!r.ok()) return AddContext(r.status(), absl::StrCat("gradient of node ", node->DebugName()));
      RETURN_IF_ERROR(scope_.status());
      dx.assign(r->begin(), r->end());
    } else if (any_grad && !def.no_gradient) {
      if (!def.grad_fn) {
        return absl::FailedPreconditionError(absl::StrCat(
            "no gradient is defined for op '", node->op(), "' (node '", node->name(),
            "'), which lies between the ys and the xs"));
      }
      Scope s = OnDeviceOf(scope_.NewSubScope(absl::StrCat(node->name(), "_grad")), node);
      absl::StatusOr<std::vector<Output>> r = def.grad_fn(s, *node, dy);
      if (!r.ok()) return AddContext(r.status(), absl::StrCat("gradient of node ", node->DebugName()));
      RETURN_IF_ERROR(scope_.status());
      dx.assign(r->begin(), r->end());
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
    PassToInput(e, i < static_cast<int>(dx.size()) ? dx[i] : Gradient());
  }
  return absl::OkStatus();
}

void GradientBuilder::PassToInput(const Edge* e, const Gradient& grad) {
  if (grad.valid()) grads_[{e->src->id(), e->src_output}].push_back(grad);
  if (--pending_[e->src->id()] == 0) ready_.push_back(e->src);
}

absl::Status GradientBuilder::FindLoops() {
  const Graph& g = *scope_.graph();
  loop_of_.assign(g.num_node_ids(), -1);
  bool any = false;
  for (Node* n : g.nodes()) any |= on_path_[n->id()] && n->control_flow() != ControlFlowRole::kNone;
  if (!any) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(g));
  // Gradients of an outer loop's body may be half built (a nested loop's
  // gradient): only the forward graph's frames matter here.
  ASSIGN_OR_RETURN(ControlFlowInfo info,
                   BuildControlFlowInfo(g, order, {.allow_unresolved = true}));
  // The frame the ys' values are in (an Exit's value is in its parent's).
  const Node* y = ys_[0].node;
  int level = info.frame_of[y->id()];
  if (level < 0) {
    return absl::InternalError(absl::StrCat("AddGradients: no frame for ", y->DebugName()));
  }
  if (y->control_flow() == ControlFlowRole::kExit) level = info.frames[level].parent;
  if (y->control_flow() == ControlFlowRole::kEnter) level = info.enter_child[y->id()];
  // The child frame of `level` that frame f is in (f itself or an ancestor);
  // -1 when f is not below level.
  auto child_of_level = [&](int f) {
    while (f >= 0 && info.frames[f].parent != level) f = info.frames[f].parent;
    return f == level ? -1 : f;
  };
  std::map<int, int> loop_index;  // child frame -> loops_ index
  auto loop_for = [&](int frame) {
    auto [it, inserted] = loop_index.try_emplace(frame, static_cast<int>(loops_.size()));
    if (inserted) loops_.emplace_back();
    return it->second;
  };
  for (Node* n : g.nodes()) {
    const int id = n->id();
    int frame = info.frame_of[id];
    if (n->control_flow() == ControlFlowRole::kEnter && frame == level) {
      const int loop = loop_for(info.enter_child[id]);
      loops_[loop].enters.push_back(n);
      loop_of_[id] = loop;
      continue;
    }
    if (frame == level || frame < 0) continue;
    const int child = child_of_level(frame);
    if (child < 0) continue;
    const int loop = loop_for(child);
    loop_of_[id] = loop;
    if (n->control_flow() == ControlFlowRole::kExit && frame == child && on_path_[id]) {
      loops_[loop].exits.push_back(n);
    }
  }
  if (!loops_.empty() && !scope_.registry()->while_loop_gradient()) {
    return absl::UnimplementedError(
        "AddGradients: a while loop lies between the ys and the xs and this op registry has no "
        "while-loop gradient (OpRegistry::SetWhileLoopGradient)");
  }
  return absl::OkStatus();
}

absl::Status GradientBuilder::BackpropLoop(int index) {
  Loop& loop = loops_[index];
  WhileLoopGradRequest request;
  request.exits = loop.exits;
  for (Node* exit : loop.exits) request.exit_grads.push_back(SumDense({exit->id(), 0}));
  request.enters = loop.enters;
  absl::StatusOr<std::vector<Output>> grads =
      scope_.registry()->while_loop_gradient()(scope_, request);
  if (!grads.ok()) {
    return AddContext(grads.status(),
                      absl::StrCat("gradient of the while loop of ", loop.enters[0]->DebugName()));
  }
  RETURN_IF_ERROR(scope_.status());
  for (size_t k = 0; k < loop.enters.size(); ++k) {
    Node* enter = loop.enters[k];
    if (!on_path_[enter->id()]) continue;
    const Edge* e = enter->input_edge(0);
    if (e == nullptr || !on_path_[e->src->id()]) continue;
    PassToInput(e, k < grads->size() ? Gradient((*grads)[k]) : Gradient());
  }
  return absl::OkStatus();
}

std::string GradientBuilder::GradientFunctionFor(const Node& call) const {
  absl::StatusOr<NameAttrList> f = CalledFunction(call);
  return f.ok() ? scope_.graph()->GradientFunctionOf(f->name()) : "";
}

absl::StatusOr<std::vector<Output>> GradientBuilder::CallGradientFunction(
    const Scope& s, const Node& call, absl::Span<const Output> dy,
    const std::string& grad_function) {
  ASSIGN_OR_RETURN(NameAttrList f, CalledFunction(call));
  OpBuilder b = s.Op(grad_function);
  for (int i = 0; i < call.num_inputs(); ++i) {
    const Edge* e = call.input_edge(i);
    if (e == nullptr) return absl::InvalidArgumentError(absl::StrCat("input ", i, " is not connected"));
    b.Input(Output(e->src, e->src_output));
  }
  for (int k = 0; k < call.num_outputs(); ++k) {
    // An output no gradient reaches gets zeros, as TensorFlow gives it.
    b.Input(dy[k].valid()
                ? dy[k]
                : s.Op("ZerosLike").Input(Output(const_cast<Node*>(&call), k)).Finalize1());
  }
  for (const auto& [name, value] : f.attr()) b.SetAttr(name, value);
  std::vector<Output> dx = b.FinalizeAll();
  RETURN_IF_ERROR(s.status());
  if (static_cast<int>(dx.size()) != call.num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat("gradient function '", grad_function,
                                                   "' returns ", dx.size(), " tensors for ",
                                                   call.num_inputs(), " inputs"));
  }
  return dx;
}

void GradientBuilder::FindPath() {
  const Graph& g = *scope_.graph();
  std::vector<bool> from_x = Reach(g, xs_, /*forward=*/true, boundary_);
  std::vector<bool> to_y = Reach(g, ys_, /*forward=*/false, boundary_);
  on_path_.assign(g.num_node_ids(), false);
  for (int i = 0; i < g.num_node_ids(); ++i) on_path_[i] = from_x[i] && to_y[i];
}

absl::Status GradientBuilder::InlineCallsOnPath() {
  constexpr int kMaxDepth = 32;
  for (int depth = 0;; ++depth) {
    FindPath();
    std::vector<Node*> calls;
    for (Node* n : scope_.graph()->nodes()) {
      if (on_path_[n->id()] &&
          (HasLowering(*n) || (IsFunctionCall(*n) && GradientFunctionFor(*n).empty()))) {
        calls.push_back(n);
      }
    }
    if (calls.empty()) return absl::OkStatus();
    if (depth == kMaxDepth) {
      return absl::FailedPreconditionError(absl::StrCat(
          "AddGradients: function calls nested more than ", kMaxDepth, " deep at ",
          calls[0]->DebugName()));
    }
    for (Node* call : calls) RETURN_IF_ERROR(LowerOrInline(scope_.graph(), call).status());
  }
}

absl::StatusOr<std::vector<Gradient>> GradientBuilder::Run() {
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
  RETURN_IF_ERROR(InlineCallsOnPath());
  const Graph& g = *scope_.graph();
  RETURN_IF_ERROR(FindLoops());

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
    grads_[{y.node->id(), y.index}].push_back(Gradient(seed));
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
    const int loop = loop_of_.empty() ? -1 : loop_of_[n->id()];
    if (loop < 0) {
      RETURN_IF_ERROR(BackpropNode(n));
    } else if (n->control_flow() == ControlFlowRole::kExit &&
               ++loops_[loop].exits_ready == static_cast<int>(loops_[loop].exits.size())) {
      RETURN_IF_ERROR(BackpropLoop(loop));
    }
  }
  std::vector<Gradient> result;
  for (const Output& x : xs_) result.push_back(SumGradients({x.node->id(), x.index}));
  RETURN_IF_ERROR(scope_.status());
  return result;
}

// Every gradient dense (sparse ones through IndexedSlicesToDense nodes).
absl::StatusOr<std::vector<Output>> Densify(const Scope& scope, absl::Span<const Output> xs,
                                            std::vector<Gradient> grads) {
  std::vector<Output> dense;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Scope s = scope.NewSubScope("gradients").NewSubScope(
        absl::StrCat(xs[i].node->name(), "_grad"));
    dense.push_back(DenseOf(s, grads[i]));
  }
  RETURN_IF_ERROR(scope.status());
  return dense;
}

}  // namespace

absl::StatusOr<std::vector<Output>> AddGradients(const Scope& scope, absl::Span<const Output> ys,
                                                 absl::Span<const Output> xs,
                                                 absl::Span<const Output> grad_ys) {
  return AddGradientsWithin(scope, ys, xs, grad_ys, {});
}

absl::StatusOr<std::vector<Gradient>> AddGradientsWithSlices(const Scope& scope,
                                                             absl::Span<const Output> ys,
                                                             absl::Span<const Output> xs,
                                                             absl::Span<const Output> grad_ys) {
  RETURN_IF_ERROR(scope.status());
  GradientBuilder builder(scope, ys, xs, grad_ys, {});
  return builder.Run();
}

absl::StatusOr<std::vector<Output>> AddGradientsWithin(
    const Scope& scope, absl::Span<const Output> ys, absl::Span<const Output> xs,
    absl::Span<const Output> grad_ys, const absl::flat_hash_set<const Node*>& boundary) {
  RETURN_IF_ERROR(scope.status());
  GradientBuilder builder(scope, ys, xs, grad_ys, boundary);
  ASSIGN_OR_RETURN(std::vector<Gradient> grads, builder.Run());
  return Densify(scope, xs, std::move(grads));
}

}  // namespace sluice
