#include "runtime/freeze_graph.h"

#include "absl/strings/str_cat.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"

namespace sluice {

namespace {

// Whether `op` takes an input by reference (an update: Assign, Apply*, ...).
bool TakesARef(const OpDef* op) {
  if (op == nullptr) return false;
  for (const ArgDef& arg : op->inputs) {
    if (arg.is_ref) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<GraphDef> FreezeGraph(Session* session, const OpRegistry& ops,
                                     const GraphDef& graph,
                                     const std::vector<std::string>& outputs) {
  ASSIGN_OR_RETURN(GraphDef pruned, PruneGraphDef(graph, outputs));
  std::vector<std::string> var_names;
  for (const NodeDef& n : pruned.node()) {
    const OpDef* op = ops.Find(n.op());
    if (op != nullptr && op->is_variable) var_names.push_back(n.name());
  }
  std::vector<Tensor> values;
  if (!var_names.empty()) {
    ASSIGN_OR_RETURN(values, session->Run({}, var_names, {}));
  }
  GraphDef out;
  *out.mutable_versions() = pruned.versions();
  size_t k = 0;
  for (const NodeDef& n : pruned.node()) {
    NodeDef* copy = out.add_node();
    if (k < var_names.size() && n.name() == var_names[k]) {
      copy->set_name(n.name());
      copy->set_op("Const");
      copy->set_device(n.device());
      tensorflow::TensorProto proto;
      values[k].ToProto(&proto);
      (*copy->mutable_attr())["dtype"] = MakeAttr(values[k].dtype());
      (*copy->mutable_attr())["value"] = MakeAttr(proto);
      ++k;
      continue;
    }
    *copy = n;
    if (!TakesARef(ops.Find(n.op()))) continue;
    for (const std::string& in : n.input()) {
      for (const std::string& v : var_names) {
        if (in == v || in == v + ":0") {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot freeze: node '", n.name(), "' (", n.op(), ") updates variable '", v,
              "' and is needed by the outputs"));
        }
      }
    }
  }
  return out;
}

}  // namespace sluice
