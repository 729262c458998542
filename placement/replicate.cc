#include "placement/replicate.h"

#include <deque>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/algorithm.h"
#include "graph/gradients.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"
#include "graph/types.h"
#include "ops/array/array_ops.h"
#include "ops/math/math_ops.h"
#include "placement/device_name.h"

namespace sluice {
namespace {

using OutputKey = std::pair<const Node*, int>;

bool IsVariableNode(const Node& n) {
  if (n.num_inputs() != 0) return false;
  for (DataType t : n.output_types()) {
    if (IsRefType(t)) return true;
  }
  return false;
}

bool IsPlaceholder(const Node& n) { return n.op_def().is_placeholder; }

// An Identity reading a variable's ref output: the variable's "read" node.
bool IsVariableRead(const Node& n) {
  if (n.op() != "Identity" || n.num_inputs() != 1) return false;
  const Edge* e = n.input_edge(0);
  return e != nullptr && IsVariableNode(*e->src);
}

// Nodes shared by every tower rather than copied.
bool IsShared(const Node& n) { return IsVariableNode(n) || IsVariableRead(n) || IsPlaceholder(n); }

absl::Status CheckDevice(absl::string_view what, const std::string& device) {
  if (device.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty device name"));
  }
  absl::StatusOr<DeviceName> parsed = DeviceName::Parse(device);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": bad device name '", device, "': ", parsed.status().message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateOptions(const ReplicationOptions& o) {
  if (o.devices.empty()) {
    return absl::InvalidArgumentError("replicate: no devices (need one tower per device, K >= 1)");
  }
  for (size_t k = 0; k < o.devices.size(); ++k) {
    RETURN_IF_ERROR(CheckDevice(absl::StrCat("replicate: tower ", k), o.devices[k]));
  }
  if (!o.variable_device.empty()) {
    RETURN_IF_ERROR(CheckDevice("replicate: variable_device", o.variable_device));
  }
  if (!o.loss.valid()) return absl::InvalidArgumentError("replicate: the loss is not set");
  const TensorShape& loss_shape = o.loss.shape();
  if (!loss_shape.unknown_rank() && loss_shape.rank() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("replicate: loss ", o.loss.node->DebugName(), " has shape ",
                     loss_shape.DebugString(), "; it must be a scalar (a mean over the batch)"));
  }
  if (o.batch_inputs.empty()) {
    return absl::InvalidArgumentError("replicate: no batch inputs to split between the towers");
  }
  for (const Output& in : o.batch_inputs) {
    if (!in.valid()) return absl::InvalidArgumentError("replicate: a batch input is not set");
    const TensorShape& shape = in.shape();
    const int64_t k = static_cast<int64_t>(o.devices.size());
    if (shape.rank() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replicate: batch input ", in.node->DebugName(), " is a scalar; it needs a batch dim 0"));
    }
    if (shape.rank() > 0 && shape.dim(0) >= 0 && shape.dim(0) % k != 0) {
      return absl::InvalidArgumentError(absl::StrCat("replicate: batch input ",
                                                     in.node->DebugName(), " has batch size ",
                                                     shape.dim(0), ", not a multiple of ", k,
                                                     " towers"));
    }
  }
  for (const Output& out : o.tower_outputs) {
    if (!out.valid()) return absl::InvalidArgumentError("replicate: a tower output is not set");
  }
  if (o.variables.empty()) return absl::InvalidArgumentError("replicate: no variables");
  for (const Output& v : o.variables) {
    if (!v.valid()) return absl::InvalidArgumentError("replicate: a variable is not set");
    if (!IsRefType(v.node->output_type(v.index))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "replicate: ", v.node->DebugName(), " is not a variable (no ref output ", v.index, ")"));
    }
  }
  return absl::OkStatus();
}

// The nodes the loss and the tower outputs need, through data and control
// edges, not looking past the batch inputs' nodes.
std::vector<bool> TowerAncestors(const Graph& g, const ReplicationOptions& o) {
  std::vector<bool> is_input(g.num_node_ids(), false);
  for (const Output& in : o.batch_inputs) is_input[in.node->id()] = true;
  std::vector<bool> seen(g.num_node_ids(), false);
  std::deque<const Node*> queue = {o.loss.node};
  seen[o.loss.node->id()] = true;
  for (const Output& out : o.tower_outputs) {
    if (!seen[out.node->id()]) queue.push_back(out.node);
    seen[out.node->id()] = true;
  }
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    if (is_input[n->id()]) continue;
    for (const Edge* e : n->in_edges()) {
      if (!seen[e->src->id()]) {
        seen[e->src->id()] = true;
        queue.push_back(e->src);
      }
    }
  }
  return seen;
}

