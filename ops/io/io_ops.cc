// Checkpoint op definitions (SaveV2, RestoreV2), StringJoin, their shape
// functions and wrappers (kernels: io_kernels.cc).
#include "ops/io/io_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

// prefix a scalar; tensor_names and shape_and_slices vectors of `n`.
absl::Status CheckSaveRestoreInputs(InferenceContext* c, int64_t n) {
  RETURN_IF_ERROR(c->WithRank(0, 0));
  for (int i : {1, 2}) {
    RETURN_IF_ERROR(c->WithRank(i, 1));
    const TensorShape& s = c->input(i);
    if (s.rank() == 1 && s.dim(0) >= 0 && s.dim(0) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat(c->node().op(), ": ", i == 1 ? "tensor_names" : "shape_and_slices", " has ",
                       s.dim(0), " entries for ", n, " tensors"));
    }
  }
  return absl::OkStatus();
}

absl::Status SaveV2Shape(InferenceContext* c) {
  return CheckSaveRestoreInputs(c, c->num_inputs() - 3);
}

absl::Status RestoreV2Shape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckSaveRestoreInputs(c, c->num_outputs()));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape::Unknown());
  return absl::OkStatus();
}

// Scalars broadcast against the one shape the other inputs share.
absl::Status StringJoinShape(InferenceContext* c) {
  TensorShape out;  // a scalar unless some input is not
  bool have_non_scalar = false;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const TensorShape& s = c->input(i);
    if (s.rank() == 0) continue;
    if (s.unknown_rank()) {
      if (!have_non_scalar) out = TensorShape::Unknown();
      continue;
    }
    if (have_non_scalar && !out.IsCompatibleWith(s)) {
      return absl::InvalidArgumentError(absl::StrCat("StringJoin: inputs have shapes ",
                                                     out.DebugString(), " and ", s.DebugString()));
    }
    out = s;
    have_non_scalar = true;
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterIoOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SaveV2")
                                    .Input("prefix: string")
                                    .Input("tensor_names: string")
                                    .Input("shape_and_slices: string")
                                    .Input("tensors: dtypes")
                                    .Attr("dtypes: list(type) >= 1")
                                    .SetIsStateful()
                                    .SetShapeFn(SaveV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RestoreV2")
                                    .Input("prefix: string")
                                    .Input("tensor_names: string")
                                    .Input("shape_and_slices: string")
                                    .Output("tensors: dtypes")
                                    .Attr("dtypes: list(type) >= 1")
                                    .SetIsStateful()
                                    .SetShapeFn(RestoreV2Shape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("StringJoin")
                                    .Input("inputs: N * string")
                                    .Output("output: string")
                                    .Attr("N: int >= 1")
                                    .Attr("separator: string = ''")
                                    .SetShapeFn(StringJoinShape)));
  RETURN_IF_ERROR(ops->SetNoGradient("SaveV2"));
  RETURN_IF_ERROR(ops->SetNoGradient("RestoreV2"));
  return ops->SetNoGradient("StringJoin");
}

namespace ops {

Node* SaveV2(const Scope& scope, Input prefix, Input tensor_names, Input shape_and_slices,
             absl::Span<const Output> tensors, std::source_location loc) {
  return scope.Op("SaveV2", loc)
      .Input(prefix)
      .Input(tensor_names)
      .Input(shape_and_slices)
      .InputList(tensors)
      .Finalize();
}

std::vector<Output> RestoreV2(const Scope& scope, Input prefix, Input tensor_names,
                              Input shape_and_slices, absl::Span<const DataType> dtypes,
                              std::source_location loc) {
  return scope.Op("RestoreV2", loc)
      .Input(prefix)
      .Input(tensor_names)
      .Input(shape_and_slices)
      .SetAttr("dtypes", MakeAttr(dtypes))
      .FinalizeAll();
}

Output StringJoin(const Scope& scope, absl::Span<const Input> inputs, const StringJoinAttrs& attrs,
                  std::source_location loc) {
  return scope.Op("StringJoin", loc)
      .InputList(inputs)
      .Attr("separator", attrs.separator)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
