#include "ops/control_flow/control_flow_builders.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_ops.h"

namespace sluice {
namespace ops {
namespace {

using MakeCapture = std::function<Output(const Output& outer)>;

// TensorFlow's contexts rewrite a tensor from outside a branch or loop as it
// is used; here the nodes a branch or body built (ids in [first, end)) are
// rewired afterwards: each data input from a node older than `boundary`
// comes through `make(outer)`, made once per tensor. Nodes in `keep` are
// left alone. Control inputs from older nodes move to `control_target`
// when it is set (a loop's first Enter), else stay.
absl::Status CaptureOuterInputs(const Scope& scope, int boundary, int first, int end,
                                const absl::flat_hash_set<const Node*>& keep,
                                const MakeCapture& make, Node* control_target,
                                const std::function<bool(const Node&)>& not_in_loop = nullptr) {
  Graph* graph = scope.graph();
  std::map<std::pair<const Node*, int>, Output> made;
  for (int id = first; id < end; ++id) {
    Node* n = graph->node(id);
    if (n == nullptr || keep.contains(n) || (not_in_loop && not_in_loop(*n))) continue;
    const std::vector<const Edge*> in(n->in_edges().begin(), n->in_edges().end());
    for (const Edge* e : in) {
      // Nodes built meanwhile but outside the loop count as outer too.
      const bool outer_later = not_in_loop && not_in_loop(*e->src);
      if (e->src->id() >= boundary && !outer_later) continue;
      if (e->IsControl()) {
        if (outer_later) continue;
        if (control_target == nullptr) continue;
        Node* src = e->src;
        graph->RemoveEdge(e);
        graph->AddControlEdge(src, control_target);
        continue;
      }
      const std::pair<const Node*, int> key{e->src, e->src_output};
      auto it = made.find(key);
      if (it == made.end()) {
        Output captured = make(Output(e->src, e->src_output));
        RETURN_IF_ERROR(scope.status());
        it = made.emplace(key, captured).first;
      }
      const int dst_input = e->dst_input;
      graph->RemoveEdge(e);
      RETURN_IF_ERROR(graph->AddEdge(it->second.node, it->second.index, n, dst_input));
    }
  }
  return absl::OkStatus();
}

// A result that is itself an outer tensor goes through `make` as well.
Output CaptureResult(const Output& result, int boundary, const MakeCapture& make) {
  if (result.valid() && result.node->id() < boundary) return make(result);
  return result;
}

// `scope`'s prefix plus a fresh name: "while", "while_1", ...
Scope UniqueSubScope(const Scope& scope, const std::string& name) {
  const std::string full = scope.GetUniqueNameForOp(name);
  return scope.NewSubScope(full.substr(scope.name_prefix().size()));
}

}  // namespace

absl::StatusOr<std::vector<Output>> Cond(const Scope& scope, const Output& pred,
                                         const BranchFn& then_fn, const BranchFn& else_fn,
                                         std::source_location loc) {
  RETURN_IF_ERROR(scope.status());
  Graph* graph = scope.graph();
  const Scope cs = UniqueSubScope(scope, "cond");
  const int boundary = graph->num_node_ids();
  const SwitchOutputs pivots = Switch(cs.WithOpName("Switch"), pred, pred, loc);
  const Output switch_t = Identity(cs.WithOpName("switch_t"), pivots.output_true, loc);
  const Output switch_f = Identity(cs.WithOpName("switch_f"), pivots.output_false, loc);
  const Output pred_id = Identity(cs.WithOpName("pred_id"), pred, loc);
  RETURN_IF_ERROR(scope.status());

  auto branch = [&](const BranchFn& fn, const Output& pivot,
                    bool taken_when) -> absl::StatusOr<std::vector<Output>> {
    const int first = graph->num_node_ids();
    std::vector<Output> results = fn(cs.WithControlDependencies({pivot}));
    RETURN_IF_ERROR(scope.status());
    const MakeCapture through_switch = [&](const Output& outer) {
      SwitchOutputs sw = Switch(cs.WithOpName("Switch"), outer, pred_id, loc);
      return taken_when ? sw.output_true : sw.output_false;
    };
    RETURN_IF_ERROR(CaptureOuterInputs(cs, boundary, first, graph->num_node_ids(), {},
                                       through_switch, nullptr));
    for (Output& r : results) r = CaptureResult(r, boundary, through_switch);
    RETURN_IF_ERROR(scope.status());
    return results;
  };
  ASSIGN_OR_RETURN(std::vector<Output> then_out, branch(then_fn, switch_t, true));
  ASSIGN_OR_RETURN(std::vector<Output> else_out, branch(else_fn, switch_f, false));
  if (then_out.size() != else_out.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cond ", cs.name_prefix(), ": the true branch returns ", then_out.size(),
        " tensors, the false branch ", else_out.size()));
  }
  std::vector<Output> merged;
  for (size_t i = 0; i < then_out.size(); ++i) {
    // TensorFlow's order: the false branch's value is input 0.
    merged.push_back(Merge(cs.WithOpName("Merge"), {else_out[i], then_out[i]}, loc).output);
  }
  RETURN_IF_ERROR(scope.status());
  return merged;
}