// The "_class" entries of a copy: those naming copied nodes point at the
// copies; those naming shared nodes are dropped.
void RemapColocation(const absl::flat_hash_map<std::string, std::string>& renamed,
                     NodeDef* def) {
  auto it = def->mutable_attr()->find("_class");
  if (it == def->mutable_attr()->end()) return;
  std::vector<std::string> kept;
  for (const std::string& entry : it->second.list().s()) {
    if (!absl::StartsWith(entry, "loc:@")) continue;
    auto r = renamed.find(entry.substr(5));
    if (r != renamed.end()) kept.push_back(absl::StrCat("loc:@", r->second));
  }
  if (kept.empty()) {
    def->mutable_attr()->erase(it);
  } else {
    it->second = MakeAttr(kept);
  }
}

std::string Context(const Node& n) { return absl::StrCat("replicate: copying ", n.DebugName()); }

// Adds tower `k`'s copy of each node of `order` (topologically sorted), on
// `device`, named under `prefix`. Inputs come from the copies, the batch
// slices in `slices` (original tensor -> slice), or the shared originals.
absl::StatusOr<absl::flat_hash_map<const Node*, Node*>> CopyTower(
    Graph* g, absl::Span<Node* const> order, const std::string& prefix,
    const std::string& device, const std::map<OutputKey, Output>& slices) {
  absl::flat_hash_map<const Node*, Node*> copies;
  absl::flat_hash_map<std::string, std::string> renamed;
  absl::flat_hash_set<std::string> taken;
  for (const Node* n : order) {
    const std::string base = absl::StrCat(prefix, n->name());
    std::string name = g->NewName(base);
    while (taken.contains(name)) name = g->NewName(base);
    taken.insert(name);
    renamed[n->name()] = name;
  }
  for (const Node* n : order) {
    NodeDef def = n->def();
    def.set_name(renamed[n->name()]);
    def.set_device(device);
    RemapColocation(renamed, &def);
    absl::StatusOr<Node*> copy = g->AddNode(std::move(def));
    if (!copy.ok()) return AddContext(copy.status(), Context(*n));
    copies[n] = *copy;
  }
  for (const Node* n : order) {
    Node* copy = copies[n];
    for (const Edge* e : n->in_edges()) {
      auto c = copies.find(e->src);
      Node* src = c != copies.end() ? c->second : e->src;
      if (e->IsControl()) {
        g->AddControlEdge(src, copy);
        continue;
      }
      Output from(src, e->src_output);
      auto slice = slices.find({e->src, e->src_output});
      if (slice != slices.end()) from = slice->second;
      absl::Status s = g->AddEdge(from.node, from.index, copy, e->dst_input);
      if (!s.ok()) return AddContext(s, Context(*n));
    }
    absl::Status s = InferShapes(copy);
    if (!s.ok()) return AddContext(s, Context(*n));
  }
  return copies;
}

// The mean of `values` (K >= 1 tensors of one shape), built in `scope` and
// named `name` there.
Output Average(const Scope& scope, const std::vector<Output>& values, const std::string& name) {
  if (values.size() == 1) return values[0];
  Output sum = ops::AddN(scope, values);
  return ops::Mul(scope.WithOpName(name), sum, 1.0 / static_cast<double>(values.size()));
}

}  // namespace

Output ReplicatedGraph::InTower(int tower, const Output& original) const {
  if (tower < 0 || tower >= static_cast<int>(tower_nodes.size())) return Output();
  auto it = tower_nodes[tower].find(original.node);
  if (it == tower_nodes[tower].end()) return Output();
  return Output(it->second, original.index);
}

