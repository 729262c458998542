// Function inlining (see function_inline.h).
#include "graph/function_inline.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/function_instantiate.h"
#include "graph/shape_inference.h"

namespace sluice {

bool IsFunctionCall(const Node& node) {
  return node.op_def().is_function || !node.op_def().call_function_attr.empty();
}

absl::StatusOr<NameAttrList> CalledFunction(const Node& call) {
  const OpDef& op = call.op_def();
  if (op.is_function) {
    NameAttrList f;
    f.set_name(call.op());
    for (const auto& [name, value] : call.attrs()) {
      if (!absl::StartsWith(name, "_")) (*f.mutable_attr())[name] = value;
    }
    return f;
  }
  if (!op.call_function_attr.empty()) {
    absl::StatusOr<NameAttrList> f = call.GetAttr<NameAttrList>(op.call_function_attr);
    if (!f.ok()) return AddContext(f.status(), absl::StrCat("node ", call.DebugName()));
    return f;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("node ", call.DebugName(), " does not call a function"));
}

namespace {

absl::Status CheckTypes(const Node& call, const FunctionInstantiation& inst) {
  auto mismatch = [&](absl::string_view what, size_t i, DataType call_t, DataType fn_t) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", i, " of the call is ",
                                                   DataTypeName(call_t), ", the function's is ",
                                                   DataTypeName(fn_t)));
  };
  if (inst.arg_types.size() != static_cast<size_t>(call.num_inputs())) {
    return absl::InvalidArgumentError(absl::StrCat("the call has ", call.num_inputs(),
                                                   " inputs, the function takes ",
                                                   inst.arg_types.size()));
  }
  if (inst.ret_types.size() != static_cast<size_t>(call.num_outputs())) {
    return absl::InvalidArgumentError(absl::StrCat("the call has ", call.num_outputs(),
                                                   " outputs, the function returns ",
                                                   inst.ret_types.size()));
  }
  for (size_t i = 0; i < inst.arg_types.size(); ++i) {
    if (BaseType(call.input_type(i)) != inst.arg_types[i]) {
      return mismatch("input", i, call.input_type(i), inst.arg_types[i]);
    }
  }
  for (size_t i = 0; i < inst.ret_types.size(); ++i) {
    if (call.output_type(i) != inst.ret_types[i]) {
      return mismatch("output", i, call.output_type(i), inst.ret_types[i]);
    }
  }
  return absl::OkStatus();
}

// A body's Identity that only hands a result on (TensorFlow 2 ends its
// functions' results with one): nothing but `call` reads it, it waits for
// nothing else and asks for its input's device.
bool HandsOnlyToCall(const Node* n, const Node* call) {
  if (n->op() != "Identity" || n->num_inputs() != 1) return false;
  for (const Edge* e : n->in_edges()) {
    if (e->IsControl()) return false;
    if (e->src->requested_device() != n->requested_device()) return false;
  }
  for (const Edge* e : n->out_edges()) {
    if (e->dst != call || e->IsControl()) return false;
  }
  return true;
}