absl::StatusOr<std::vector<Output>> WhileLoop(const Scope& scope,
                                              absl::Span<const Output> loop_vars,
                                              const LoopCondFn& cond, const LoopBodyFn& body,
                                              const WhileLoopAttrs& attrs,
                                              std::source_location loc) {
  RETURN_IF_ERROR(scope.status());
  if (loop_vars.empty()) {
    return absl::InvalidArgumentError("WhileLoop needs at least one loop variable");
  }
  Graph* graph = scope.graph();
  const Scope ws = UniqueSubScope(scope, attrs.name);
  const std::string frame = absl::StrCat(ws.name_prefix(), "while_context");
  const int boundary = graph->num_node_ids();
  const EnterAttrs enter_attrs{.is_constant = false,
                               .parallel_iterations = attrs.parallel_iterations};

  std::vector<Output> enters, merges, idents, exits;
  std::vector<Node*> merge_nodes;
  absl::flat_hash_set<const Node*> own_enters;
  for (const Output& v : loop_vars) {
    enters.push_back(Enter(ws.WithOpName("Enter"), v, frame, enter_attrs, loc));
    own_enters.insert(enters.back().node);
  }
  for (const Output& e : enters) {
    // Input 1 becomes the NextIteration once the body exists.
    MergeOutputs m = Merge(ws.WithOpName("Merge"), {e, e}, loc);
    merges.push_back(m.output);
    merge_nodes.push_back(m.output.node);
  }
  RETURN_IF_ERROR(scope.status());

  const Output pred = cond(ws.WithControlDependencies({merges[0]}), merges);
  RETURN_IF_ERROR(scope.status());
  const Output loop_cond = LoopCond(ws.WithOpName("LoopCond"), pred, loc);
  for (const Output& m : merges) {
    SwitchOutputs sw = Switch(ws.WithOpName("Switch"), m, loop_cond, loc);
    exits.push_back(Exit(ws.WithOpName("Exit"), sw.output_false, loc));
    idents.push_back(Identity(ws.WithOpName("Identity"), sw.output_true, loc));
  }
  RETURN_IF_ERROR(scope.status());

  std::vector<Output> next_values = body(ws.WithControlDependencies({idents[0]}), idents);
  RETURN_IF_ERROR(scope.status());
  if (next_values.size() != loop_vars.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("WhileLoop ", ws.name_prefix(), ": the body returns ", next_values.size(),
                     " tensors for ", loop_vars.size(), " loop variables"));
  }
  // Loop invariants enter once per tensor (own_enters: not rewired again).
  const MakeCapture invariant = [&](const Output& outer) {
    Output e = Enter(ws.WithOpName("Enter"), outer, frame,
                     EnterAttrs{.is_constant = true, .parallel_iterations = attrs.parallel_iterations},
                     loc);
    if (e.valid()) own_enters.insert(e.node);
    return e;
  };
  for (size_t i = 0; i < next_values.size(); ++i) {
    const Output value = CaptureResult(next_values[i], boundary, invariant);
    const Output next = NextIteration(ws.WithOpName("NextIteration"), value, loc);
    RETURN_IF_ERROR(scope.status());
    graph->RemoveEdge(merge_nodes[i]->input_edge(1));
    RETURN_IF_ERROR(graph->AddEdge(next.node, next.index, merge_nodes[i], 1));
  }
  RETURN_IF_ERROR(CaptureOuterInputs(ws, boundary, boundary, graph->num_node_ids(), own_enters,
                                     invariant, enters[0].node, attrs.not_in_loop));
  RETURN_IF_ERROR(scope.status());
  return exits;
}

}  // namespace ops
}  // namespace sluice
