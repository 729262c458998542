#include "graph/function_builder.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/function_instantiate.h"

namespace sluice {
namespace {

bool InGraph(const Graph& g, const Node* n) {
  return n != nullptr && n->id() < g.num_node_ids() && g.node(n->id()) == n;
}

}  // namespace

absl::StatusOr<FunctionDef> GraphToFunctionDef(const Graph& body, absl::string_view name,
                                               absl::Span<const Output> args,
                                               absl::Span<const Output> rets,
                                               const DefineFunctionOptions& options) {
  FunctionDef fdef;
  ::tensorflow::OpDef* sig = fdef.mutable_signature();
  sig->set_name(std::string(name));
  // Tensor names inside the function: an argument's name, or
  // "node:out_arg:i" for output i of a node's output arg.
  absl::flat_hash_map<const Node*, std::string> arg_name;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string n = i < options.arg_names.size() ? options.arg_names[i] : absl::StrCat("arg", i);
    arg_name[args[i].node] = n;
    auto* a = sig->add_input_arg();
    a->set_name(n);
    a->set_type(BaseType(args[i].dtype()));
  }
  auto tensor_name = [&](const Node* src, int index) -> absl::StatusOr<std::string> {
    if (!InGraph(body, src)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "uses '", src->name(), ":", index, "' of another graph; pass it as an argument"));
    }
    auto it = arg_name.find(src);
    if (it != arg_name.end()) return it->second;
    int start = 0;
    for (const ArgDef& out : src->op_def().outputs) {
      ASSIGN_OR_RETURN(std::vector<DataType> types, ArgTypes(out, src->attrs()));
      if (index < start + static_cast<int>(types.size())) {
        return absl::StrCat(src->name(), ":", out.name, ":", index - start);
      }
      start += static_cast<int>(types.size());
    }
    return absl::InternalError(absl::StrCat("node ", src->DebugName(), " has no output ", index));
  };
  bool stateful = false;
  for (const Node* n : body.nodes()) {
    if (arg_name.contains(n)) continue;
    stateful |= n->IsStateful();
    NodeDef* def = fdef.add_node_def();
    *def = n->def();
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Edge* e = n->input_edge(i);
      if (e == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", n->DebugName(), ": input ", i, " is not connected"));
      }
      absl::StatusOr<std::string> input = tensor_name(e->src, e->src_output);
      if (!input.ok()) return AddContext(input.status(), absl::StrCat("node ", n->DebugName()));
      def->add_input(*input);
    }
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl()) continue;
      if (!InGraph(body, e->src)) {
        return absl::InvalidArgumentError(absl::StrCat("node ", n->DebugName(),
                                                       " waits for '", e->src->name(),
                                                       "' of another graph"));
      }
      auto it = arg_name.find(e->src);
      def->add_input(absl::StrCat("^", it != arg_name.end() ? it->second : e->src->name()));
    }
  }
  sig->set_is_stateful(stateful);
  for (size_t i = 0; i < rets.size(); ++i) {
    if (!rets[i].valid()) {
      return absl::InvalidArgumentError(absl::StrCat("result ", i, " is invalid"));
    }
    std::string n = i < options.ret_names.size() ? options.ret_names[i] : absl::StrCat("output", i);
    auto* r = sig->add_output_arg();
    r->set_name(n);
    r->set_type(BaseType(rets[i].dtype()));
    absl::StatusOr<std::string> value = tensor_name(rets[i].node, rets[i].index);
    if (!value.ok()) return AddContext(value.status(), absl::StrCat("result ", i));
    (*fdef.mutable_ret())[n] = *value;
  }
  return fdef;
}

absl::StatusOr<NameAttrList> DefineFunction(const Scope& scope, absl::string_view name,
                                            absl::Span<const DataType> arg_types,
                                            const FunctionBodyFn& body,
                                            const DefineFunctionOptions& options) {
  const std::string context = absl::StrCat("defining function '", name, "'");
  RETURN_IF_ERROR(scope.status());
  Graph* outer = scope.graph();
  Graph inner(outer->registry());
  *inner.mutable_library() = outer->library();  // the body may call them
  Scope s = Scope::NewRootScope(&inner);
  std::vector<Output> args;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    std::string n = i < options.arg_names.size() ? options.arg_names[i] : absl::StrCat("arg", i);
    args.push_back(s.WithOpName(n)
                       .Op(kFunctionArgOp)
                       .Attr("T", arg_types[i])
                       .Attr("index", static_cast<int64_t>(i))
                       .Finalize1());
  }
  RETURN_IF_ERROR(AddContext(s.status(), context));
  absl::StatusOr<std::vector<Output>> rets = body(s, args);  // copies args
  if (!rets.ok()) return AddContext(rets.status(), context);
  RETURN_IF_ERROR(AddContext(s.status(), context));
  absl::StatusOr<FunctionDef> fdef = GraphToFunctionDef(inner, name, args, *rets, options);
  if (!fdef.ok()) return AddContext(fdef.status(), context);
  // Functions the body defined in its own library (nested DefineFunction).
  for (const FunctionDef& f : inner.library().function()) {
    if (outer->FindFunction(f.signature().name()) == nullptr) {
      RETURN_IF_ERROR(AddContext(outer->AddFunction(f), context));
    }
  }
  RETURN_IF_ERROR(AddContext(outer->AddFunction(*fdef), context));
  NameAttrList f;
  f.set_name(std::string(name));
  return f;
}

}  // namespace sluice
