#include "placement/group_updates.h"

#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/op_def.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

// One kind of update: the op grouped, its multi op, how many of its leading
// inputs are variables and how many scalars follow them; the gradient is
// the last input.
struct Kind {
  const char* op;
  const char* multi;
  int vars;
  int scalars;
};

constexpr Kind kKinds[] = {
    {"ApplyGradientDescent", "_MultiApplyGradientDescent", 1, 1},
    {"ApplyAdam", "_MultiApplyAdam", 3, 6},
    {"ResourceApplyGradientDescent", "_MultiResourceApplyGradientDescent", 1, 1},
    {"ResourceApplyAdam", "_MultiResourceApplyAdam", 3, 6},
};

// Which variable the update's input `e` names, by the container and shared
// name (else node name) it lives under in its device's ResourceMgr: a
// resource handle's VarHandleOp (through Identity nodes), a ref's variable
// node (two of which may share a name). nullopt when it comes from anything
// else (a partition's _Recv, a function's _Arg, a loop's Enter: the
// variable is unknown, so the update is not grouped).
std::optional<std::string> VariableOf(const Edge& e) {
  const Node* src = e.src;
  if (e.src->output_type(e.src_output) == DT_RESOURCE) {
    while (src->op() == "Identity" && src->input_edge(0) != nullptr) {
      src = src->input_edge(0)->src;
    }
    if (src->op() != "VarHandleOp") return std::nullopt;
  } else if (!src->op_def().is_variable) {
    return std::nullopt;
  }
  const std::string container = src->GetAttr<std::string>("container").value_or("");
  std::string name = src->GetAttr<std::string>("shared_name").value_or("");
  if (name.empty()) name = src->name();
  return absl::StrCat(container, "/", name);
}

class Grouper {
 public:
  Grouper(Graph* graph, const GroupUpdatesOptions& options)
      : graph_(graph), options_(options), keep_(options.keep.begin(), options.keep.end()) {}

  absl::StatusOr<GroupUpdatesStats> Run() {
    for (const Kind& kind : kKinds) {
      // Afresh for each kind: the last one's groups replaced nodes.
      ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
      // Candidates by key, in dataflow order.
      std::map<std::string, std::vector<Node*>> by_key;
      for (Node* n : order) {
        if (n->op() != kind.op) continue;
        std::optional<std::string> key = Key(*n, kind);
        if (key.has_value()) by_key[*key].push_back(n);
      }
      for (auto& [key, members] : by_key) {
        std::vector<Node*> group = Independent(members, kind);
        if (group.size() < 2) continue;
        RETURN_IF_ERROR(Replace(group, kind));
        ++stats_.groups;
        stats_.updates += static_cast<int>(group.size());
      }
    }
    return stats_;
  }

 private:
  // What members of one group share: device, attrs, the scalars' sources.
  // Nothing when `n` may not be grouped.
  std::optional<std::string> Key(const Node& n, const Kind& kind) const {
    if (keep_.contains(n.name())) return std::nullopt;
    for (const Edge* e : n.out_edges()) {
      if (!e->IsControl()) return std::nullopt;  // its ref output is read
    }
    absl::StatusOr<DeviceName> device = DeviceName::Parse(n.assigned_device());
    if (!device.ok() || !device->type) return std::nullopt;
    bool enabled = false;
    for (const std::string& t : options_.device_types) enabled |= t == *device->type;
    if (!enabled) return std::nullopt;
    const auto t = n.attrs().find("T");
    if (t == n.attrs().end()) return std::nullopt;
    AttrMap attrs;
    attrs["T"] = t->second;
    if (options_.kernels->FindKernelDef(kind.multi, attrs, *device->type) == nullptr) {
      return std::nullopt;
    }
    std::string key = absl::StrCat(n.assigned_device(), "|", DataTypeName(t->second.type()));
    for (const char* flag : {"use_locking", "use_nesterov"}) {
      absl::StatusOr<bool> b = n.GetAttr<bool>(flag);
      absl::StrAppend(&key, "|", b.ok() && *b ? 1 : 0);
    }
    for (int i = 0; i < kind.vars; ++i) {
      const Edge* e = n.input_edge(i);
      if (e == nullptr || !VariableOf(*e).has_value()) return std::nullopt;
    }
    for (int i = kind.vars; i < kind.vars + kind.scalars; ++i) {
      const Edge* e = n.input_edge(i);
      if (e == nullptr) return std::nullopt;
      // Constants by value: an optimizer builds its learning rate beside
      // each variable, one Const per update.
      const auto value = e->src->attrs().find("value");
      if (e->src->op() == "Const" && value != e->src->attrs().end()) {
        absl::StrAppend(&key, "|=", value->second.tensor().SerializeAsString());
      } else {
        absl::StrAppend(&key, "|", e->src->id(), ":", e->src_output);
      }
    }
    return key;
  }

