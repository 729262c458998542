// Gradients of control flow. In a cond (TensorFlow's _SwitchGrad and
// _MergeGrad for a CondContext): a Merge's gradient is switched on the
// cond's predicate, so it flows back only into the branch that ran; a
// Switch's gradient merges the two branches' gradients. A while loop is
// differentiated whole (WhileLoopGrad, the registry's WhileLoopGradFn).
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/graph.h"
#include "graph/scope.h"
#include "graph/algorithm.h"
#include "graph/control_flow_info.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/control_flow/control_flow_gradients.h"
#include "ops/math/math_ops.h"
#include "ops/control_flow/stack_ops.h"

namespace sluice {
namespace {

using ops::Add;
using ops::Const;
using ops::Enter;
using ops::EnterAttrs;
using ops::Exit;
using ops::Greater;
using ops::Identity;
using ops::Merge;
using ops::MergeOutputs;
using ops::NextIteration;
using ops::StackCloseV2;
using ops::StackPopV2;
using ops::StackPushV2;
using ops::StackV2;
using ops::Sub;
using ops::Switch;
using ops::SwitchOutputs;
using ops::WhileLoop;
using ops::WhileLoopAttrs;
using ops::ZerosLike;

using Grads = std::vector<Output>;
using GradResult = absl::StatusOr<Grads>;

// The predicate of the cond a Merge ends: that of the nearest Switch behind
// it (a branch's captured input, or through the control edge from its pivot,
// the cond's own Switch), not looking into inner conds behind their Merges.
absl::StatusOr<Output> CondPredicate(const Node& merge) {
  std::deque<const Node*> queue;
  absl::flat_hash_set<const Node*> seen;
  for (const Edge* e : merge.in_edges()) {
    if (seen.insert(e->src).second) queue.push_back(e->src);
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    if (n->control_flow() == ControlFlowRole::kSwitch) {
      const Edge* pred = n->input_edge(1);
      return Output(pred->src, pred->src_output);
    }
    if (n->control_flow() == ControlFlowRole::kMerge) continue;  // an inner cond
    for (const Edge* e : n->in_edges()) {
      if (seen.insert(e->src).second) queue.push_back(e->src);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no Switch found behind ", merge.DebugName(), " to take its predicate from"));
}

GradResult MergeGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;
  if (node.num_inputs() != 2) {
    return absl::UnimplementedError(absl::StrCat(
        "the gradient of ", node.DebugName(), " (", node.num_inputs(),
        " inputs) is defined for the two-input Merge of a cond only"));
  }
  ASSIGN_OR_RETURN(Output pred, CondPredicate(node));
  ops::SwitchOutputs sw = ops::Switch(s.WithOpName("cond_grad"), dy[0], pred);
  grads[0] = sw.output_false;
  grads[1] = sw.output_true;
  return grads;
}

GradResult SwitchGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());  // none for the predicate
  if (!dy[0].valid() && !dy[1].valid()) return grads;
  // The side that got no gradient gets zeros that are live exactly when
  // that side is taken.
  Output false_grad = dy[0].valid() ? dy[0] : ops::ZerosLike(s, Output(const_cast<Node*>(&node), 0));
  Output true_grad = dy[1].valid() ? dy[1] : ops::ZerosLike(s, Output(const_cast<Node*>(&node), 1));
  grads[0] = ops::Merge(s.WithOpName("cond_grad"), {false_grad, true_grad}).output;
  return grads;
}

// Reached only when a loop node is differentiated alone, not as part of its
// loop (AddGradients takes loops whole: WhileLoopGrad below).
GradResult LoopGrad(const Scope&, const Node& node, absl::Span<const Output>) {
  return absl::InternalError(absl::StrCat(node.DebugName(),
                                          " is differentiated with its while loop, not alone"));
}

// ---- While loops --------------------------------------------------------------

// One variable of a loop laid out as tf.while_loop lays it out: Enter ->
// Merge -> Switch -> (Exit | Identity -> body -> NextIteration -> Merge).
struct LoopVar {
  Node* enter = nullptr;
  Node* merge = nullptr;
  Node* sw = nullptr;
  Node* exit = nullptr;      // may be missing
  Node* identity = nullptr;  // the body's view of the variable
  Output next;               // the body's new value (NextIteration's input)
};

Node* ConsumerOf(const Node* n, int output, ControlFlowRole role, bool any_role = false) {
  for (const Edge* e : n->out_edges()) {
    if (e->IsControl() || e->src_output != output) continue;
    if (any_role || e->dst->control_flow() == role) return e->dst;
  }
  return nullptr;
}

absl::StatusOr<LoopVar> TraceLoopVar(Node* enter) {
  LoopVar v;
  v.enter = enter;
  v.merge = ConsumerOf(enter, 0, ControlFlowRole::kMerge);
  if (v.merge != nullptr) v.sw = ConsumerOf(v.merge, 0, ControlFlowRole::kSwitch);
  if (v.sw != nullptr) {
    v.exit = ConsumerOf(v.sw, 0, ControlFlowRole::kExit);
    v.identity = ConsumerOf(v.sw, 1, ControlFlowRole::kNone, /*any_role=*/true);
  }
  const Edge* back = v.merge != nullptr && v.merge->num_inputs() == 2 ? v.merge->input_edge(1)
                                                                      : nullptr;
  if (v.sw == nullptr || v.identity == nullptr || back == nullptr || !back->src->IsNextIteration()) {
    return absl::UnimplementedError(absl::StrCat(
        "the while loop of ", enter->DebugName(),
        " is not laid out as tf.while_loop lays loops out (Enter, Merge, Switch, Identity, "
        "NextIteration); its gradient is not supported"));
  }
  const Edge* body_out = back->src->input_edge(0);
  v.next = Output(body_out->src, body_out->src_output);
  return v;
}

// What the while-loop gradients being built share (one thread builds a
// graph). An outer loop's gradient differentiates its body, and with it the
// loops nested in the body; their gradients add nodes to the forward loops
// (counters, stacks, pushes) that every enclosing gradient must leave alone,
// and make values in the outer loop's frame (a stack handle per outer
// iteration, an iteration count) that the outer gradient must push and pop
// like any other forward value.
struct GradientContext {
  std::vector<absl::flat_hash_set<const Node*>*> forward_sides;  // innermost last
  // A node made during a gradient -> an Enter whose frame the node's value
  // is in (the Enter of the nested loop it serves).
  absl::flat_hash_map<const Node*, const Node*> frame_like;
};
thread_local GradientContext* gradient_context = nullptr;

// Registers one loop's forward-side set for as long as its gradient builds.
class ForwardSide {
 public:
  ForwardSide() : owned_(gradient_context == nullptr ? new GradientContext : nullptr) {
    if (owned_ != nullptr) gradient_context = owned_;
    gradient_context->forward_sides.push_back(&nodes_);
  }
  ~ForwardSide() {
    gradient_context->forward_sides.pop_back();
    if (owned_ != nullptr) {
      gradient_context = nullptr;
      delete owned_;
    }
  }
  ForwardSide(const ForwardSide&) = delete;
  ForwardSide& operator=(const ForwardSide&) = delete;

