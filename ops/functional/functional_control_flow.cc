// If, Case and While and their lowering (see functional_control_flow.h).
#include "ops/functional/functional_control_flow.h"

#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/function_inline.h"
#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/internal/lowering.h"

namespace sluice {
namespace {

// ---- Op definitions -------------------------------------------------------

// output_shapes, when it gives one shape per output; unknown shapes (If,
// Case) or the inputs' shapes (While) otherwise.
ShapeFn OutputShapes(bool like_inputs) {
  return [like_inputs](InferenceContext* c) -> absl::Status {
    absl::StatusOr<std::vector<TensorShape>> given =
        c->GetAttr<std::vector<TensorShape>>("output_shapes");
    const bool use_given = given.ok() && static_cast<int>(given->size()) == c->num_outputs();
    for (int i = 0; i < c->num_outputs(); ++i) {
      c->set_output(i, use_given     ? (*given)[i]
                       : like_inputs ? c->input(i)
                                     : TensorShape::Unknown());
    }
    return absl::OkStatus();
  };
}

AttrValue NoShapes() {
  AttrValue v;
  v.mutable_list();
  return v;
}

OpDefBuilder IfOp(const char* name) {
  return OpDefBuilder(name)
      .Input("cond: Tcond")
      .Input("input: Tin")
      .Output("output: Tout")
      .Attr("Tcond: type")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("then_branch: func")
      .Attr("else_branch: func")
      .Attr("output_shapes: list(shape)")
      .SetAttrDefault("output_shapes", NoShapes())
      .SetShapeFn(OutputShapes(false));
}

OpDefBuilder CaseOp(const char* name) {
  return OpDefBuilder(name)
      .Input("branch_index: int32")
      .Input("input: Tin")
      .Output("output: Tout")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("branches: list(func) >= 1")
      .Attr("output_shapes: list(shape)")
      .SetAttrDefault("output_shapes", NoShapes())
      .SetShapeFn(OutputShapes(false));
}

OpDefBuilder WhileOp(const char* name) {
  return OpDefBuilder(name)
      .Input("input: T")
      .Output("output: T")
      .Attr("T: list(type) >= 0")
      .Attr("cond: func")
      .Attr("body: func")
      .Attr("output_shapes: list(shape)")
      .SetAttrDefault("output_shapes", NoShapes())
      .Attr("parallel_iterations: int = 10")
      .SetShapeFn(OutputShapes(true));
}

// ---- Lowering ---------------------------------------------------------------


// A call of `f` on `args`: a node whose op is the function (the inliner
// replaces it by the body). Null on error, recorded in the scope.
Node* Call(const Scope& scope, const NameAttrList& f, absl::Span<const Output> args) {
  OpBuilder b = scope.Op(f.name());
  for (const Output& a : args) b.Input(a);
  for (const auto& [name, value] : f.attr()) b.SetAttr(name, value);
  b.Attr(kBypassedCallAttr, true);  // the inliner removes it: nothing else holds it
  return b.Finalize();
}

std::vector<Output> OutputsOf(Node* n) {
  std::vector<Output> out;
  if (n == nullptr) return out;
  for (int i = 0; i < n->num_outputs(); ++i) out.emplace_back(n, i);
  return out;
}

// InvalidArgument unless `call` (of `what` `f`) returns `types`.
absl::Status CheckReturns(const Node* call, absl::string_view what, const NameAttrList& f,
                          const std::vector<DataType>& types) {
  if (call->output_types() == types) return absl::OkStatus();
  std::string want, got;
  for (DataType t : types) absl::StrAppend(&want, want.empty() ? "" : ", ", DataTypeName(t));
  for (DataType t : call->output_types()) {
    absl::StrAppend(&got, got.empty() ? "" : ", ", DataTypeName(t));
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " '", f.name(), "' returns [", got,
                                                 "], the node's outputs are [", want, "]"));
}

// `x` as the scalar bool a Switch decides on: bools as they are, numbers
// true when not zero.
absl::StatusOr<Output> AsPredicate(const Scope& scope, const Output& x) {
  const DataType t = BaseType(x.dtype());
  if (t == DT_BOOL) return x;
  if (t == DT_STRING || t == DT_RESOURCE || t == ::tensorflow::DT_VARIANT) {
    return absl::InvalidArgumentError(
        absl::StrCat("a condition of type ", DataTypeName(t), " has no truth value"));
  }
  return scope.Op("Cast").Input(x).Attr("DstT", DT_BOOL).Finalize1();
}

// A branch that calls `f` on `args` and returns its results and, last, a
// bool that is live once the call ran (the cond's Merge of it says which
// branch was taken and that it is done).
ops::BranchFn CallingBranch(const NameAttrList& f, const std::vector<Output>& args,
                            const std::vector<DataType>& types, absl::string_view what) {
  return [f, args, types, what = std::string(what)](const Scope& b) -> std::vector<Output> {
    Node* call = Call(b.WithOpName(what), f, args);
    if (call == nullptr) return {};
    if (absl::Status s = CheckReturns(call, what, f, types); !s.ok()) {
      b.UpdateStatus(s);
      return {};
    }
    std::vector<Output> out = OutputsOf(call);
    const std::vector<Node*> after_call = {call};
    out.push_back(ops::Const(b.WithControlDependencies(after_call).WithOpName("done"), true));
    return out;
  };
}

// Lowers the cond, merges its results; the last merged value is "done".
absl::StatusOr<std::vector<Node*>> FinishCond(Lowering& l, std::vector<Output> merged) {
  RETURN_IF_ERROR(l.scope.status());
  if (merged.empty()) return absl::InternalError("a lowered cond without its done value");
  Node* done = merged.back().node;
  merged.pop_back();
  return FinishLowering(l, merged, done);
}

absl::StatusOr<std::vector<Node*>> LowerIf(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(NameAttrList then_f, node->GetAttr<NameAttrList>("then_branch"));
  ASSIGN_OR_RETURN(NameAttrList else_f, node->GetAttr<NameAttrList>("else_branch"));
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  ASSIGN_OR_RETURN(Output pred, AsPredicate(l.scope, l.inputs[0]));
  const std::vector<Output> args(l.inputs.begin() + 1, l.inputs.end());
  ASSIGN_OR_RETURN(std::vector<Output> merged,
                   ops::Cond(l.scope, pred, CallingBranch(then_f, args, node->output_types(),
                                                          "then_branch"),
                             CallingBranch(else_f, args, node->output_types(), "else_branch")));
  return FinishCond(l, std::move(merged));
}

absl::StatusOr<std::vector<Node*>> LowerCase(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(std::vector<NameAttrList> branches,
                   node->GetAttr<std::vector<NameAttrList>>("branches"));
  if (branches.empty()) return absl::InvalidArgumentError("a Case without branches");
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  const Output index = l.inputs[0];
  const std::vector<Output> args(l.inputs.begin() + 1, l.inputs.end());
  const std::vector<DataType> types = node->output_types();
  auto what = [](size_t k) { return absl::StrCat("branches_", k); };
  // Branches k.. in `b`: a cond on index == k taking branch k, else the
  // rest; the last branch takes every index left.
  std::function<std::vector<Output>(const Scope&, size_t)> from = [&](const Scope& b, size_t k) {
    if (k + 1 == branches.size()) return CallingBranch(branches[k], args, types, what(k))(b);
    const Output is_k =
        b.Op("Equal").Input(index).Input(ops::Const(b, static_cast<int32_t>(k))).Finalize1();
    absl::StatusOr<std::vector<Output>> merged = ops::Cond(
        b, is_k, CallingBranch(branches[k], args, types, what(k)),
        [&, k](const Scope& rest) { return from(rest, k + 1); });
    if (!merged.ok()) {
      b.UpdateStatus(merged.status());
      return std::vector<Output>{};
    }
    return *std::move(merged);
  };
  if (branches.size() == 1) {
    // No cond to hang the branch on: it waits for the index (its frame and
    // liveness), as the node did.
    const Output pivot = ops::Identity(l.scope.WithOpName("pivot"), index);
    return FinishCond(l, from(l.scope.WithControlDependencies(std::vector<Node*>{pivot.node}), 0));
  }
  return FinishCond(l, from(l.scope, 0));
}

absl::StatusOr<std::vector<Node*>> LowerWhile(Graph* graph, Node* node) {
  ASSIGN_OR_RETURN(NameAttrList cond_f, node->GetAttr<NameAttrList>("cond"));
  ASSIGN_OR_RETURN(NameAttrList body_f, node->GetAttr<NameAttrList>("body"));
  ASSIGN_OR_RETURN(int64_t parallel, node->GetAttr<int64_t>("parallel_iterations"));
  if (node->num_inputs() == 0) {
    return absl::InvalidArgumentError("a While needs at least one loop variable");
  }
  ASSIGN_OR_RETURN(Lowering l, BeginLowering(graph, node));
  const std::vector<DataType> types = node->output_types();
  ops::WhileLoopAttrs attrs;
  attrs.name = "loop";
  attrs.parallel_iterations = parallel;
  Node* cond_call = nullptr;
  Node* body_call = nullptr;
  const ops::LoopCondFn cond = [&](const Scope& c, absl::Span<const Output> vars) -> Output {
    Node* call = cond_call = Call(c.WithOpName("cond"), cond_f, vars);
    if (call == nullptr) return Output();
    if (call->num_outputs() != 1) {
      c.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
          "cond '", cond_f.name(), "' returns ", call->num_outputs(), " values, not one")));
      return Output();
    }
    absl::StatusOr<Output> pred = AsPredicate(c, Output(call, 0));
    if (!pred.ok()) {
      c.UpdateStatus(AddContext(pred.status(), absl::StrCat("cond '", cond_f.name(), "'")));
      return Output();
    }
    return *pred;
  };
  const ops::LoopBodyFn body = [&](const Scope& b,
                                   absl::Span<const Output> vars) -> std::vector<Output> {
    Node* call = body_call = Call(b.WithOpName("body"), body_f, vars);
    if (call == nullptr) return {};
    if (absl::Status s = CheckReturns(call, "body", body_f, types); !s.ok()) {
      b.UpdateStatus(s);
      return {};
    }
    return OutputsOf(call);
  };
  ASSIGN_OR_RETURN(std::vector<Output> exits, ops::WhileLoop(l.scope, l.inputs, cond, body, attrs));
  // What the condition and the body do besides their results (a variable
  // written, a control output) finishes before the iteration's LoopCond and
  // NextIterations: once the calls are bypassed, those wait for it.
  for (int id = l.first_id; id < graph->num_node_ids(); ++id) {
    Node* n = graph->node(id);
    if (n == nullptr) continue;
    if (n->control_flow() == ControlFlowRole::kLoopCond && cond_call != nullptr) {
      graph->AddControlEdge(cond_call, n);
    } else if (n->control_flow() == ControlFlowRole::kNextIteration && body_call != nullptr) {
      graph->AddControlEdge(body_call, n);
    }
  }
  return FinishLowering(l, exits, nullptr);
}

}  // namespace

absl::Status RegisterFunctionalControlFlowOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(IfOp("If").SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(IfOp("StatelessIf")));
  RETURN_IF_ERROR(ops->Register(CaseOp("Case").SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(CaseOp("StatelessCase")));
  RETURN_IF_ERROR(ops->Register(WhileOp("While").SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(WhileOp("StatelessWhile")));
  for (const char* op : {"If", "StatelessIf"}) RETURN_IF_ERROR(ops->SetLowering(op, LowerIf));
  for (const char* op : {"Case", "StatelessCase"}) {
    RETURN_IF_ERROR(ops->SetLowering(op, LowerCase));
  }
  for (const char* op : {"While", "StatelessWhile"}) {
    RETURN_IF_ERROR(ops->SetLowering(op, LowerWhile));
  }
  return absl::OkStatus();
}

namespace ops {

std::vector<Output> If(const Scope& scope, const Output& cond, absl::Span<const Output> inputs,
                       const NameAttrList& then_branch, const NameAttrList& else_branch,
                       const std::vector<DataType>& tout, const FunctionalAttrs& attrs,
                       std::source_location loc) {
  return scope.Op(attrs.stateless ? "StatelessIf" : "If", loc)
      .Input(cond)
      .InputList(inputs)
      .Attr("Tout", tout)
      .Attr("then_branch", then_branch)
      .Attr("else_branch", else_branch)
      .FinalizeAll();
}

std::vector<Output> Case(const Scope& scope, const Output& branch_index,
                         absl::Span<const Output> inputs,
                         const std::vector<NameAttrList>& branches,
                         const std::vector<DataType>& tout, const FunctionalAttrs& attrs,
                         std::source_location loc) {
  return scope.Op(attrs.stateless ? "StatelessCase" : "Case", loc)
      .Input(branch_index)
      .InputList(inputs)
      .Attr("Tout", tout)
      .Attr("branches", branches)
      .FinalizeAll();
}

std::vector<Output> While(const Scope& scope, absl::Span<const Output> inputs,
                          const NameAttrList& cond, const NameAttrList& body,
                          const FunctionalAttrs& attrs, std::source_location loc) {
  return scope.Op(attrs.stateless ? "StatelessWhile" : "While", loc)
      .InputList(inputs)
      .Attr("cond", cond)
      .Attr("body", body)
      .Attr("parallel_iterations", attrs.parallel_iterations)
      .FinalizeAll();
}

}  // namespace ops
}  // namespace sluice