  // The members (in dataflow order) that may join one node: neither needs
  // another kept one, in either direction, on the graph as it is now (an
  // earlier group may have joined what each needs); none updates a variable
  // another already updates; and none is downstream of a Switch or an Enter
  // (a node fed by one dead input is skipped whole, and a group may not
  // span frames: such updates stay as they are).
  std::vector<Node*> Independent(const std::vector<Node*>& members, const Kind& kind) const {
    std::vector<Node*> kept;
    std::vector<std::vector<bool>> kept_needs;
    absl::flat_hash_set<std::string> variables;
    for (Node* n : members) {
      std::vector<Node*> inputs;
      for (const Edge* e : n->in_edges()) inputs.push_back(e->src);
      std::vector<bool> needs = ReachableBackward(*graph_, inputs);
      bool ok = true;
      for (size_t id = 0; id < needs.size() && ok; ++id) {
        const Node* a = needs[id] ? graph_->node(static_cast<int>(id)) : nullptr;
        if (a != nullptr && (a->control_flow() == ControlFlowRole::kSwitch ||
                             a->control_flow() == ControlFlowRole::kEnter)) {
          ok = false;
        }
      }
      for (size_t k = 0; k < kept.size() && ok; ++k) {
        ok = !needs[kept[k]->id()] &&
             !(n->id() < static_cast<int>(kept_needs[k].size()) && kept_needs[k][n->id()]);
      }
      std::vector<std::string> mine;
      for (int i = 0; i < kind.vars && ok; ++i) {
        mine.push_back(*VariableOf(*n->input_edge(i)));  // Key() checked it
        ok = !variables.contains(mine.back());
      }
      if (!ok) continue;
      variables.insert(mine.begin(), mine.end());
      kept.push_back(n);
      kept_needs.push_back(std::move(needs));
    }
    return kept;
  }

  // Puts one multi node in place of `group`.
  absl::Status Replace(const std::vector<Node*>& group, const Kind& kind) {
    const Node& first = *group.front();
    const int n = static_cast<int>(group.size());
    NodeDef def;
    def.set_name(graph_->NewName(absl::StrCat(first.name(), "/", kind.multi + 1)));
    def.set_op(kind.multi);
    def.set_device(first.requested_device());
    for (const char* attr : {"T", "use_locking", "use_nesterov"}) {
      auto it = first.attrs().find(attr);
      if (it != first.attrs().end()) (*def.mutable_attr())[attr] = it->second;
    }
    (*def.mutable_attr())["N"].set_i(n);
    // Inputs: each variable list, the scalars, the gradients.
    struct End {
      Node* node;
      int index;
    };
    std::vector<End> inputs;
    for (int k = 0; k < kind.vars; ++k) {
      for (const Node* m : group) {
        const Edge* e = m->input_edge(k);
        inputs.push_back({e->src, e->src_output});
      }
    }
    for (int k = kind.vars; k < kind.vars + kind.scalars; ++k) {
      const Edge* e = first.input_edge(k);
      inputs.push_back({e->src, e->src_output});
    }
    const int grad = kind.vars + kind.scalars;
    for (const Node* m : group) {
      const Edge* e = m->input_edge(grad);
      inputs.push_back({e->src, e->src_output});
    }
    std::vector<Node*> control_in, control_out;
    for (const Node* m : group) {
      for (const Edge* e : m->in_edges()) {
        if (e->IsControl()) control_in.push_back(e->src);
      }
      for (const Edge* e : m->out_edges()) control_out.push_back(e->dst);
    }
    std::vector<TensorShape> shapes;
    for (const Node* m : group) {
      if (m->num_outputs() > 0) shapes.push_back(m->output_shape(0));  // not the resource forms
    }
    const std::string device = first.assigned_device();
    const std::string what = absl::StrCat("grouping the updates of ", first.DebugName(), ": ");
    for (Node* m : group) graph_->RemoveNode(m);
    absl::StatusOr<Node*> added = graph_->AddNode(std::move(def));
    if (!added.ok()) return absl::InternalError(what + added.status().ToString());
    Node* multi = *added;
    multi->set_assigned_device(device);
    for (size_t i = 0; i < shapes.size(); ++i) {
      multi->set_output_shape(static_cast<int>(i), shapes[i]);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      absl::Status s = graph_->AddEdge(inputs[i].node, inputs[i].index, multi, static_cast<int>(i));
      if (!s.ok()) return absl::InternalError(what + s.ToString());
    }
    for (Node* src : control_in) graph_->AddControlEdge(src, multi);
    for (Node* dst : control_out) graph_->AddControlEdge(multi, dst);
    return absl::OkStatus();
  }

  Graph* const graph_;
  const GroupUpdatesOptions& options_;
  const absl::flat_hash_set<std::string> keep_;
  GroupUpdatesStats stats_;
};

}  // namespace

absl::StatusOr<GroupUpdatesStats> GroupUpdates(Graph* graph, const GroupUpdatesOptions& options) {
  if (options.kernels == nullptr) {
    return absl::InvalidArgumentError("GroupUpdates: no kernel registry");
  }
  return Grouper(graph, options).Run();
}

}  // namespace sluice