absl::StatusOr<ReplicatedGraph> ReplicateTraining(const Scope& scope,
                                                  const ReplicationOptions& options) {
  RETURN_IF_ERROR(scope.status());
  RETURN_IF_ERROR(ValidateOptions(options));
  Graph* g = scope.graph();
  const int num_towers = static_cast<int>(options.devices.size());

  std::vector<bool> needed = TowerAncestors(*g, options);
  for (const Output& in : options.batch_inputs) {
    if (!needed[in.node->id()]) {
      return absl::InvalidArgumentError(
          absl::StrCat("replicate: batch input ", in.node->DebugName(), " is not an input of loss ",
                       options.loss.node->DebugName()));
    }
  }
  bool any_variable = false;
  for (const Output& v : options.variables) any_variable |= needed[v.node->id()];
  if (!any_variable) {
    return absl::InvalidArgumentError(absl::StrCat("replicate: loss ",
                                                   options.loss.node->DebugName(),
                                                   " does not depend on any of the variables"));
  }

  // The forward nodes to copy, in topological order.
  std::vector<bool> is_input(g->num_node_ids(), false);
  for (const Output& in : options.batch_inputs) is_input[in.node->id()] = true;
  if (is_input[options.loss.node->id()] || IsShared(*options.loss.node)) {
    return absl::InvalidArgumentError(
        absl::StrCat("replicate: loss ", options.loss.node->DebugName(),
                     " is a batch input or shared state; it must be computed per tower"));
  }
  for (const Output& out : options.tower_outputs) {
    if (is_input[out.node->id()] || IsShared(*out.node)) {
      return absl::InvalidArgumentError(
          absl::StrCat("replicate: tower output ", out.node->DebugName(),
                       " is a batch input or shared state; it must be computed per tower"));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Node*> all, TopologicalOrder(*g));
  std::vector<Node*> order;
  for (Node* n : all) {
    if (needed[n->id()] && !is_input[n->id()] && !IsShared(*n)) order.push_back(n);
  }

  for (const Output& v : options.variables) {
    if (v.node->requested_device().empty()) v.node->set_requested_device(options.variable_device);
  }

  // Slice k of every batch input.
  Scope replicate = scope.NewSubScope("replicate");
  std::map<OutputKey, std::vector<Output>> splits;
  for (const Output& in : options.batch_inputs) {
    OutputKey key(in.node, in.index);
    if (splits.contains(key)) continue;
    const std::string& device = in.node->requested_device().empty()
                                    ? options.variable_device
                                    : in.node->requested_device();
    std::string name = absl::StrCat("split_", in.node->name());
    if (in.index != 0) absl::StrAppend(&name, "_", in.index);
    splits[key] = ops::Split(replicate.WithDevice(device).WithOpName(name), 0, in, num_towers);
  }
  RETURN_IF_ERROR(scope.status());

  ReplicatedGraph result;
  const size_t num_vars = options.variables.size();
  std::vector<std::vector<Output>> tower_grads(num_vars);
  for (int k = 0; k < num_towers; ++k) {
    std::map<OutputKey, Output> slices;
    for (const auto& [key, pieces] : splits) slices[key] = pieces[k];
    const std::string tower_name = absl::StrCat("tower_", k);
    using NodeMap = absl::flat_hash_map<const Node*, Node*>;
    ASSIGN_OR_RETURN(NodeMap copies, CopyTower(g, order, absl::StrCat(scope.name_prefix(),
                                                                      tower_name, "/"),
                                               options.devices[k], slices));
    Output tower_loss(copies.at(options.loss.node), options.loss.index);
    result.tower_losses.push_back(tower_loss);
    std::vector<Output>& outputs = result.tower_outputs.emplace_back();
    for (const Output& out : options.tower_outputs) {
      outputs.push_back(Output(copies.at(out.node), out.index));
    }
    result.tower_nodes.push_back(std::move(copies));

    Scope tower = scope.NewSubScope(tower_name).WithDevice(options.devices[k]);
    absl::StatusOr<std::vector<Output>> grads =
        AddGradients(tower, {tower_loss}, options.variables);
    if (!grads.ok()) {
      return AddContext(grads.status(), absl::StrCat("replicate: gradients of tower ", k));
    }
    for (size_t j = 0; j < num_vars; ++j) tower_grads[j].push_back((*grads)[j]);
  }

  bool any_grad = false;
  for (size_t j = 0; j < num_vars; ++j) {
    const Output& var = options.variables[j];
    GradAndVar gv{Output(), var};
    if (tower_grads[j][0].valid()) {
      Scope s = replicate.NewSubScope(var.node->name()).WithDevice(var.node->requested_device());
      gv.grad = Average(s, tower_grads[j], "mean_grad");
      any_grad = true;
    }
    result.grads_and_vars.push_back(gv);
  }
  if (!any_grad) {
    return absl::InvalidArgumentError(absl::StrCat("replicate: loss ",
                                                   options.loss.node->DebugName(),
                                                   " gets no gradient from any of the variables"));
  }
  result.loss = Average(replicate.WithDevice(options.variable_device), result.tower_losses, "loss");
  RETURN_IF_ERROR(scope.status());
  return result;
}

}  // namespace sluice
