#include "ops/internal/lowering.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/attr_value.h"
#include "ops/array/array_ops.h"

namespace sluice {

absl::StatusOr<Lowering> BeginLowering(Graph* graph, Node* node) {
  Lowering l{graph, node, graph->num_node_ids(),
             Scope::NewRootScope(graph).WithDevice(node->requested_device())
                 .NewSubScope(node->name()),
             std::vector<Output>(node->num_inputs())};
  std::vector<Node*> control;
  for (const Edge* e : node->in_edges()) {
    if (e->IsControl()) {
      control.push_back(e->src);
    } else {
      l.inputs[e->dst_input] = Output(e->src, e->src_output);
    }
  }
  for (int i = 0; i < node->num_inputs(); ++i) {
    if (!l.inputs[i].valid()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " is not connected"));
    }
  }
  const std::vector<const Edge*> old_edges = node->in_edges();
  for (const Edge* e : old_edges) graph->RemoveEdge(e);
  if (!control.empty()) {
    // Nothing of the node runs before its control inputs have.
    const Scope gated = l.scope.WithControlDependencies(control);
    for (Output& in : l.inputs) in = ops::Identity(gated.WithOpName("gated_input"), in);
  }
  RETURN_IF_ERROR(l.scope.status());
  return l;
}

absl::StatusOr<std::vector<Node*>> FinishLowering(Lowering& l, const std::vector<Output>& results,
                                                  Node* done) {
  RETURN_IF_ERROR(l.scope.status());
  NodeDef def;
  if (results.empty()) {
    def.set_op("NoOp");
  } else {
    def.set_op("IdentityN");
    std::vector<DataType> types;
    for (const Output& r : results) types.push_back(r.dtype());
    (*def.mutable_attr())["T"] = MakeAttr(types);
  }
  for (const auto& [name, value] : l.node->attrs()) {
    if (name.rfind("_", 0) == 0) (*def.mutable_attr())[name] = value;
  }
  RETURN_IF_ERROR(l.graph->ReplaceOp(l.node, std::move(def)));
  for (size_t i = 0; i < results.size(); ++i) {
    RETURN_IF_ERROR(l.graph->AddEdge(results[i].node, results[i].index, l.node,
                                     static_cast<int>(i)));
  }
  if (done != nullptr) l.graph->AddControlEdge(done, l.node);
  std::vector<Node*> added;
  for (int id = l.first_id; id < l.graph->num_node_ids(); ++id) {
    if (Node* n = l.graph->node(id); n != nullptr) added.push_back(n);
  }
  return added;
}

}  // namespace sluice
