// State op definitions, shape functions and wrappers (kernels: state_kernels.cc).
#include "ops/state/state_ops.h"

#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

absl::Status VariableShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape shape, c->GetAttr<TensorShape>("shape"));
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

// The variable on input 0 and the value on input 1 must have compatible
// shapes; the output has the merged shape.
absl::Status MergeRefAndValue(InferenceContext* c) {
  absl::StatusOr<TensorShape> merged = c->input(0).Merge(c->input(1));
  if (!merged.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": the variable has shape ", c->input(0).DebugString(),
                     " but the value has shape ", c->input(1).DebugString()));
  }
  c->set_output(0, *std::move(merged));
  return absl::OkStatus();
}

absl::Status AssignShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(bool validate, c->GetAttr<bool>("validate_shape"));
  if (validate) return MergeRefAndValue(c);
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, TensorShape());
  return absl::OkStatus();
}

absl::Status RegisterVariableOp(OpRegistry* ops, std::string name) {
  return ops->Register(OpDefBuilder(std::move(name))
                           .Output("ref: Ref(dtype)")
                           .Attr("shape: shape")
                           .Attr("dtype: type")
                           .Attr("container: string = ''")
                           .Attr("shared_name: string = ''")
                           .SetIsStateful()
                           .SetIsVariable()
                           .SetShapeFn(VariableShape));
}

absl::Status RegisterAssignUpdateOp(OpRegistry* ops, std::string name) {
  return ops->Register(OpDefBuilder(std::move(name))
                           .Input("ref: Ref(T)")
                           .Input("value: T")
                           .Output("output_ref: Ref(T)")
                           .Attr("T: {float, double, int32, int64}")
                           .Attr("use_locking: bool = false")
                           .SetShapeFn(MergeRefAndValue));
}

// `full` relative to the scope's name prefix, for WithOpName.
std::string RelativeName(const Scope& s, std::string_view full) {
  const std::string& prefix = s.name_prefix();
  if (!prefix.empty() && full.starts_with(prefix)) full.remove_prefix(prefix.size());
  return std::string(full);
}

}  // namespace

absl::Status RegisterStateOps(OpRegistry* ops) {
  RETURN_IF_ERROR(RegisterVariableOp(ops, "VariableV2"));
  RETURN_IF_ERROR(RegisterVariableOp(ops, "Variable"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Assign")
                                    .Input("ref: Ref(T)")
                                    .Input("value: T")
                                    .Output("output_ref: Ref(T)")
                                    .Attr("T: type")
                                    .Attr("validate_shape: bool = true")
                                    .Attr("use_locking: bool = true")
                                    .SetAllowsUninitializedInput()
                                    .SetShapeFn(AssignShape)));
  RETURN_IF_ERROR(RegisterAssignUpdateOp(ops, "AssignAdd"));
  RETURN_IF_ERROR(RegisterAssignUpdateOp(ops, "AssignSub"));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("IsVariableInitialized")
                                    .Input("ref: Ref(dtype)")
                                    .Output("is_initialized: bool")
                                    .Attr("dtype: type")
                                    .SetAllowsUninitializedInput()
                                    .SetShapeFn(ScalarShape)));
  for (const char* op :
       {"VariableV2", "Variable", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output Variable(const Scope& s, const TensorShape& shape, DataType dtype,
                const VariableAttrs& attrs, std::source_location loc) {
  return s.Op("VariableV2", loc)
      .Attr("shape", shape)
      .Attr("dtype", dtype)
      .Attr("container", attrs.container)
      .Attr("shared_name", attrs.shared_name)
      .DefaultName("Variable")
      .Finalize1();
}

Output Assign(const Scope& s, Input ref, Input value, const AssignAttrs& attrs,
              std::source_location loc) {
  return s.Op("Assign", loc)
      .Input(ref)
      .Input(value)
      .Attr("validate_shape", attrs.validate_shape)
      .Attr("use_locking", attrs.use_locking)
      .Finalize1();
}

Output AssignAdd(const Scope& s, Input ref, Input value, const AssignUpdateAttrs& attrs,
                 std::source_location loc) {
  return s.Op("AssignAdd", loc)
      .Input(ref)
      .Input(value)
      .Attr("use_locking", attrs.use_locking)
      .Finalize1();
}

Output AssignSub(const Scope& s, Input ref, Input value, const AssignUpdateAttrs& attrs,
                 std::source_location loc) {
  return s.Op("AssignSub", loc)
      .Input(ref)
      .Input(value)
      .Attr("use_locking", attrs.use_locking)
      .Finalize1();
}

Output IsVariableInitialized(const Scope& s, Input ref, std::source_location loc) {
  return s.Op("IsVariableInitialized", loc).Input(ref).Finalize1();
}

VariableAndInit VariableWithInit(const Scope& s, Input initial_value, const VariableAttrs& attrs,
                                 std::source_location loc) {
  if (!s.ok()) return {};
  DataType dtype;
  TensorShape shape;
  if (initial_value.is_literal()) {
    const ::tensorflow::TensorProto& literal = initial_value.literal();
    dtype = literal.dtype();
    absl::StatusOr<TensorShape> literal_shape = TensorShape::FromProto(literal.tensor_shape());
    if (!literal_shape.ok()) {
      s.UpdateStatus(AddContext(literal_shape.status(), "VariableWithInit: initial value"));
      return {};
    }
    shape = *std::move(literal_shape);
  } else {
    const Output& value = initial_value.output();
    if (!value.valid()) return {};  // an earlier error is in the scope
    dtype = BaseType(value.dtype());
    shape = value.shape();
  }
  Output var = Variable(s, shape, dtype, attrs, loc);
  if (!var.valid()) return {};
  const std::string rel = RelativeName(s, var.node->name());
  Scope colocated = s.ClearColocation().ColocateWith(var);
  Output value = initial_value.output();
  if (initial_value.is_literal()) {
    value = colocated.WithOpName(rel + "/initial_value")
                .Op("Const", loc)
                .Attr("value", initial_value.literal())
                .Attr("dtype", dtype)
                .Finalize1();
  }
  Output assign = Assign(colocated.WithOpName(rel + "/Assign"), var, value, {}, loc);
  if (!assign.valid()) return {};
  return {var, assign.node};
}

Node* GroupDeps(const Scope& s, absl::Span<Node* const> deps, std::source_location loc) {
  OpBuilder b = s.Op("NoOp", loc);
  for (Node* dep : deps) {
    if (dep != nullptr) b.ControlInput(dep);
  }
  return b.DefaultName("group_deps").Finalize();
}

Node* GlobalVariablesInitializer(const Scope& s, absl::Span<Node* const> initializers,
                                 std::source_location loc) {
  OpBuilder b = s.Op("NoOp", loc);
  for (Node* init : initializers) {
    if (init != nullptr) b.ControlInput(init);
  }
  return b.DefaultName("init").Finalize();
}

Node* GlobalVariablesInitializer(const Scope& s, std::source_location loc) {
  std::vector<Node*> initializers;
  for (Node* node : s.graph()->nodes()) {
    if (node->op() != "VariableV2" && node->op() != "Variable") continue;
    Node* assign = s.graph()->FindNode(node->name() + "/Assign");
    if (assign != nullptr && assign->op() == "Assign") initializers.push_back(assign);
  }
  return GlobalVariablesInitializer(s, initializers, loc);
}

}  // namespace ops
}  // namespace sluice
