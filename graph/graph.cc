#include "graph/graph.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/util/message_differencer.h"

namespace sluice {
namespace {

bool IsValidNodeName(absl::string_view name) {
  if (name.empty()) return false;
  auto ok_first = [](char c) { return absl::ascii_isalnum(c) || c == '.' || c == '_'; };
  auto ok_rest = [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '/' || c == '>' || c == '-';
  };
  if (!ok_first(name[0])) return false;
  for (char c : name.substr(1)) {
    if (!ok_rest(c)) return false;
  }
  return true;
}

}  // namespace

void Node::SetAttr(absl::string_view attr_name, AttrValue value) {
  (*def_.mutable_attr())[std::string(attr_name)] = std::move(value);
}

void Node::set_requested_device(absl::string_view device) {
  def_.set_device(std::string(device));
}

std::vector<std::string> Node::ColocationNames() const {
  std::vector<std::string> out;
  auto it = def_.attr().find("_class");
  if (it == def_.attr().end()) return out;
  for (const std::string& s : it->second.list().s()) {
    absl::string_view v = s;
    if (absl::ConsumePrefix(&v, "loc:@")) out.emplace_back(v);
  }
  return out;
}

std::string Node::DebugName() const { return absl::StrCat("'", name(), "' (", op(), ")"); }

// No op takes or makes this many tensors in one list; larger counts in a
// graph file are mistakes (or attacks) and must not allocate.
constexpr int64_t kMaxArgListLength = int64_t{1} << 20;

absl::StatusOr<NodeTypes> ComputeNodeTypes(const OpDef& op_def, const AttrMap& attrs) {
  NodeTypes types;
  auto expand = [&](const std::vector<ArgDef>& args,
                    std::vector<DataType>* out) -> absl::Status {
    for (const ArgDef& arg : args) {
      if (!arg.type_list_attr.empty()) {
        ASSIGN_OR_RETURN(std::vector<DataType> list,
                         GetAttr<std::vector<DataType>>(attrs, arg.type_list_attr));
        for (DataType t : list) out->push_back(arg.is_ref ? MakeRefType(t) : t);
        continue;
      }
      DataType t = arg.type;
      if (!arg.type_attr.empty()) {
        ASSIGN_OR_RETURN(t, GetAttr<DataType>(attrs, arg.type_attr));
      }
      if (arg.is_ref) t = MakeRefType(t);
      int64_t n = 1;
      if (!arg.number_attr.empty()) {
        ASSIGN_OR_RETURN(n, GetAttr<int64_t>(attrs, arg.number_attr));
        if (n < 0 || n > kMaxArgListLength) {
          return absl::InvalidArgumentError(absl::StrCat(
              "attr '", arg.number_attr, "' is ", n, ", outside [0, ", kMaxArgListLength, "]"));
        }
      }
      for (int64_t k = 0; k < n; ++k) out->push_back(t);
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(expand(op_def.inputs, &types.inputs));
  RETURN_IF_ERROR(expand(op_def.outputs, &types.outputs));
  return types;
}

absl::StatusOr<TensorId> ParseTensorName(absl::string_view name) {
  TensorId id;
  if (absl::ConsumePrefix(&name, "^")) {
    id.index = Edge::kControlSlot;
    id.node = std::string(name);
  } else {
    size_t colon = name.rfind(':');
    if (colon == absl::string_view::npos) {
      id.node = std::string(name);
    } else {
      int index;
      if (!absl::SimpleAtoi(name.substr(colon + 1), &index) || index < 0) {
        return absl::InvalidArgumentError(absl::StrCat("malformed tensor name '", name, "'"));
      }
      id.node = std::string(name.substr(0, colon));
      id.index = index;
    }
  }
  if (id.node.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed tensor name '", name, "'"));
  }
  return id;
}

Graph::Graph(const OpRegistry* registry) : registry_(registry) {
  versions_.set_producer(27);
  versions_.set_min_consumer(0);
}

Graph::~Graph() = default;

absl::StatusOr<Graph::CheckedNode> Graph::CheckNode(NodeDef& def) const {
  const std::string& name = def.name();
  const OpDef* op_def = FindOp(def.op());
  if (op_def == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("node '", name, "': unknown op '", def.op(), "'"));
  }
  auto node_error = [&](const absl::Status& s) {
    return AddContext(s, absl::StrCat("node '", name, "' (", def.op(), ")"));
  };
  AttrMap& attrs = *def.mutable_attr();
  for (const auto& [attr_name, value] : attrs) {
    if (absl::StartsWith(attr_name, "_")) continue;  // internal attrs ride along
    if (op_def->FindAttr(attr_name) == nullptr) {
      return node_error(absl::InvalidArgumentError(
          absl::StrCat("attr '", attr_name, "' is not defined by the op")));
    }
  }
  for (const AttrDef& attr : op_def->attrs) {
    auto it = attrs.find(attr.name);
    if (it == attrs.end()) {
      if (!attr.default_value.has_value()) {
        return node_error(
            absl::InvalidArgumentError(absl::StrCat("missing attr '", attr.name, "'")));
      }
      attrs[attr.name] = *attr.default_value;
      continue;
    }
    absl::Status s = ValidateAttrValue(attr, it->second);
    if (!s.ok()) return node_error(s);
  }
  absl::StatusOr<NodeTypes> types = ComputeNodeTypes(*op_def, attrs);
  if (!types.ok()) return node_error(types.status());
  CheckedNode checked;
  checked.op_def = op_def;
  checked.types = *std::move(types);
  return checked;
}

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  const std::string name = def.name();
  if (!IsValidNodeName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid node name '", name, "'"));
  }
  if (by_name_.contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat("duplicate node name '", name, "'"));
  }
  ASSIGN_OR_RETURN(CheckedNode checked, CheckNode(def));
  auto node = std::unique_ptr<Node>(new Node());
  node->id_ = static_cast<int>(nodes_.size());
  def.clear_input();
  node->def_ = std::move(def);
  node->op_def_ = checked.op_def;
  node->input_types_ = std::move(checked.types.inputs);
  node->output_types_ = std::move(checked.types.outputs);
  node->output_shapes_.assign(node->output_types_.size(), TensorShape::Unknown());
  node->input_edges_.assign(node->input_types_.size(), nullptr);
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  by_name_[name] = raw;
  ++num_nodes_;
  return raw;
}

