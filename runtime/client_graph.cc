// Pruning and the _Arg/_Retval rewrite shared by the local session and the
// distributed master.
#include "runtime/client_graph.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_io.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"

namespace sluice {

absl::StatusOr<ClientGraph> BuildClientGraph(const Graph& g,
                                             const std::vector<std::string>& feeds,
                                             const std::vector<std::string>& fetches,
                                             const std::vector<std::string>& targets) {
  auto resolve = [&](const std::string& name, const char* what) -> absl::StatusOr<Output> {
    ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
    Node* n = g.FindNode(id.node);
    if (n == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", name, "' names no node in the graph"));
    }
    if (id.index == Edge::kControlSlot || id.index >= n->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "': node ",
                                                     n->DebugName(), " has ", n->num_outputs(),
                                                     " outputs"));
    }
    return Output(n, id.index);
  };
  // Fed outputs: (node id, index) -> feed position.
  std::map<std::pair<int, int>, int> fed;
  // A fed Placeholder does not run: control edges from it leave its _Arg
  // instead (as in TensorFlow). Node id -> feed position.
  std::map<int, int> fed_placeholder;
  std::vector<Output> feed_outputs;
  for (size_t i = 0; i < feeds.size(); ++i) {
    ASSIGN_OR_RETURN(Output o, resolve(feeds[i], "feed"));
    if (!fed.emplace(std::make_pair(o.node->id(), o.index), static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", feeds[i], "' is fed twice"));
    }
    // A Placeholder (not one with a default: that has an input).
    if (o.node->op_def().is_placeholder && o.node->num_inputs() == 0) fed_placeholder[o.node->id()] = static_cast<int>(i);
    feed_outputs.push_back(o);
  }
  std::vector<Output> fetch_outputs;
  for (const std::string& f : fetches) {
    ASSIGN_OR_RETURN(Output o, resolve(f, "fetch"));
    fetch_outputs.push_back(o);
  }
  std::vector<Node*> target_nodes;
  for (const std::string& t : targets) {
    Node* n = g.FindNode(t);
    if (n == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("target '", t, "' names no node in the graph"));
    }
    target_nodes.push_back(n);
  }
  // What the run needs: backwards from fetches and targets, not through fed edges.
  std::vector<bool> needed(g.num_node_ids(), false);
  std::vector<Node*> stack;
  auto visit = [&](Node* n) {
    if (!needed[n->id()]) {
      needed[n->id()] = true;
      stack.push_back(n);
    }
  };
  for (const Output& o : fetch_outputs) {
    if (!fed.count({o.node->id(), o.index})) visit(o.node);
  }
  for (Node* n : target_nodes) visit(n);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl() && fed.count({e->src->id(), e->src_output})) continue;
      if (e->IsControl() && fed_placeholder.count(e->src->id())) continue;
      visit(e->src);
    }
  }
  // Copy the needed nodes into a new graph, with _Arg for feeds and _Retval for fetches.
  auto sub = std::make_unique<Graph>(g.registry());
  *sub->mutable_library() = g.library();  // before the nodes that call its functions
  std::vector<Node*> copy_of(g.num_node_ids(), nullptr);
  for (Node* n : g.nodes()) {
    if (!needed[n->id()]) continue;
    ASSIGN_OR_RETURN(copy_of[n->id()], sub->AddNode(n->def()));
    // The inferred shapes travel too: the passes after pruning (placement's
    // cost model, FuseOps) read them.
    for (int i = 0; i < n->num_outputs(); ++i) {
      copy_of[n->id()]->set_output_shape(i, n->output_shape(i));
    }
  }
  std::vector<Node*> arg_nodes(feeds.size(), nullptr);
  ClientGraph result;
  for (size_t i = 0; i < feed_outputs.size(); ++i) {
    const Output& o = feed_outputs[i];
    NodeDef def;
    def.set_name(sub->NewName(absl::StrCat("_arg_", o.node->name(), "_", o.index)));
    def.set_op(kArgOp);
    def.set_device(o.node->requested_device());  // the fed value starts where its node was
    DataType t = BaseType(o.dtype());
    (*def.mutable_attr())["T"] = MakeAttr(t);
    (*def.mutable_attr())["index"] = MakeAttr(static_cast<int64_t>(i));
    ASSIGN_OR_RETURN(arg_nodes[i], sub->AddNode(std::move(def)));
    result.feed_types.push_back(t);
    TensorShape shape = o.shape();
    if (o.node->op_def().is_placeholder) {
      absl::StatusOr<TensorShape> s = o.node->GetAttr<TensorShape>("shape");
      if (s.ok()) shape = *s;
    }
    arg_nodes[i]->set_output_shape(0, shape);
    result.feed_shapes.push_back(shape);
  }
  for (Node* n : g.nodes()) {
    if (!needed[n->id()]) continue;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControl()) {
        if (needed[e->src->id()]) {
          sub->AddControlEdge(copy_of[e->src->id()], copy_of[n->id()]);
        } else if (auto p = fed_placeholder.find(e->src->id()); p != fed_placeholder.end()) {
          sub->AddControlEdge(arg_nodes[p->second], copy_of[n->id()]);
        }
        continue;
      }
      auto f = fed.find({e->src->id(), e->src_output});
      if (f != fed.end()) {
        RETURN_IF_ERROR(sub->AddEdge(arg_nodes[f->second], 0, copy_of[n->id()], e->dst_input));
      } else {
        RETURN_IF_ERROR(
            sub->AddEdge(copy_of[e->src->id()], e->src_output, copy_of[n->id()], e->dst_input));
      }
    }
  }
  for (size_t i = 0; i < fetch_outputs.size(); ++i) {
    const Output& o = fetch_outputs[i];
    NodeDef def;
    def.set_name(sub->NewName(absl::StrCat("_retval_", o.node->name(), "_", o.index)));
    def.set_op(kRetvalOp);
    (*def.mutable_attr())["T"] = MakeAttr(BaseType(o.dtype()));
    (*def.mutable_attr())["index"] = MakeAttr(static_cast<int64_t>(i));
    ASSIGN_OR_RETURN(Node * r, sub->AddNode(std::move(def)));
    auto f = fed.find({o.node->id(), o.index});
    if (f != fed.end()) {
      RETURN_IF_ERROR(sub->AddEdge(arg_nodes[f->second], 0, r, 0));
    } else {
      RETURN_IF_ERROR(sub->AddEdge(copy_of[o.node->id()], o.index, r, 0));
    }
  }
  result.graph = std::move(sub);
  return result;
}

