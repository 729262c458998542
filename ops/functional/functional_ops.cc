#include "ops/functional/functional_ops.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/functional/functional_control_flow.h"
#include "ops/functional/symbolic_gradient.h"

namespace sluice {
namespace {

absl::Status ForwardShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

// A call's result shapes are its body's: unknown until the call is inlined
// (CompileSignature and AddGradients inline every call first).
absl::Status UnknownShapes(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape::Unknown());
  return absl::OkStatus();
}

// Never reached by AddGradients, which inlines calls before it
// differentiates; a caller that differentiates a call node itself is told so.
absl::StatusOr<std::vector<Output>> CallGrad(const Scope& s, const Node& node,
                                             absl::Span<const Output> dy) {
  return absl::FailedPreconditionError(
      absl::StrCat("the gradient of call ", node.DebugName(),
                   " is its inlined body's: inline the call first (InlineFunctionCalls)"));
}

OpDefBuilder CallOp(const char* name) {
  return OpDefBuilder(name)
      .Input("args: Tin")
      .Output("output: Tout")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("f: func")
      .Attr("config: string = ''")
      .Attr("config_proto: string = ''")
      .Attr("executor_type: string = ''")
      .SetCallsFunction("f")
      .SetShapeFn(UnknownShapes);
}

absl::StatusOr<std::vector<Output>> IdentityNGrad(const Scope& s, const Node& node,
                                                  absl::Span<const Output> dy) {
  return std::vector<Output>(dy.begin(), dy.end());
}

}  // namespace

absl::Status RegisterFunctionalOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(CallOp("PartitionedCall")));
  RETURN_IF_ERROR(ops->Register(CallOp("StatefulPartitionedCall").SetIsStateful()));
  RETURN_IF_ERROR(RegisterFunctionalControlFlowOps(ops));
  RETURN_IF_ERROR(RegisterSymbolicGradientOp(ops));
  return ops->Register(OpDefBuilder("IdentityN")
                           .Input("input: T")
                           .Output("output: T")
                           .Attr("T: list(type) >= 0")
                           .SetShapeFn(ForwardShapes));
}

absl::Status RegisterFunctionalGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("PartitionedCall", CallGrad));
  RETURN_IF_ERROR(ops->SetGradient("StatefulPartitionedCall", CallGrad));
  return ops->SetGradient("IdentityN", IdentityNGrad);
}

namespace ops {

std::vector<Output> PartitionedCall(const Scope& scope, absl::Span<const Output> args,
                                    const NameAttrList& f, const std::vector<DataType>& tout,
                                    const PartitionedCallAttrs& attrs,
                                    std::source_location loc) {
  OpBuilder b = scope.Op(attrs.stateful ? "StatefulPartitionedCall" : "PartitionedCall", loc);
  b.InputList(args).Attr("Tout", tout).Attr("f", f);
  std::vector<DataType> tin;
  for (const Output& a : args) tin.push_back(a.valid() ? BaseType(a.dtype()) : DT_INVALID);
  b.Attr("Tin", tin);
  if (!attrs.config_proto.empty()) b.Attr("config_proto", attrs.config_proto);
  if (!attrs.executor_type.empty()) b.Attr("executor_type", attrs.executor_type);
  return b.FinalizeAll();
}

std::vector<Output> CallFunction(const Scope& scope, const NameAttrList& f,
                                 absl::Span<const Output> args, std::source_location loc) {
  OpBuilder b = scope.Op(f.name(), loc);
  for (const Output& a : args) b.Input(a);
  for (const auto& [name, value] : f.attr()) b.SetAttr(name, value);
  return b.FinalizeAll();
}

std::vector<Output> IdentityN(const Scope& scope, absl::Span<const Output> inputs,
                              std::source_location loc) {
  return scope.Op("IdentityN", loc).InputList(inputs).FinalizeAll();
}

}  // namespace ops
}  // namespace sluice