absl::Status Graph::ReplaceOp(Node* node, NodeDef def) {
  if (!node->in_edges_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot replace the op of node ", node->DebugName(), ": it still has inputs"));
  }
  def.set_name(node->name());
  def.set_device(node->requested_device());
  def.clear_input();
  ASSIGN_OR_RETURN(CheckedNode checked, CheckNode(def));
  if (checked.types.outputs != node->output_types_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot make node ", node->DebugName(), " a ", def.op(), ": its outputs would change"));
  }
  node->def_ = std::move(def);
  node->op_def_ = checked.op_def;
  node->input_types_ = std::move(checked.types.inputs);
  node->input_edges_.assign(node->input_types_.size(), nullptr);
  return absl::OkStatus();
}

const OpDef* Graph::FindOp(absl::string_view op) const {
  if (const OpDef* def = registry_->Find(op)) return def;
  const FunctionDef* fdef = FindFunction(op);
  if (fdef == nullptr) return nullptr;
  absl::MutexLock lock(&function_ops_mu_);
  auto it = function_ops_.find(op);
  if (it != function_ops_.end()) return it->second.get();
  absl::StatusOr<OpDef> def = OpDefFromSignature(fdef->signature());
  if (!def.ok()) return nullptr;  // AddFunction refuses such signatures
  auto owned = std::make_unique<OpDef>(*std::move(def));
  const OpDef* raw = owned.get();
  function_ops_.emplace(std::string(op), std::move(owned));
  return raw;
}

const FunctionDef* Graph::FindFunction(absl::string_view name) const {
  for (const FunctionDef& f : library_.function()) {
    if (f.signature().name() == name) return &f;
  }
  return nullptr;
}

std::string Graph::GradientFunctionOf(absl::string_view function) const {
  for (const auto& g : library_.gradient()) {
    if (g.function_name() == function) return g.gradient_func();
  }
  return "";
}

