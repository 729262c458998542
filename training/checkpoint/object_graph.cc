#include "training/checkpoint/object_graph.h"

#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

using ::tensorflow::AttrValue;
using ::tensorflow::GraphDef;
using ::tensorflow::NodeDef;
using ::tensorflow::SavedObjectGraph;
using ::tensorflow::TrackableObjectGraph;

constexpr char kVariableValue[] = "VARIABLE_VALUE";

// For each SavedObjectGraph node reached from the root, the checkpoint
// node reached by the same child names (-1 where the checkpoint has none),
// and the path of names that reached it (for messages).
struct Matched {
  std::vector<int> checkpoint_node;
  std::vector<std::string> path;
};

Matched MatchByChildNames(const SavedObjectGraph& objects,
                          const TrackableObjectGraph& checkpoint) {
  const int n = objects.nodes_size();
  Matched m{std::vector<int>(n, -1), std::vector<std::string>(n)};
  if (n == 0 || checkpoint.nodes_size() == 0) return m;
  m.checkpoint_node[0] = 0;
  m.path[0] = "(root)";
  std::deque<int> queue = {0};
  while (!queue.empty()) {
    const int saved = queue.front();
    queue.pop_front();
    const auto& there = checkpoint.nodes(m.checkpoint_node[saved]).children();
    for (const auto& child : objects.nodes(saved).children()) {
      const int id = child.node_id();
      if (id < 0 || id >= n || m.checkpoint_node[id] >= 0) continue;
      for (const auto& c : there) {
        if (c.local_name() != child.local_name()) continue;
        if (c.node_id() < 0 || c.node_id() >= checkpoint.nodes_size()) break;
        m.checkpoint_node[id] = c.node_id();
        m.path[id] = saved == 0 ? child.local_name()
                                : absl::StrCat(m.path[saved], ".", child.local_name());
        queue.push_back(id);
        break;
      }
    }
  }
  return m;
}

// The node's data inputs ("x", "x:1"; not "^x").
std::vector<std::string> DataInputs(const NodeDef& node) {
  std::vector<std::string> inputs;
  for (const std::string& in : node.input()) {
    if (in.empty() || in[0] == '^') continue;
    inputs.push_back(in);
  }
  return inputs;
}

std::string NodeOf(const std::string& tensor) { return tensor.substr(0, tensor.find(':')); }

AttrValue TypeAttr(::tensorflow::DataType t) {
  AttrValue a;
  a.set_type(t);
  return a;
}

NodeDef* AddNode(GraphDef* graph, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs) {
  NodeDef* n = graph->add_node();
  n->set_name(name);
  n->set_op(op);
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

void AddStringVector(GraphDef* graph, const std::string& name,
                     const std::vector<std::string>& values) {
  NodeDef* n = AddNode(graph, name, "Const", {});
  (*n->mutable_attr())["dtype"] = TypeAttr(::tensorflow::DT_STRING);
  ::tensorflow::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(::tensorflow::DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
  for (const std::string& v : values) t->add_string_val(v);
}

// A prefix for the added nodes that no node of `graph` starts with.
std::string FreshScope(const GraphDef& graph) {
  std::set<std::string> names;
  for (const NodeDef& n : graph.node()) names.insert(NodeOf(n.name()));
  std::string scope = "_captured_variable_restore";
  for (int k = 1;; ++k) {
    auto it = names.lower_bound(scope);
    if (it == names.end() || it->rfind(scope, 0) != 0) return scope;
    scope = absl::StrCat("_captured_variable_restore_", k);
  }
}

// One captured variable: its handle node and where its value is.
struct Capture {
  const NodeDef* handle;
  std::string key;
};

}  // namespace

absl::StatusOr<TrackableObjectGraph> ReadCheckpointObjectGraph(const BundleReader& checkpoint) {
  if (checkpoint.Find(kObjectGraphKey) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("the checkpoint has no ", kObjectGraphKey, " (a name-based checkpoint)"));
  }
  ASSIGN_OR_RETURN(Tensor t, checkpoint.Read(kObjectGraphKey));
  if (t.dtype() != DT_STRING || t.NumElements() != 1) {
    return absl::DataLossError(absl::StrCat(kObjectGraphKey, " is not a string scalar"));
  }
  TrackableObjectGraph graph;
  if (!graph.ParseFromString(t.scalar<std::string>())) {
    return absl::DataLossError(
        absl::StrCat(kObjectGraphKey, " does not parse as a TrackableObjectGraph"));
  }
  return graph;
}

