// Gradients of the control-flow ops in a cond (TensorFlow's _SwitchGrad and
// _MergeGrad for a CondContext): a Merge's gradient is switched on the
// cond's predicate, so it flows back only into the branch that ran; a
// Switch's gradient merges the two branches' gradients. Gradients through
// while loops (which need stacks of the forward values) are refused with a
// clear error.
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/graph.h"
#include "graph/scope.h"
#include "ops/array_ops.h"
#include "ops/control_flow_ops.h"
#include "ops/gradients.h"

namespace sluice {
namespace {

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

GradResult LoopGrad(const Scope&, const Node& node, absl::Span<const Output>) {
  return absl::UnimplementedError(absl::StrCat(
      "gradients through while loops are not supported yet (", node.DebugName(),
      "); gradients through conds are"));
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
  return absl::OkStatus();
}

}  // namespace sluice