namespace {

absl::Status CheckFunctionDef(const FunctionDef& fdef) {
  const std::string& name = fdef.signature().name();
  RETURN_IF_ERROR(OpDefFromSignature(fdef.signature()).status());
  auto fail = [&](std::string what) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name, "': ", what));
  };
  absl::flat_hash_map<std::string, int> seen;
  for (const auto& a : fdef.signature().input_arg()) seen[a.name()] = 1;
  for (const NodeDef& n : fdef.node_def()) {
    if (!IsValidNodeName(n.name())) return fail(absl::StrCat("invalid node name '", n.name(), "'"));
    if (!seen.emplace(n.name(), 2).second) {
      return fail(absl::StrCat("node name '", n.name(), "' is used twice (or names an argument)"));
    }
  }
  for (const auto& out : fdef.signature().output_arg()) {
    if (!fdef.ret().contains(out.name())) {
      return fail(absl::StrCat("output '", out.name(), "' has no ret"));
    }
  }
  for (const auto& [ret, value] : fdef.ret()) {
    bool declared = false;
    for (const auto& out : fdef.signature().output_arg()) declared |= out.name() == ret;
    if (!declared) return fail(absl::StrCat("ret '", ret, "' is not an output of the signature"));
  }
  for (const auto& [ret, node] : fdef.control_ret()) {
    bool declared = false;
    for (const std::string& c : fdef.signature().control_output()) declared |= c == ret;
    if (!declared) {
      return fail(absl::StrCat("control_ret '", ret, "' is not a control output of the signature"));
    }
    auto it = seen.find(node);
    if (it == seen.end() || it->second != 2) {
      return fail(absl::StrCat("control_ret '", ret, "' names no node ('", node, "')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Graph::AddFunction(const FunctionDef& fdef) {
  const std::string& name = fdef.signature().name();
  if (name.empty()) return absl::InvalidArgumentError("a function has no name");
  if (registry_->Find(name) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("function '", name, "' has the name of a registered op"));
  }
  if (const FunctionDef* existing = FindFunction(name)) {
    if (google::protobuf::util::MessageDifferencer::Equals(*existing, fdef)) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", name, "' is already in the library, with another definition"));
  }
  RETURN_IF_ERROR(CheckFunctionDef(fdef));
  *library_.add_function() = fdef;
  return absl::OkStatus();
}

absl::Status Graph::AddFunctionLibrary(const FunctionDefLibrary& library) {
  for (const FunctionDef& f : library.function()) RETURN_IF_ERROR(AddFunction(f));
  for (const auto& g : library.gradient()) {
    std::string existing = GradientFunctionOf(g.function_name());
    if (existing == g.gradient_func()) continue;
    if (!existing.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("function '", g.function_name(), "' has two gradient functions: '",
                       existing, "' and '", g.gradient_func(), "'"));
    }
    *library_.add_gradient() = g;
  }
  for (const auto& r : library.registered_gradients()) *library_.add_registered_gradients() = r;
  return absl::OkStatus();
}

absl::Status Graph::SetTypeAttr(Node* node, absl::string_view attr, DataType type) {
  const AttrDef* def = node->op_def().FindAttr(attr);
  if (def == nullptr || def->type != "type") {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", node->DebugName(), " has no type attr '", attr, "'"));
  }
  AttrValue value;
  value.set_type(type);
  if (absl::Status s = ValidateAttrValue(*def, value); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node->DebugName(), ": ", s.message()));
  }
  AttrMap attrs = node->attrs();
  attrs[std::string(attr)] = value;
  ASSIGN_OR_RETURN(NodeTypes types, ComputeNodeTypes(node->op_def(), attrs));
  const auto joins = [](DataType st, DataType dt) {
    return IsRefType(dt) ? st == dt : BaseType(st) == dt;
  };
  for (const Edge* e : node->in_edges()) {
    if (e->IsControl() || joins(e->src->output_type(e->src_output), types.inputs[e->dst_input])) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "retyping node ", node->DebugName(), " to ", DataTypeName(type), ": input ", e->dst_input,
        " is still connected to '", e->src->name(), ":", e->src_output, "'"));
  }
  for (const Edge* e : node->out_edges()) {
    if (e->IsControl() || joins(types.outputs[e->src_output], e->dst->input_type(e->dst_input))) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat("retyping node ", node->DebugName(), " to ",
                                                   DataTypeName(type), ": output ", e->src_output,
                                                   " still feeds '", e->dst->name(), "'"));
  }
  node->SetAttr(attr, std::move(value));
  node->input_types_ = std::move(types.inputs);
  node->output_types_ = std::move(types.outputs);
  return absl::OkStatus();
}