  bool contains(const Node* n) const { return nodes_.contains(n); }
  // Marks the nodes with ids in [begin, end) for this and every enclosing
  // gradient.
  static void Mark(const Graph& graph, int begin, int end) {
    for (int id = begin; id < end; ++id) {
      const Node* n = graph.node(id);
      if (n == nullptr) continue;
      for (auto* set : gradient_context->forward_sides) set->insert(n);
    }
  }
  static void SetFrameLike(const Node* n, const Node* enter) {
    gradient_context->frame_like[n] = enter;
  }
  static const Node* FrameLike(const Node* n) {
    auto it = gradient_context->frame_like.find(n);
    return it == gradient_context->frame_like.end() ? nullptr : it->second;
  }

 private:
  GradientContext* owned_;
  absl::flat_hash_set<const Node*> nodes_;
};

// The frame a node's output values are in: an Enter's child frame, an
// Exit's parent frame, else the node's own; -1 when unknown.
int ValueFrame(const ControlFlowInfo& info, const Node* n) {
  const int frame = info.frame_of[n->id()];
  if (frame < 0) return -1;
  if (n->control_flow() == ControlFlowRole::kEnter) return info.enter_child[n->id()];
  if (n->control_flow() == ControlFlowRole::kExit) return info.frames[frame].parent;
  return frame;
}

// The gradient of one while loop (TensorFlow's approach): a counter added to
// the forward loop counts its iterations; every forward value the body's
// gradient needs is pushed onto a stack each iteration (ordered before the
// counter's increment, so pushes keep iteration order); a backward loop runs
// as many iterations, pops the values in reverse and differentiates the body
// with the ops' gradient functions, carrying the variables' gradients and
// summing the invariants'.
absl::StatusOr<std::vector<Output>> WhileLoopGrad(const Scope& scope,
                                                  const WhileLoopGradRequest& request) {
  Graph* graph = scope.graph();
  ForwardSide forward_side;  // stacks, pushes, the counter: not in the backward loop
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  // An enclosing loop's gradient may be half built: read the forward frames.
  ASSIGN_OR_RETURN(ControlFlowInfo info,
                   BuildControlFlowInfo(*graph, order, {.allow_unresolved = true}));
  const int known_ids = graph->num_node_ids();
  Node* first_enter = request.enters.at(0);
  const int frame = info.enter_child[first_enter->id()];
  const int parent_frame = info.frame_of[first_enter->id()];
  if (frame < 0 || parent_frame < 0) {
    return absl::InternalError(absl::StrCat("no frame for ", first_enter->DebugName()));
  }
  ASSIGN_OR_RETURN(std::string frame_name, first_enter->GetAttr<std::string>("frame_name"));
  ASSIGN_OR_RETURN(int64_t parallel, first_enter->GetAttr<int64_t>("parallel_iterations"));

  // Every variable (its nodes bound the body), and the differentiable ones:
  // floating-point variables and invariants get gradients, and so do
  // variants (TensorLists: their gradient is a list), others none.
  std::vector<LoopVar> all_vars;
  std::vector<LoopVar> vars;
  std::vector<Node*> invariants;
  constexpr int kNoGradient = std::numeric_limits<int>::min();
  // request.enters[i] -> vars index, -(1 + invariant index), or kNoGradient
  std::vector<int> slot_of_enter;
  auto differentiable = [](const Node* enter) {
    const DataType t = BaseType(enter->input_type(0));
    return IsFloatingType(t) || t == ::tensorflow::DT_VARIANT;
  };
  for (Node* enter : request.enters) {
    absl::StatusOr<bool> constant = enter->GetAttr<bool>("is_constant");
    if (constant.ok() && *constant) {
      if (!differentiable(enter)) {
        slot_of_enter.push_back(kNoGradient);
        continue;
      }
      slot_of_enter.push_back(-1 - static_cast<int>(invariants.size()));
      invariants.push_back(enter);
    } else {
      ASSIGN_OR_RETURN(LoopVar v, TraceLoopVar(enter));
      all_vars.push_back(v);
      if (!differentiable(enter)) {
        slot_of_enter.push_back(kNoGradient);
        continue;
      }
      slot_of_enter.push_back(static_cast<int>(vars.size()));
      vars.push_back(v);
    }
  }
  if (all_vars.empty()) return absl::InternalError("a while loop without variables");
  const Edge* cond_edge = all_vars[0].sw->input_edge(1);
  const Output loop_cond(cond_edge->src, cond_edge->src_output);
  absl::flat_hash_map<const Node*, Output> exit_grad;
  for (size_t i = 0; i < request.exits.size(); ++i) {
    exit_grad[request.exits[i]] = request.exit_grads[i];
  }

  // The forward counter, a new variable of the forward loop. What is added
  // to the forward loop ignores the control dependencies of `scope` (an
  // enclosing backward loop's); what must run in the loop's parent frame
  // (the counter's start, the stacks) takes a control input from that
  // frame when it is a loop's.
  const Scope forward = scope.WithNoControlDependencies();
  const Scope in_parent =
      parent_frame == 0 ? forward : forward.WithControlDependencies(std::vector<Node*>{first_enter->input_edge(0)->src});
  const Scope fs = forward.NewSubScope("f_count");
  const EnterAttrs var_attrs{.is_constant = false, .parallel_iterations = parallel};
  const int counter_begin = graph->num_node_ids();
  const Output count_enter = Enter(fs.WithOpName("Enter"), Const(in_parent.NewSubScope("f_count"), 0),
                                   frame_name, var_attrs);
  const MergeOutputs count_merge = Merge(fs.WithOpName("Merge"), {count_enter, count_enter});
  const SwitchOutputs count_switch = Switch(fs.WithOpName("Switch"), count_merge.output, loop_cond);
  const Output count_now = Identity(fs.WithOpName("Identity"), count_switch.output_true);
  const Output count_next = Add(fs.WithControlDependencies({count_now}), count_now, 1);
  const Output count_back = NextIteration(fs.WithOpName("NextIteration"), count_next);
  const Output count = Exit(fs.WithOpName("Exit"), count_switch.output_false);
  RETURN_IF_ERROR(scope.status());
  graph->RemoveEdge(count_merge.output.node->input_edge(1));
  RETURN_IF_ERROR(graph->AddEdge(count_back.node, 0, count_merge.output.node, 1));
  ForwardSide::Mark(*graph, counter_begin, graph->num_node_ids());
  ForwardSide::SetFrameLike(count.node, first_enter);

  // The backward loop: [count, d(var)..., d(invariant)...].
  std::vector<Output> init{count};
  for (const LoopVar& v : vars) {
    auto it = v.exit != nullptr ? exit_grad.find(v.exit) : exit_grad.end();
    if (it != exit_grad.end() && it->second.valid()) {
      init.push_back(it->second);
    } else {
      const Edge* in = v.enter->input_edge(0);
      init.push_back(ZerosLike(scope, Output(in->src, in->src_output)));
    }
  }
  for (Node* inv : invariants) {
    const Edge* in = inv->input_edge(0);
    init.push_back(ZerosLike(scope, Output(in->src, in->src_output)));
  }
  RETURN_IF_ERROR(scope.status());

  absl::flat_hash_set<const Node*> boundary{loop_cond.node};
  for (const LoopVar& v : all_vars) {
    for (Node* n : {v.enter, v.merge, v.sw, v.exit, v.merge->input_edge(1)->src}) {
      if (n != nullptr) boundary.insert(n);
    }
  }
  std::map<std::pair<const Node*, int>, Output> stack_of;
  std::vector<Output> stacks;
  const Scope stack_scope = in_parent.NewSubScope("f_acc");

  auto body = [&](const Scope& b, absl::Span<const Output> v) -> std::vector<Output> {
    const size_t m = vars.size();
    std::vector<Output> ys, grad_ys, xs;
    for (size_t k = 0; k < m; ++k) {
      ys.push_back(vars[k].next);
      grad_ys.push_back(v[1 + k]);
      xs.push_back(Output(vars[k].identity, 0));
    }
    for (Node* inv : invariants) xs.push_back(Output(inv, 0));
    const int first = graph->num_node_ids();
    absl::StatusOr<std::vector<Output>> grads = AddGradientsWithin(b, ys, xs, grad_ys, boundary);
    if (!grads.ok()) {
      b.UpdateStatus(grads.status());
      return {};
    }
    // Forward values the gradient reads come from stacks; invariants from
    // outside (passed in again by WhileLoop).
    std::map<std::pair<const Node*, int>, Output> popped;
    std::vector<Node*> pops;
    auto pop_of = [&](const Output& value) -> Output {
      const std::pair<const Node*, int> key{value.node, value.index};
      auto p = popped.find(key);
      if (p != popped.end()) return p->second;
      auto s = stack_of.find(key);
      if (s == stack_of.end()) {
        const DataType dtype = BaseType(value.dtype());
        const int stack_begin = graph->num_node_ids();
        Output handle = StackV2(stack_scope, dtype);
        Output handle_in = Enter(fs.WithOpName("StackEnter"), handle, frame_name,
                                 EnterAttrs{.is_constant = true, .parallel_iterations = parallel});
        Output push = StackPushV2(fs.WithControlDependencies({count_now}), handle_in, value);
        if (!push.valid()) return Output();
        graph->AddControlEdge(push.node, count_next.node);
        ForwardSide::Mark(*graph, stack_begin, graph->num_node_ids());
        ForwardSide::SetFrameLike(handle.node, first_enter);
        stacks.push_back(handle);
        s = stack_of.emplace(key, handle).first;
      }
      Output pop = StackPopV2(b, s->second, BaseType(value.dtype()));
      pops.push_back(pop.node);
      popped.emplace(key, pop);
      return pop;
    };
    const int end = graph->num_node_ids();
    for (int id = first; id < end; ++id) {
      Node* n = graph->node(id);
      if (n == nullptr || forward_side.contains(n)) continue;
      const std::vector<const Edge*> in(n->in_edges().begin(), n->in_edges().end());
      for (const Edge* e : in) {
        Node* src = e->src;
        if (e->IsControl()) continue;
        // The frame of src's value: from the forward graph, or for a value a
        // nested loop's gradient made in this loop (its stack handles and
        // counts), that of the nested loop's Enter.
        int value_frame = -1;
        if (src->id() < known_ids) {
          value_frame = ValueFrame(info, src);
        } else if (const Node* like = ForwardSide::FrameLike(src);
                   like != nullptr && like->id() < known_ids) {
          value_frame = info.frame_of[like->id()];
        }
        if (value_frame != frame) continue;
        const bool enters_loop = src->control_flow() == ControlFlowRole::kEnter;
        Output replacement;
        absl::StatusOr<bool> constant = src->GetAttr<bool>("is_constant");
        if (enters_loop && constant.ok() && *constant) {
          const Edge* outer = src->input_edge(0);
          replacement = Output(outer->src, outer->src_output);
        } else {
          replacement = pop_of(Output(src, e->src_output));
        }
        if (!replacement.valid()) return {};
        const int dst_input = e->dst_input;
        graph->RemoveEdge(e);
        absl::Status s = graph->AddEdge(replacement.node, replacement.index, n, dst_input);
        if (!s.ok()) {
          b.UpdateStatus(s);
          return {};
        }
      }
    }
    std::vector<Output> next{Sub(b, v[0], 1)};
    // The next iteration's pops wait for this iteration's.
    for (Node* pop : pops) graph->AddControlEdge(pop, next[0].node);
    for (size_t k = 0; k < m; ++k) {
      next.push_back((*grads)[k].valid() ? (*grads)[k] : ZerosLike(b, v[1 + k]));
    }
    for (size_t j = 0; j < invariants.size(); ++j) {
      const Output& g = (*grads)[m + j];
      next.push_back(g.valid() ? Add(b, v[1 + m + j], g) : v[1 + m + j]);
    }
    return next;
  };
  WhileLoopAttrs attrs{.name = "while_grad", .parallel_iterations = parallel};
  attrs.not_in_loop = [&](const Node& n) { return forward_side.contains(&n); };
  ASSIGN_OR_RETURN(
      std::vector<Output> out,
      WhileLoop(scope, init,
                [](const Scope& c, absl::Span<const Output> v) { return Greater(c, v[0], 0); },
                body, attrs));

  // The stacks are closed once the backward loop is done; the gradients
  // wait for that, so a step that uses them frees the stacks.
  std::vector<Node*> exits;
  for (const Output& o : out) exits.push_back(o.node);
  std::vector<Node*> closes;
  for (const Output& h : stacks) {
    closes.push_back(StackCloseV2(scope.WithControlDependencies(exits), h));
  }
  const Scope done = scope.WithControlDependencies(closes);
  std::vector<Output> grads;
  for (int slot : slot_of_enter) {
    if (slot == kNoGradient) {
      grads.push_back(Output());
      continue;
    }
    const size_t index = slot >= 0 ? 1 + slot : 1 + vars.size() + (-1 - slot);
    grads.push_back(Identity(done, out[index]));
  }
  RETURN_IF_ERROR(scope.status());
  return grads;
}

}  // namespace

absl::Status RegisterControlFlowGradients(OpRegistry* ops) {
  for (const char* op : {"Merge", "RefMerge"}) RETURN_IF_ERROR(ops->SetGradient(op, MergeGrad));
  for (const char* op : {"Switch", "RefSwitch"}) RETURN_IF_ERROR(ops->SetGradient(op, SwitchGrad));
  for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                         "RefNextIteration"}) {
    RETURN_IF_ERROR(ops->SetGradient(op, LoopGrad));
  }
  RETURN_IF_ERROR(ops->SetNoGradient("LoopCond"));
  ops->SetWhileLoopGradient(WhileLoopGrad);
  return absl::OkStatus();
}

}  // namespace sluice
