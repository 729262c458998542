#include "graph/graph.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

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

absl::StatusOr<Node*> Graph::AddNode(NodeDef def) {
  const std::string name = def.name();
  if (!IsValidNodeName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid node name '", name, "'"));
  }
  if (by_name_.contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat("duplicate node name '", name, "'"));
  }
  const OpDef* op_def = registry_->Find(def.op());
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

  auto node = std::unique_ptr<Node>(new Node());
  node->id_ = static_cast<int>(nodes_.size());
  def.clear_input();
  node->def_ = std::move(def);
  node->op_def_ = op_def;
  node->input_types_ = std::move(types->inputs);
  node->output_types_ = std::move(types->outputs);
  node->output_shapes_.assign(node->output_types_.size(), TensorShape::Unknown());
  node->input_edges_.assign(node->input_types_.size(), nullptr);
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  by_name_[name] = raw;
  ++num_nodes_;
  return raw;
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