// Removes the gathering node `call`: its consumers read its inputs
// instead (past a body's Identity that only handed a result on, which goes
// too, and from `added`), and what waited for it waits for everything it
// waited for.
absl::Status Bypass(Graph* graph, Node* call, std::vector<Node*>* added) {
  std::vector<std::pair<Node*, int>> source(call->num_inputs());
  absl::flat_hash_set<Node*> handing_on;
  for (const Edge* e : call->in_edges()) {
    if (e->IsControl()) continue;
    Node* src = e->src;
    int index = e->src_output;
    if (std::find(added->begin(), added->end(), src) != added->end() &&
        HandsOnlyToCall(src, call)) {
      handing_on.insert(src);
      const Edge* in = src->input_edge(0);
      src = in->src;
      index = in->src_output;
    }
    source[e->dst_input] = {src, index};
  }
  std::vector<Node*> waited_for;
  for (const Edge* e : call->in_edges()) {
    if (!handing_on.contains(e->src)) waited_for.push_back(e->src);
  }
  for (const auto& [src, index] : source) waited_for.push_back(src);
  const std::vector<const Edge*> out = call->out_edges();
  for (const Edge* e : out) {
    Node* dst = e->dst;
    const int dst_input = e->dst_input;
    const int src_output = e->src_output;
    const bool control = e->IsControl();
    graph->RemoveEdge(e);
    if (control) {
      for (Node* n : waited_for) graph->AddControlEdge(n, dst);
    } else {
      RETURN_IF_ERROR(graph->AddEdge(source[src_output].first, source[src_output].second, dst,
                                     dst_input));
    }
  }
  graph->RemoveNode(call);
  for (Node* n : handing_on) {
    added->erase(std::find(added->begin(), added->end(), n));
    graph->RemoveNode(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Node*>> Inline(Graph* graph, Node* call,
                                          const FunctionInstantiation& inst) {
  RETURN_IF_ERROR(CheckTypes(*call, inst));
  const std::string prefix = absl::StrCat(call->name(), "/");
  const std::string& device = call->requested_device();

  // The call's inputs, before its edges go.
  std::vector<const Edge*> data_in(call->num_inputs(), nullptr);
  std::vector<Node*> control_in;
  for (const Edge* e : call->in_edges()) {
    if (e->IsControl()) {
      control_in.push_back(e->src);
    } else {
      data_in[e->dst_input] = e;
    }
  }
  for (int i = 0; i < call->num_inputs(); ++i) {
    if (data_in[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " is not connected"));
    }
  }

  // Names inside the body -> new names in the graph.
  absl::flat_hash_map<std::string, std::string> renamed;
  for (const NodeDef& n : inst.nodes) {
    if (n.op() == kFunctionRetvalOp) continue;
    renamed[n.name()] = graph->NewName(prefix + n.name());
  }

  // A bypassed call (made by a lowering) leaves no Identity per argument:
  // the body reads the call's inputs directly (one node less per argument
  // and iteration in a lowered loop).
  absl::StatusOr<bool> bypass = call->GetAttr<bool>(kBypassedCallAttr);
  const bool bypassed = bypass.ok() && *bypass;
  std::vector<Node*> added;
  absl::flat_hash_map<std::string, Node*> node_of;  // body name -> new node
  // Bypassed: arg name -> the call's input (node, output), which outlives
  // the call's edges.
  absl::flat_hash_map<std::string, std::pair<Node*, int>> arg_input;
  std::vector<Node*> arg_identities(inst.arg_types.size(), nullptr);
  std::vector<std::pair<const NodeDef*, Node*>> body;  // body nodes to connect
  std::vector<std::string> ret_inputs(inst.ret_types.size());
  for (const NodeDef& n : inst.nodes) {
    if (n.op() == kFunctionRetvalOp) {
      ASSIGN_OR_RETURN(int64_t index, GetAttr<int64_t>(n.attr(), "index"));
      ret_inputs[index] = n.input(0);
      continue;
    }
    NodeDef def;
    def.set_name(renamed[n.name()]);
    def.set_device(n.device().empty() ? device : n.device());
    if (n.op() == kFunctionArgOp) {
      ASSIGN_OR_RETURN(int64_t index, GetAttr<int64_t>(n.attr(), "index"));
      if (bypassed) {
        arg_input[n.name()] = {data_in[index]->src, data_in[index]->src_output};
        continue;
      }
      def.set_op("Identity");
      (*def.mutable_attr())["T"] = MakeAttr(inst.arg_types[index]);
      ASSIGN_OR_RETURN(Node * id, graph->AddNode(std::move(def)));
      arg_identities[index] = id;
      node_of[n.name()] = id;
      added.push_back(id);
      continue;
    }
    def.set_op(n.op());
    *def.mutable_attr() = n.attr();
    // Colocation with a body node follows its new name.
    auto cls = def.mutable_attr()->find("_class");
    if (cls != def.mutable_attr()->end()) {
      for (std::string& s : *cls->second.mutable_list()->mutable_s()) {
        absl::string_view v = s;
        if (absl::ConsumePrefix(&v, "loc:@")) {
          auto it = renamed.find(v);
          if (it != renamed.end()) s = absl::StrCat("loc:@", it->second);
        }
      }
    }
    absl::StatusOr<Node*> node = graph->AddNode(std::move(def));
    if (!node.ok()) {
      return AddContext(node.status(), absl::StrCat("node '", n.name(), "' (", n.op(), ")"));
    }
    node_of[n.name()] = *node;
    body.emplace_back(&n, *node);
    added.push_back(*node);
  }

  auto resolve = [&](const std::string& input) -> absl::StatusOr<std::pair<Node*, int>> {
    ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
    if (auto arg = arg_input.find(id.node); arg != arg_input.end()) {
      const auto& [src, output] = arg->second;
      return std::make_pair(src, id.index == Edge::kControlSlot ? Edge::kControlSlot : output);
    }
    auto it = node_of.find(id.node);
    if (it == node_of.end()) {
      return absl::InternalError(absl::StrCat("instantiated input '", input, "' names nothing"));
    }
    return std::make_pair(it->second, id.index);
  };
  // The body's edges.
  std::vector<Node*> roots;
  for (const auto& [n, node] : body) {
    int slot = 0;
    for (const std::string& input : n->input()) {
      ASSIGN_OR_RETURN(auto src, resolve(input));
      if (src.second == Edge::kControlSlot) {
        graph->AddControlEdge(src.first, node);
        continue;
      }
      absl::Status s = graph->AddEdge(src.first, src.second, node, slot++);
      if (!s.ok()) return AddContext(s, absl::StrCat("node '", n->name(), "' (", n->op(), ")"));
    }
    if (n->input_size() == 0) roots.push_back(node);
  }
  // The arguments, after the call's inputs and control inputs.
  for (size_t i = 0; i < arg_identities.size(); ++i) {
    if (arg_identities[i] == nullptr) continue;  // bypassed
    const Edge* e = data_in[i];
    RETURN_IF_ERROR(graph->AddEdge(e->src, e->src_output, arg_identities[i], 0));
    for (Node* c : control_in) graph->AddControlEdge(c, arg_identities[i]);
  }
  // A bypassed call's roots wait for its control inputs (a lowering always
  // gives it one: the pivot, or the loop's first value), else its inputs.
  std::vector<Node*> gated_by;
  for (Node* a : arg_identities) {
    if (a != nullptr) gated_by.push_back(a);
  }
  if (bypassed && control_in.empty()) {
    for (const Edge* e : data_in) gated_by.push_back(e->src);
  }
  if (!roots.empty() && (!gated_by.empty() || !control_in.empty())) {
    NodeDef def;
    def.set_name(graph->NewName(prefix + "input_control_node"));
    def.set_op("NoOp");
    def.set_device(device);
    ASSIGN_OR_RETURN(Node * gate, graph->AddNode(std::move(def)));
    added.push_back(gate);
    for (Node* a : gated_by) graph->AddControlEdge(a, gate);
    for (Node* c : control_in) graph->AddControlEdge(c, gate);
    for (Node* r : roots) graph->AddControlEdge(gate, r);
  }

  // The call becomes the gathering of the results.
  std::vector<const Edge*> old_edges = call->in_edges();
  for (const Edge* e : old_edges) graph->RemoveEdge(e);
  NodeDef gather;
  if (inst.ret_types.empty()) {
    gather.set_op("NoOp");
  } else {
    gather.set_op("IdentityN");
    (*gather.mutable_attr())["T"] = MakeAttr(inst.ret_types);
  }
  for (const auto& [name, value] : call->attrs()) {
    if (absl::StartsWith(name, "_")) (*gather.mutable_attr())[name] = value;
  }
  RETURN_IF_ERROR(graph->ReplaceOp(call, std::move(gather)));
  for (size_t i = 0; i < ret_inputs.size(); ++i) {
    ASSIGN_OR_RETURN(auto src, resolve(ret_inputs[i]));
    RETURN_IF_ERROR(graph->AddEdge(src.first, src.second, call, static_cast<int>(i)));
  }
  for (const std::string& c : inst.control_ret_nodes) {
    auto it = node_of.find(c);
    if (it != node_of.end()) graph->AddControlEdge(it->second, call);
  }
  for (Node* n : added) {
    if (n->out_edges().empty()) graph->AddControlEdge(n, call);
  }

  if (bypassed) RETURN_IF_ERROR(Bypass(graph, call, &added));
  absl::flat_hash_set<const Node*> is_new(added.begin(), added.end());
  if (!bypassed) is_new.insert(call);
  // Shapes of the new nodes and of the call's results.
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  for (Node* n : order) {
    if (is_new.contains(n)) RETURN_IF_ERROR(InferShapes(n));
  }
  return added;
}

}  // namespace

absl::StatusOr<std::vector<Node*>> InlineFunctionCall(Graph* graph, Node* call) {
  const std::string context = absl::StrCat("inlining node ", call->DebugName());
  absl::StatusOr<NameAttrList> f = CalledFunction(*call);
  if (!f.ok()) return AddContext(f.status(), context);
  absl::StatusOr<FunctionInstantiation> inst = InstantiateFunction(*graph, *f);
  if (!inst.ok()) return AddContext(inst.status(), context);
  absl::StatusOr<std::vector<Node*>> added = Inline(graph, call, *inst);
  if (!added.ok()) {
    return AddContext(added.status(), absl::StrCat(context, " (function '", f->name(), "')"));
  }
  return added;
}

bool HasLowering(const Node& node) { return static_cast<bool>(node.op_def().lower_fn); }

absl::StatusOr<std::vector<Node*>> LowerOrInline(Graph* graph, Node* node) {
  if (!HasLowering(*node)) return InlineFunctionCall(graph, node);
  const std::string context = absl::StrCat("lowering node ", node->DebugName());
  absl::StatusOr<std::vector<Node*>> added = node->op_def().lower_fn(graph, node);
  if (!added.ok()) return AddContext(added.status(), context);
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  absl::flat_hash_set<const Node*> is_new(added->begin(), added->end());
  for (Node* n : order) {
    if (is_new.contains(n)) {
      absl::Status s = InferShapes(n);
      if (!s.ok()) return AddContext(s, context);
    }
  }
  return added;
}

absl::StatusOr<int> InlineFunctionCalls(Graph* graph, const InlineOptions& options) {
  std::deque<std::pair<Node*, int>> work;  // call or node to lower, depth
  for (Node* n : graph->nodes()) {
    if ((IsFunctionCall(*n) || HasLowering(*n)) && (!options.filter || options.filter(*n))) {
      work.emplace_back(n, 0);
    }
  }
  int inlined = 0;
  while (!work.empty()) {
    auto [call, depth] = work.front();
    work.pop_front();
    if (depth >= options.max_depth) {
      return absl::FailedPreconditionError(absl::StrCat(
          "inlining node ", call->DebugName(), ": calls nested more than ", options.max_depth,
          " deep (does a function call itself?)"));
    }
    ASSIGN_OR_RETURN(std::vector<Node*> added, LowerOrInline(graph, call));
    ++inlined;
    for (Node* n : added) {
      if (IsFunctionCall(*n) || HasLowering(*n)) work.emplace_back(n, depth + 1);
    }
  }
  return inlined;
}

}  // namespace sluice