absl::Status Graph::AddEdge(Node* src, int src_output, Node* dst, int dst_input) {
  if (src_output < 0 || src_output >= src->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", src->DebugName(), " has no output ",
                                                   src_output, " (it has ", src->num_outputs(),
                                                   ")"));
  }
  if (dst_input < 0 || dst_input >= dst->num_inputs()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", dst->DebugName(), " has no input ",
                                                   dst_input, " (it has ", dst->num_inputs(),
                                                   ")"));
  }
  if (dst->input_edges_[dst_input] != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", dst_input, " of node ", dst->DebugName(), " is already connected"));
  }
  DataType st = src->output_type(src_output);
  DataType dt = dst->input_type(dst_input);
  bool ok = IsRefType(dt) ? st == dt : BaseType(st) == dt;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", dst_input, " of node ", dst->DebugName(), " expects ", DataTypeName(dt),
        " but '", src->name(), ":", src_output, "' is ", DataTypeName(st)));
  }
  auto edge = std::make_unique<Edge>();
  edge->id = static_cast<int>(edges_.size());
  edge->src = src;
  edge->src_output = src_output;
  edge->dst = dst;
  edge->dst_input = dst_input;
  const Edge* e = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  dst->input_edges_[dst_input] = e;
  return absl::OkStatus();
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  for (const Edge* e : dst->in_edges_) {
    if (e->IsControl() && e->src == src) return e;
  }
  auto edge = std::make_unique<Edge>();
  edge->id = static_cast<int>(edges_.size());
  edge->src = src;
  edge->src_output = Edge::kControlSlot;
  edge->dst = dst;
  edge->dst_input = Edge::kControlSlot;
  const Edge* e = edge.get();
  edges_.push_back(std::move(edge));
  src->out_edges_.push_back(e);
  dst->in_edges_.push_back(e);
  return e;
}

void Graph::RemoveEdge(const Edge* edge) {
  auto erase = [](std::vector<const Edge*>& v, const Edge* e) {
    v.erase(std::remove(v.begin(), v.end(), e), v.end());
  };
  erase(edge->src->out_edges_, edge);
  erase(edge->dst->in_edges_, edge);
  if (!edge->IsControl()) edge->dst->input_edges_[edge->dst_input] = nullptr;
  edges_[edge->id].reset();
}

void Graph::RemoveNode(Node* node) {
  std::vector<const Edge*> edges = node->in_edges_;
  edges.insert(edges.end(), node->out_edges_.begin(), node->out_edges_.end());
  for (const Edge* e : edges) RemoveEdge(e);
  by_name_.erase(node->name());
  nodes_[node->id()].reset();
  --num_nodes_;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& n : nodes_) {
    if (n) out.push_back(n.get());
  }
  return out;
}

std::string Graph::NewName(absl::string_view prefix) {
  std::string base(prefix);
  int& counter = name_counters_[base];
  std::string name = counter == 0 ? base : absl::StrCat(base, "_", counter);
  while (by_name_.contains(name)) {
    ++counter;
    name = absl::StrCat(base, "_", counter);
  }
  ++counter;
  return name;
}

void Graph::ToGraphDef(GraphDef* out) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  if (library_.function_size() > 0 || library_.gradient_size() > 0) {
    *out->mutable_library() = library_;
  }
  for (const auto& n : nodes_) {
    if (!n) continue;
    NodeDef* def = out->add_node();
    *def = n->def_;
    if (!n->assigned_device_.empty()) def->set_device(n->assigned_device_);
    for (const Edge* e : n->input_edges_) {
      if (e == nullptr) {
        def->add_input("");  // unconnected: keeps slot positions visible
      } else if (e->src_output == 0) {
        def->add_input(e->src->name());
      } else {
        def->add_input(absl::StrCat(e->src->name(), ":", e->src_output));
      }
    }
    for (const Edge* e : n->in_edges_) {
      if (e->IsControl()) def->add_input(absl::StrCat("^", e->src->name()));
    }
  }
}

}  // namespace sluice
