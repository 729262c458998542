// Function instantiation (see function_instantiate.h).
#include "graph/function_instantiate.h"

#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "graph/graph_def_io.h"

namespace sluice {

absl::StatusOr<std::vector<DataType>> ArgTypes(const ArgDef& arg, const AttrMap& attrs) {
  std::vector<DataType> types;
  if (!arg.type_list_attr.empty()) {
    ASSIGN_OR_RETURN(types, GetAttr<std::vector<DataType>>(attrs, arg.type_list_attr));
    return types;
  }
  DataType t = arg.type;
  if (!arg.type_attr.empty()) {
    ASSIGN_OR_RETURN(t, GetAttr<DataType>(attrs, arg.type_attr));
  }
  int64_t n = 1;
  if (!arg.number_attr.empty()) {
    ASSIGN_OR_RETURN(n, GetAttr<int64_t>(attrs, arg.number_attr));
    if (n < 0 || n > (int64_t{1} << 20)) {
      return absl::InvalidArgumentError(
          absl::StrCat("attr '", arg.number_attr, "' is ", n, ", out of range"));
    }
  }
  types.assign(n, t);
  return types;
}

namespace {

std::string TensorName(const std::string& node, int index) {
  return index == 0 ? node : absl::StrCat(node, ":", index);
}

std::string TypesString(const std::vector<DataType>& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", DataTypeName(types[i]));
  }
  return s + "]";
}

// Binds every placeholder in `value` (also inside func attrs) to the call's
// attr of that name. InvalidArgument naming the placeholder when unbound.
absl::Status BindPlaceholders(const AttrMap& call_attrs, AttrValue* value) {
  switch (value->value_case()) {
    case AttrValue::kPlaceholder: {
      auto it = call_attrs.find(value->placeholder());
      if (it == call_attrs.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "placeholder $", value->placeholder(), " is not an attr of the call"));
      }
      *value = it->second;
      return absl::OkStatus();
    }
    case AttrValue::kFunc:
      for (auto& [name, v] : *value->mutable_func()->mutable_attr()) {
        RETURN_IF_ERROR(BindPlaceholders(call_attrs, &v));
      }
      return absl::OkStatus();
    case AttrValue::kList:
      for (auto& f : *value->mutable_list()->mutable_func()) {
        for (auto& [name, v] : *f.mutable_attr()) RETURN_IF_ERROR(BindPlaceholders(call_attrs, &v));
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

class Instantiator {
 public:
  Instantiator(const Graph& library, const FunctionDef& fdef, const OpDef& signature)
      : library_(library), fdef_(fdef), sig_(signature) {}

  absl::StatusOr<FunctionInstantiation> Run(const NameAttrList& func);

 private:
  // What a name used as an input inside the function stands for: the
  // tensors from output `index` on of node `node` (an argument's tensors
  // are outputs 0 of its _Arg nodes, `arg_nodes`). By name, since a node
  // may name one that comes later in the function.
  struct Item {
    bool is_arg = false;
    std::vector<std::string> arg_nodes;
    std::string node;
    int index = 0;
    std::vector<DataType> types;
  };
  absl::Status AddItem(std::string name, Item item) {
    if (!items_.emplace(name, std::move(item)).second) {
      return absl::InvalidArgumentError(absl::StrCat("the name '", name, "' is used twice"));
    }
    return absl::OkStatus();
  }
  // Tensor k of an item as "node:index".
  std::string ItemTensor(const Item& item, int k) const {
    return item.is_arg ? item.arg_nodes[k] : TensorName(item.node, item.index + k);
  }
  NodeDef* NewNode(const std::string& name, const std::string& op) {
    out_.nodes.emplace_back();
    NodeDef* n = &out_.nodes.back();
    n->set_name(name);
    n->set_op(op);
    return n;
  }
  absl::Status AddArgs();
  absl::Status IndexNodeOutputs(const NodeDef& node, const AttrMap& attrs);
  absl::Status AddNode(const NodeDef& fnode, AttrMap attrs);
  absl::Status AddRets();

  const Graph& library_;
  const FunctionDef& fdef_;
  const OpDef& sig_;
  AttrMap call_attrs_;
  std::map<std::string, Item> items_;
  absl::flat_hash_set<std::string> names_;  // function nodes and arguments
  // For control inputs: a node's or argument's name -> the node to wait for.
  std::map<std::string, std::string> control_node_;
  FunctionInstantiation out_;
};

absl::Status Instantiator::AddArgs() {
  for (size_t k = 0; k < sig_.inputs.size(); ++k) {
    const ArgDef& arg = sig_.inputs[k];
    absl::StatusOr<std::vector<DataType>> types = ArgTypes(arg, call_attrs_);
    if (!types.ok()) return AddContext(types.status(), absl::StrCat("argument '", arg.name, "'"));
    Item whole{true, {}, "", 0, *types};
    for (size_t i = 0; i < types->size(); ++i) {
      std::string name = types->size() > 1 ? absl::StrCat(arg.name, "_", i) : arg.name;
      whole.arg_nodes.push_back(name);
      RETURN_IF_ERROR(
          AddItem(absl::StrCat(arg.name, ":", i), {true, {name}, "", 0, {(*types)[i]}}));
      if (i == 0) control_node_[arg.name] = name;
      NodeDef* n = NewNode(name, kFunctionArgOp);
      DataType t = arg.is_ref ? MakeRefType((*types)[i]) : (*types)[i];
      (*n->mutable_attr())["T"] = MakeAttr(t);
      (*n->mutable_attr())["index"] = MakeAttr(static_cast<int64_t>(out_.arg_types.size()));
      out_.arg_types.push_back((*types)[i]);
      // The shape TensorFlow recorded for a single-tensor argument
      // (arg_attr's "_output_shapes") helps shape inference in the body.
      auto attrs = fdef_.arg_attr().find(static_cast<uint32_t>(k));
      if (types->size() == 1 && attrs != fdef_.arg_attr().end()) {
        auto shapes = attrs->second.attr().find("_output_shapes");
        if (shapes != attrs->second.attr().end() && shapes->second.list().shape_size() == 1) {
          AttrValue shape;
          *shape.mutable_shape() = shapes->second.list().shape(0);
          (*n->mutable_attr())["shape"] = std::move(shape);
        }
      }
    }
    RETURN_IF_ERROR(AddItem(arg.name, std::move(whole)));
  }
  return absl::OkStatus();
}

absl::Status Instantiator::IndexNodeOutputs(const NodeDef& node, const AttrMap& attrs) {
  const OpDef* op = library_.FindOp(node.op());
  control_node_[node.name()] = node.name();
  int start = 0;
  for (const ArgDef& out : op->outputs) {
    absl::StatusOr<std::vector<DataType>> types = ArgTypes(out, attrs);
    if (!types.ok()) return AddContext(types.status(), absl::StrCat("output '", out.name, "'"));
    const std::string base = absl::StrCat(node.name(), ":", out.name);
    RETURN_IF_ERROR(AddItem(base, {false, {}, node.name(), start, *types}));
    for (size_t j = 0; j < types->size(); ++j) {
      RETURN_IF_ERROR(AddItem(absl::StrCat(base, ":", j),
                              {false, {}, node.name(), start + static_cast<int>(j), {(*types)[j]}}));
    }
    start += static_cast<int>(types->size());
  }
  return absl::OkStatus();
}

absl::Status Instantiator::AddNode(const NodeDef& fnode, AttrMap attrs) {
  const OpDef* op = library_.FindOp(fnode.op());
  NodeDef* g = NewNode(fnode.name(), fnode.op());
  g->set_device(fnode.device());
  int next = 0;  // the next of fnode's inputs
  for (const ArgDef& arg : op->inputs) {
    ASSIGN_OR_RETURN(std::vector<DataType> want, ArgTypes(arg, attrs));
    size_t j = 0;
    while (j < want.size()) {
      if (next >= fnode.input_size() || absl::StartsWith(fnode.input(next), "^")) {
        return absl::InvalidArgumentError(absl::StrCat("input '", arg.name, "' wants ",
                                                       want.size(), " tensor(s), got ", j));
      }
      const std::string& input = fnode.input(next++);
      auto it = items_.find(input);
      if (it == items_.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input '", input, "' names nothing in the function (inputs are written 'arg', "
            "'arg:i', 'node:output_arg' or 'node:output_arg:i')"));
      }
      const Item& item = it->second;
      if (item.types.size() > want.size() - j) {
        return absl::InvalidArgumentError(absl::StrCat("input '", input, "' has ",
                                                       item.types.size(), " tensors, more than ",
                                                       "argument '", arg.name, "' takes"));
      }
      for (size_t k = 0; k < item.types.size(); ++k, ++j) {
        if (BaseType(item.types[k]) != BaseType(want[j])) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input '", arg.name, "'[", j, "] wants ", DataTypeName(want[j]), ", but '", input,
              "'[", k, "] is ", DataTypeName(item.types[k])));
        }
        g->add_input(ItemTensor(item, static_cast<int>(k)));
      }
    }
  }
  for (; next < fnode.input_size(); ++next) {
    absl::string_view input = fnode.input(next);
    if (!absl::ConsumePrefix(&input, "^")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input, "' is one more than op ", fnode.op(), " takes (or a data input ",
          "after a control input)"));
    }
    // "^node" or "^node:out" (TensorFlow accepts both).
    std::string name(input.substr(0, input.find(':')));
    auto it = control_node_.find(name);
    if (it == control_node_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("control input '^", input, "' names nothing in the function"));
    }
    g->add_input(absl::StrCat("^", it->second));
  }
  *g->mutable_attr() = std::move(attrs);
  return absl::OkStatus();
}