absl::StatusOr<std::vector<BoundInput>> BoundInputsOf(const SavedObjectGraph& objects,
                                                       const NodeDef& call) {
  std::vector<BoundInput> result;
  auto f = call.attr().find("f");
  if (f == call.attr().end() || !f->second.has_func()) return result;
  auto fn = objects.concrete_functions().find(f->second.func().name());
  if (fn == objects.concrete_functions().end()) return result;
  const auto& bound = fn->second.bound_inputs();
  const std::vector<std::string> inputs = DataInputs(call);
  if (static_cast<int>(inputs.size()) < bound.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", call.name(), "' calls '", f->second.func().name(), "' with ", inputs.size(),
        " inputs, fewer than its ", bound.size(), " bound inputs"));
  }
  const size_t first = inputs.size() - bound.size();
  for (int i = 0; i < bound.size(); ++i) {
    const int id = bound[i];
    if (id < 0 || id >= objects.nodes_size()) {
      return absl::InvalidArgumentError(absl::StrCat("function '", f->second.func().name(),
                                                     "' binds object ", id, ", outside the ",
                                                     objects.nodes_size(), " saved objects"));
    }
    result.push_back({id, inputs[first + i]});
  }
  return result;
}

absl::StatusOr<CapturedVariableRestore> AddCapturedVariableRestore(
    const SavedObjectGraph& objects, const TrackableObjectGraph& checkpoint_objects,
    GraphDef* graph, const std::string& scope_name) {
  const Matched matched = MatchByChildNames(objects, checkpoint_objects);
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph->node()) by_name[n.name()] = &n;

  std::vector<Capture> captures;
  std::set<std::string> seen;
  for (const NodeDef& call : graph->node()) {
    ASSIGN_OR_RETURN(std::vector<BoundInput> bound, BoundInputsOf(objects, call));
    for (const BoundInput& b : bound) {
      const int id = b.object;
      if (!objects.nodes(id).has_variable()) continue;  // a resource, asset or constant
      auto handle = by_name.find(NodeOf(b.tensor));
      if (handle == by_name.end() || handle->second->op() != "VarHandleOp") continue;
      if (!seen.insert(handle->second->name()).second) continue;
      const int ckpt = matched.checkpoint_node[id];
      std::string key;
      if (ckpt >= 0) {
        for (const auto& a : checkpoint_objects.nodes(ckpt).attributes()) {
          if (a.name() == kVariableValue) key = a.checkpoint_key();
        }
      }
      if (key.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the checkpoint has no value for variable ",
            matched.path[id].empty() ? absl::StrCat("object ", id) : matched.path[id],
            " (handle '", handle->second->name(), "') that '", call.name(), "' captures"));
      }
      captures.push_back({handle->second, key});
    }
  }
  CapturedVariableRestore r;
  if (captures.empty()) return r;

  // prefix -> RestoreV2(prefix, keys, "") -> AssignVariableOp(handle_i, value_i), grouped.
  const std::string scope = scope_name.empty() ? FreshScope(*graph) : scope_name;
  std::vector<std::string> keys, slices, assigns;
  AttrValue dtypes;
  for (const Capture& c : captures) {
    keys.push_back(c.key);
    slices.emplace_back();
    auto dtype = c.handle->attr().find("dtype");
    dtypes.mutable_list()->add_type(dtype == c.handle->attr().end() ? ::tensorflow::DT_FLOAT
                                                                    : dtype->second.type());
  }
  NodeDef* prefix = AddNode(graph, scope + "/prefix", "Placeholder", {});
  (*prefix->mutable_attr())["dtype"] = TypeAttr(::tensorflow::DT_STRING);
  (*prefix->mutable_attr())["shape"].mutable_shape();  // a scalar
  AddStringVector(graph, scope + "/tensor_names", keys);
  AddStringVector(graph, scope + "/shape_and_slices", slices);
  NodeDef* restore = AddNode(graph, scope + "/RestoreV2", "RestoreV2",
                             {scope + "/prefix", scope + "/tensor_names",
                              scope + "/shape_and_slices"});
  (*restore->mutable_attr())["dtypes"] = dtypes;
  for (size_t i = 0; i < captures.size(); ++i) {
    const NodeDef& handle = *captures[i].handle;
    NodeDef* assign = AddNode(graph, absl::StrCat(scope, "/Assign_", i), "AssignVariableOp",
                              {handle.name(), absl::StrCat(scope, "/RestoreV2:", i)});
    (*assign->mutable_attr())["dtype"] = TypeAttr(dtypes.list().type(static_cast<int>(i)));
    assign->set_device(handle.device());
    assigns.push_back(absl::StrCat("^", assign->name()));
  }
  AddNode(graph, scope + "/restore_all", "NoOp", assigns);
  r.variables = static_cast<int>(captures.size());
  r.target = scope + "/restore_all";
  r.prefix_tensor = scope + "/prefix:0";
  return r;
}

}  // namespace sluice