std::string RunSignatureKey(const std::vector<std::string>& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets) {
  return absl::StrCat(absl::StrJoin(feeds, ","), "|", absl::StrJoin(fetches, ","), "|",
                      absl::StrJoin(targets, ","));
}

absl::StatusOr<std::unique_ptr<Graph>> ExtendGraph(const Graph& graph, const GraphDef& extension) {
  GraphDef merged;
  graph.ToGraphDef(&merged);
  for (const NodeDef& n : extension.node()) *merged.add_node() = n;
  auto extended = std::make_unique<Graph>(graph.registry());
  RETURN_IF_ERROR(ImportGraphDef(merged, extended.get()));
  return extended;
}

absl::Status CheckFeed(const ClientGraph& cg, int i, const std::string& name, const Tensor& t) {
  if (!t.IsInitialized() || t.dtype() != cg.feed_types[i]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' must be ", DataTypeName(cg.feed_types[i]), " ",
        cg.feed_shapes[i].DebugString(), ", got ",
        t.IsInitialized() ? DataTypeName(t.dtype()) : "an uninitialized tensor", " ",
        t.shape().DebugString()));
  }
  if (!cg.feed_shapes[i].IsCompatibleWith(t.shape())) {
    return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' must have shape ",
                                                   cg.feed_shapes[i].DebugString(), ", got ",
                                                   t.shape().DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace sluice