absl::Status Instantiator::AddRets() {
  int index = 0;
  for (const ArgDef& ret : sig_.outputs) {
    auto context = [&](const absl::Status& s) {
      return AddContext(s, absl::StrCat("result '", ret.name, "'"));
    };
    absl::StatusOr<std::vector<DataType>> types = ArgTypes(ret, call_attrs_);
    if (!types.ok()) return context(types.status());
    const std::string& value = fdef_.ret().at(ret.name);
    auto it = items_.find(value);
    if (it == items_.end()) {
      return context(absl::InvalidArgumentError(
          absl::StrCat("'", value, "' names nothing in the function")));
    }
    const Item& item = it->second;
    if (item.types != *types) {
      return context(absl::InvalidArgumentError(
          absl::StrCat("'", value, "' is ", TypesString(item.types), ", the signature says ",
                       TypesString(*types))));
    }
    for (size_t i = 0; i < types->size(); ++i) {
      std::string name = absl::StrCat(ret.name, "_RetVal");
      if (types->size() > 1) absl::StrAppend(&name, "_", i);
      while (names_.contains(name)) name += "_";
      names_.insert(name);
      NodeDef* n = NewNode(name, kFunctionRetvalOp);
      n->add_input(ItemTensor(item, static_cast<int>(i)));
      DataType t = ret.is_ref ? MakeRefType((*types)[i]) : (*types)[i];
      (*n->mutable_attr())["T"] = MakeAttr(t);
      (*n->mutable_attr())["index"] = MakeAttr(static_cast<int64_t>(index++));
      out_.ret_types.push_back((*types)[i]);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FunctionInstantiation> Instantiator::Run(const NameAttrList& func) {
  out_.function = sig_.name;
  // The call's attrs: every attr of the signature, set or defaulted.
  call_attrs_ = func.attr();
  for (const AttrDef& a : sig_.attrs) {
    auto it = call_attrs_.find(a.name);
    if (it == call_attrs_.end()) {
      if (!a.default_value.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat("attr '", a.name, "' is not set"));
      }
      call_attrs_[a.name] = *a.default_value;
      continue;
    }
    RETURN_IF_ERROR(ValidateAttrValue(a, it->second));
  }
  for (const ArgDef& a : sig_.inputs) names_.insert(a.name);
  for (const NodeDef& n : fdef_.node_def()) names_.insert(n.name());
  RETURN_IF_ERROR(AddArgs());

  // Every node's attrs bound and completed with its op's defaults.
  std::vector<AttrMap> node_attrs(fdef_.node_def_size());
  for (int i = 0; i < fdef_.node_def_size(); ++i) {
    const NodeDef& n = fdef_.node_def(i);
    auto context = [&](const absl::Status& s) {
      return AddContext(s, absl::StrCat("node '", n.name(), "' (", n.op(), ")"));
    };
    const OpDef* op = library_.FindOp(n.op());
    if (op == nullptr) {
      return context(absl::NotFoundError(absl::StrCat("unknown op '", n.op(), "'")));
    }
    node_attrs[i] = n.attr();
    for (auto& [name, value] : node_attrs[i]) {
      absl::Status s = BindPlaceholders(call_attrs_, &value);
      if (!s.ok()) return context(AddContext(s, absl::StrCat("attr '", name, "'")));
    }
    for (const AttrDef& a : op->attrs) {
      if (!node_attrs[i].contains(a.name) && a.default_value.has_value()) {
        node_attrs[i][a.name] = *a.default_value;
      }
    }
    absl::Status s = IndexNodeOutputs(n, node_attrs[i]);
    if (!s.ok()) return context(s);
  }
  for (int i = 0; i < fdef_.node_def_size(); ++i) {
    const NodeDef& n = fdef_.node_def(i);
    absl::Status s = AddNode(n, std::move(node_attrs[i]));
    if (!s.ok()) return AddContext(s, absl::StrCat("node '", n.name(), "' (", n.op(), ")"));
  }
  RETURN_IF_ERROR(AddRets());
  for (const std::string& c : sig_.control_outputs) {
    auto it = fdef_.control_ret().find(c);
    if (it == fdef_.control_ret().end()) {
      return absl::InvalidArgumentError(absl::StrCat("control output '", c, "' has no control_ret"));
    }
    out_.control_ret_nodes.push_back(it->second);
  }
  return std::move(out_);
}

}  // namespace

absl::StatusOr<FunctionInstantiation> InstantiateFunction(const Graph& library,
                                                          const NameAttrList& func) {
  const FunctionDef* fdef = library.FindFunction(func.name());
  if (fdef == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("function '", func.name(), "' is not in the graph's library"));
  }
  const OpDef* sig = library.FindOp(func.name());
  if (sig == nullptr || !sig->is_function) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", func.name(), "': bad signature, or the name of a registered op"));
  }
  Instantiator inst(library, *fdef, *sig);
  absl::StatusOr<FunctionInstantiation> result = inst.Run(func);
  if (!result.ok()) return AddContext(result.status(), absl::StrCat("function '", func.name(), "'"));
  return result;
}

absl::StatusOr<FunctionBody> InstantiateFunctionBody(const Graph& library,
                                                     const NameAttrList& func) {
  ASSIGN_OR_RETURN(FunctionInstantiation inst, InstantiateFunction(library, func));
  GraphDef def;
  *def.mutable_versions() = library.versions();
  *def.mutable_library() = library.library();
  for (NodeDef& n : inst.nodes) *def.add_node() = std::move(n);
  FunctionBody body;
  body.graph = std::make_unique<Graph>(library.registry());
  absl::Status s = ImportGraphDef(def, body.graph.get(), {.allow_internal_ops = true});
  if (!s.ok()) return AddContext(s, absl::StrCat("function '", func.name(), "'"));
  // A control output must run even when no result depends on it: the
  // executor runs every node of the body, so it does.
  body.arg_types = std::move(inst.arg_types);
  body.ret_types = std::move(inst.ret_types);
  return body;
}

}  // namespace sluice
