#include "training/checkpoint/saved_function.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "runtime/io/tensor_bundle.h"
#include "training/checkpoint/object_graph.h"
#include "training/checkpoint/structured_value.h"

namespace sluice {
namespace {

using ::tensorflow::AttrValue;
using ::tensorflow::FunctionDef;
using ::tensorflow::GraphDef;
using ::tensorflow::NodeDef;
using ::tensorflow::SavedObject;
using ::tensorflow::SavedObjectGraph;
using ::tensorflow::StructuredValue;

// One tensor argument of a trace.
struct TensorArg {
  std::string name;
  DataType dtype;
  TensorShape shape;
};

// What a trace takes: its tensor arguments, or why it cannot be called.
struct TraceInputs {
  std::vector<TensorArg> tensors;
  std::string refused;   // non-empty: why Sluice cannot call it
  std::string describe;  // "(x: float[?,3], training=True)"
};

TraceInputs InputsOf(const ::tensorflow::SavedConcreteFunction& fn) {
  TraceInputs in;
  std::vector<std::string> parts;
  for (const StructureLeaf& leaf : FlattenStructure(fn.canonicalized_input_signature())) {
    // Paths are "0/<i>" for the i-th positional argument, "1/<key>" for a
    // keyword argument; show the part after the first '/'.
    const size_t slash = leaf.path.find('/');
    const std::string where = slash == std::string::npos ? leaf.path : leaf.path.substr(slash + 1);
    const StructuredValue& v = *leaf.value;
    if (v.has_tensor_spec_value()) {
      const auto& spec = v.tensor_spec_value();
      absl::StatusOr<TensorShape> shape = TensorShape::FromProto(spec.shape());
      TensorArg arg{spec.name().empty() ? where : spec.name(), static_cast<DataType>(spec.dtype()),
                    shape.ok() ? *shape : TensorShape::Unknown()};
      parts.push_back(absl::StrCat(arg.name, ": ", DescribeLeaf(v)));
      in.tensors.push_back(std::move(arg));
      continue;
    }
    if (v.has_type_spec_value() && in.refused.empty()) {
      in.refused = absl::StrCat("argument ", where, " is a ", DescribeLeaf(v),
                                ", and Sluice passes only dense tensors");
    }
    parts.push_back(absl::StrCat(where, "=", DescribeLeaf(v)));
  }
  in.describe = absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  return in;
}

// The given inputs fit the trace's tensor arguments exactly.
bool Fits(const TraceInputs& trace, const std::map<std::string, Tensor>& inputs) {
  if (!trace.refused.empty() || trace.tensors.size() != inputs.size()) return false;
  for (const TensorArg& arg : trace.tensors) {
    auto it = inputs.find(arg.name);
    if (it == inputs.end() || it->second.dtype() != arg.dtype) return false;
    if (!arg.shape.IsCompatibleWith(it->second.shape())) return false;
  }
  return true;
}

std::string DescribeInputs(const std::map<std::string, Tensor>& inputs) {
  std::vector<std::string> parts;
  for (const auto& [name, t] : inputs) {
    parts.push_back(absl::StrCat(name, ": ", DataTypeName(t.dtype()),
                                 t.shape().DebugString()));
  }
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

AttrValue TypeAttr(DataType t) {
  AttrValue a;
  a.set_type(static_cast<::tensorflow::DataType>(t));
  return a;
}

std::string NodeOf(const std::string& tensor) { return tensor.substr(0, tensor.find(':')); }

std::string KindOf(const SavedObject& o) {
  switch (o.kind_case()) {
    case SavedObject::kUserObject:
      return "an object";
    case SavedObject::kAsset:
      return "an asset";
    case SavedObject::kFunction:
      return "a function";
    case SavedObject::kVariable:
      return "a variable";
    case SavedObject::kBareConcreteFunction:
      return "a concrete function";
    case SavedObject::kConstant:
      return "a constant";
    case SavedObject::kResource:
      return "a resource";
    default:
      return "an object of unknown kind";
  }
}

}  // namespace

SavedFunctions::SavedFunctions(SavedModelBundle* bundle) : bundle_(bundle) {
  absl::MutexLock lock(&mu_);
  const GraphDef& graph = bundle_->meta_graph.graph_def();
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph.node()) {
    node_names_.insert(n.name());
    by_name[n.name()] = &n;
  }
  // The handles the signatures' calls pass for their captured variables.
  const SavedObjectGraph& objects = bundle_->meta_graph.object_graph_def();
  for (const NodeDef& call : graph.node()) {
    absl::StatusOr<std::vector<BoundInput>> bound = BoundInputsOf(objects, call);
    if (!bound.ok()) continue;  // LoadSavedModel refused such a graph already
    for (const BoundInput& b : *bound) {
      if (!objects.nodes(b.object).has_variable()) continue;
      auto handle = by_name.find(NodeOf(b.tensor));
      if (handle == by_name.end() || handle->second->op() != "VarHandleOp") continue;
      handles_.emplace(b.object, b.tensor);
    }
  }
}

std::vector<std::string> SavedFunctions::Paths() const {
  const SavedObjectGraph& objects = bundle_->meta_graph.object_graph_def();
  std::vector<std::string> paths;
  if (objects.nodes_size() == 0) return paths;
  std::vector<bool> seen(objects.nodes_size(), false);
  std::deque<std::pair<int, std::string>> queue = {{0, ""}};
  seen[0] = true;
  while (!queue.empty()) {
    auto [id, path] = queue.front();
    queue.pop_front();
    const SavedObject& o = objects.nodes(id);
    if (id != 0 && (o.has_function() || o.has_bare_concrete_function())) {
      paths.push_back(path);
      continue;  // its children are its traces
    }
    for (const auto& child : o.children()) {
      const int c = child.node_id();
      if (c < 0 || c >= objects.nodes_size() || seen[c]) continue;
      if (id == 0 && child.local_name() == "signatures") continue;
      if (child.local_name().rfind('_', 0) == 0) continue;  // private, as in Python
      seen[c] = true;
      queue.emplace_back(c, path.empty() ? child.local_name()
                                         : absl::StrCat(path, ".", child.local_name()));
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string SavedFunctions::FreshScope() {
  for (;;) {
    std::string scope = absl::StrCat("_saved_function_call_", scopes_++);
    auto it = node_names_.lower_bound(scope);
    if (it == node_names_.end() || it->rfind(scope, 0) != 0) return scope;
  }
}

absl::StatusOr<std::string> SavedFunctions::CapturedInput(const std::string& path, int object,
                                                          const std::string& scope,
                                                          std::vector<std::string>* new_handles,
                                                          GraphDef* fragment) {
  const SavedObjectGraph& objects = bundle_->meta_graph.object_graph_def();
  if (object < 0 || object >= objects.nodes_size()) {
    return absl::InvalidArgumentError(absl::StrCat("function '", path, "' captures object ",
                                                   object, ", outside the ",
                                                   objects.nodes_size(), " saved objects"));
  }
  const SavedObject& o = objects.nodes(object);
  if (o.has_constant()) return o.constant().operation();
  if (!o.has_variable()) {
    return absl::UnimplementedError(
        absl::StrCat("function '", path, "' captures ", KindOf(o), " (saved object ", object,
                     "); Sluice calls functions that capture variables and constants"));
  }
  auto known = handles_.find(object);
  if (known != handles_.end()) return known->second;
  const std::string name = absl::StrCat(scope, "/variable_", object);
  NodeDef* handle = fragment->add_node();
  handle->set_name(name);
  handle->set_op("VarHandleOp");
  (*handle->mutable_attr())["dtype"] = TypeAttr(static_cast<DataType>(o.variable().dtype()));
  *(*handle->mutable_attr())["shape"].mutable_shape() = o.variable().shape();
  (*handle->mutable_attr())["shared_name"].set_s(name);
  (*handle->mutable_attr())["container"].set_s("");
  new_handles->push_back(name);
  return name;
}

absl::StatusOr<const SavedFunctions::AddedCall*> SavedFunctions::AddCall(
    const std::string& path, const std::string& function) {
  auto done = calls_.find(function);
  if (done != calls_.end()) return &done->second;
  const SavedObjectGraph& objects = bundle_->meta_graph.object_graph_def();
  const ::tensorflow::SavedConcreteFunction& fn = objects.concrete_functions().at(function);
  const FunctionDef* fdef = nullptr;
  for (const FunctionDef& f : bundle_->meta_graph.graph_def().library().function()) {
    if (f.signature().name() == function) fdef = &f;
  }
  if (fdef == nullptr) {
    return absl::NotFoundError(absl::StrCat("function '", path, "': its trace '", function,
                                            "' is not in the MetaGraph's function library"));
  }
  const TraceInputs inputs = InputsOf(fn);
  const size_t num_inputs = inputs.tensors.size() + fn.bound_inputs_size();
  if (static_cast<size_t>(fdef->signature().input_arg_size()) != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", path, "': trace '", function, "' takes ",
        fdef->signature().input_arg_size(), " inputs, but its signature has ",
        inputs.tensors.size(), " tensors and ", fn.bound_inputs_size(), " captures"));
  }

  const std::string scope = FreshScope();
  GraphDef fragment;
  AddedCall added;
  NodeDef call;
  call.set_name(absl::StrCat(scope, "/call"));
  call.set_op("StatefulPartitionedCall");
  AttrValue tin, tout;
  for (const TensorArg& arg : inputs.tensors) {
    NodeDef* p = fragment.add_node();
    p->set_name(absl::StrCat(scope, "/arg_", added.feeds.size()));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"] = TypeAttr(arg.dtype);
    arg.shape.ToProto((*p->mutable_attr())["shape"].mutable_shape());
    added.feeds.emplace(arg.name, absl::StrCat(p->name(), ":0"));
    call.add_input(p->name());
  }
  std::vector<std::string> new_handles;
  for (int object : fn.bound_inputs()) {
    ASSIGN_OR_RETURN(std::string input, CapturedInput(path, object, scope, &new_handles, &fragment));
    call.add_input(std::move(input));
  }
  for (const auto& a : fdef->signature().input_arg()) {
    tin.mutable_list()->add_type(a.type());
  }
  for (const auto& a : fdef->signature().output_arg()) {
    if (a.type() == ::tensorflow::DT_INVALID) {
      return absl::InvalidArgumentError(absl::StrCat("function '", path, "': trace '", function,
                                                     "' output '", a.name(),
                                                     "' has no fixed type"));
    }
    tout.mutable_list()->add_type(a.type());
  }
  (*call.mutable_attr())["Tin"] = tin;
  (*call.mutable_attr())["Tout"] = tout;
  (*call.mutable_attr())["f"].mutable_func()->set_name(function);
  *fragment.add_node() = call;

  // Results: the output signature's tensors, in the function's order.
  std::vector<std::string> paths;
  for (const StructureLeaf& leaf : FlattenStructure(fn.output_signature())) {
    if (leaf.value->has_type_spec_value()) {
      return absl::UnimplementedError(absl::StrCat("function '", path, "' returns a ",
                                                   DescribeLeaf(*leaf.value), " at '", leaf.path,
                                                   "'; Sluice returns only dense tensors"));
    }
    if (leaf.value->has_tensor_spec_value()) paths.push_back(leaf.path.empty() ? "output" : leaf.path);
  }
  const int num_outputs = fdef->signature().output_arg_size();
  if (static_cast<int>(paths.size()) != num_outputs) {  // no usable structure: the ret names
    paths.clear();
    for (const auto& a : fdef->signature().output_arg()) paths.push_back(a.name());
  }
  for (int i = 0; i < num_outputs; ++i) added.fetches.push_back(absl::StrCat(call.name(), ":", i));
  added.output_paths = std::move(paths);
  added.target = call.name();

  // The handles added here are restored from the SavedModel's checkpoint.
  const std::string variables = absl::StrCat(bundle_->dir, "/variables/variables");
  CapturedVariableRestore restore;
  if (!new_handles.empty() && std::filesystem::exists(variables + ".index")) {
    ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(variables));
    ASSIGN_OR_RETURN(::tensorflow::TrackableObjectGraph saved, ReadCheckpointObjectGraph(*reader));
    ASSIGN_OR_RETURN(restore, AddCapturedVariableRestore(objects, saved, &fragment,
                                                         absl::StrCat(scope, "/restore")));
  }
  RETURN_IF_ERROR(bundle_->session->Extend(fragment));
  for (const NodeDef& n : fragment.node()) node_names_.insert(n.name());
  if (restore.variables > 0) {
    RETURN_IF_ERROR(bundle_->session
                        ->Run({{restore.prefix_tensor, Tensor::Scalar<std::string>(variables)}},
                              {}, {restore.target})
                        .status());
  }
  for (size_t i = 0; i < fn.bound_inputs_size(); ++i) {
    const int object = fn.bound_inputs(static_cast<int>(i));
    const std::string& input = call.input(static_cast<int>(inputs.tensors.size() + i));
    if (objects.nodes(object).has_variable()) handles_.emplace(object, input);
  }
  return &calls_.emplace(function, std::move(added)).first->second;
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> SavedFunctions::Call(
    const std::string& path, const std::map<std::string, Tensor>& inputs) {
  const SavedObjectGraph& objects = bundle_->meta_graph.object_graph_def();
  if (objects.nodes_size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the SavedModel in '", bundle_->dir,
                     "' has no object graph (a TF1 SavedModel): only its signatures run"));
  }
  int id = 0;
  std::string walked;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    int next = -1;
    std::vector<std::string> names;
    for (const auto& child : objects.nodes(id).children()) {
      names.push_back(child.local_name());
      if (child.local_name() == part) next = child.node_id();
    }
    if (next < 0 || next >= objects.nodes_size()) {
      std::sort(names.begin(), names.end());
      return absl::NotFoundError(absl::StrCat(
          "the SavedModel in '", bundle_->dir, "' has no '", path, "': ",
          walked.empty() ? "the root" : absl::StrCat("'", walked, "'"), " has no child '", part,
          "'; its children: ", names.empty() ? "none" : absl::StrJoin(names, ", ")));
    }
    id = next;
    walked = walked.empty() ? std::string(part) : absl::StrCat(walked, ".", part);
  }
  const SavedObject& object = objects.nodes(id);
  std::vector<std::string> traces;
  if (object.has_function()) {
    traces.assign(object.function().concrete_functions().begin(),
                  object.function().concrete_functions().end());
  } else if (object.has_bare_concrete_function()) {
    traces.push_back(object.bare_concrete_function().concrete_function_name());
  } else {
    return absl::NotFoundError(
        absl::StrCat("'", path, "' in the SavedModel in '", bundle_->dir, "' is ",
                     KindOf(object), ", not a function"));
  }

  std::vector<std::string> fitting, described;
  for (const std::string& t : traces) {
    auto fn = objects.concrete_functions().find(t);
    if (fn == objects.concrete_functions().end()) continue;
    const TraceInputs in = InputsOf(fn->second);
    if (Fits(in, inputs)) fitting.push_back(t);
    described.push_back(in.refused.empty() ? in.describe
                                           : absl::StrCat(in.describe, " [", in.refused, "]"));
  }
  if (fitting.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function '", path, "': ",
        fitting.empty() ? "no trace takes " : "more than one trace takes ",
        DescribeInputs(inputs), "; its traces: ",
        described.empty() ? "none" : absl::StrJoin(described, " | ")));
  }

  const AddedCall* call;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<const AddedCall*> added = AddCall(path, fitting[0]);
    if (!added.ok()) return AddContext(added.status(), absl::StrCat("adding a call of '", path, "'"));
    call = *added;  // calls_ never erases: the pointer stays valid
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, tensor] : inputs) feeds.emplace_back(call->feeds.at(name), tensor);
  std::vector<std::string> targets;
  if (call->fetches.empty()) targets.push_back(call->target);
  absl::StatusOr<std::vector<Tensor>> got = bundle_->session->Run(feeds, call->fetches, targets);
  if (!got.ok()) return AddContext(got.status(), absl::StrCat("calling '", path, "'"));
  std::vector<std::pair<std::string, Tensor>> results;
  for (size_t i = 0; i < call->fetches.size(); ++i) {
    results.emplace_back(call->output_paths[i], std::move((*got)[i]));
  }
  return results;
}

}  // namespace sluice
