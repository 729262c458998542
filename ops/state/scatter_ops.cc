// Scatter op definitions, shape functions and wrappers (kernels:
// scatter_kernels.cc).
#include "ops/state/scatter_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

// updates must be a scalar or indices.shape + ref.shape[1:] (unknown parts
// match anything); the output has ref's shape. The resource forms (no
// output) hold only a handle: their kernels check the shapes.
absl::Status ScatterShape(InferenceContext* c) {
  if (c->num_outputs() == 0) return absl::OkStatus();
  const TensorShape& ref = c->input(0);
  const TensorShape& indices = c->input(1);
  const TensorShape& updates = c->input(2);
  c->set_output(0, ref);
  if (updates.rank() == 0 || updates.rank() < 0 || indices.rank() < 0 || ref.rank() < 0) {
    return absl::OkStatus();
  }
  if (ref.rank() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": the variable must be at least 1-D, got a scalar"));
  }
  std::vector<int64_t> want = indices.dims();
  for (int d = 1; d < ref.rank(); ++d) want.push_back(ref.dim(d));
  bool ok = updates.rank() == static_cast<int>(want.size());
  for (int d = 0; ok && d < updates.rank(); ++d) {
    ok = updates.dim(d) < 0 || want[d] < 0 || updates.dim(d) == want[d];
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      c->node().op(), ": updates must have shape indices.shape + ref.shape[1:] or be a scalar, "
                      "got updates.shape ",
      updates.DebugString(), ", indices.shape ", indices.DebugString(), ", ref.shape ",
      ref.DebugString()));
}

absl::Status RegisterScatter(OpRegistry* ops, const std::string& name, bool resource) {
  OpDefBuilder b(resource ? absl::StrCat("Resource", name) : name);
  if (resource) {
    b.Input("resource: resource")
        .Input("indices: Tindices")
        .Input("updates: dtype")
        .Attr("dtype: {float, double, int32, int64}")
        .Attr("Tindices: {int32, int64}")
        .SetIsStateful();
  } else {
    b.Input("ref: Ref(T)")
        .Input("indices: Tindices")
        .Input("updates: T")
        .Output("output_ref: Ref(T)")
        .Attr("T: {float, double, int32, int64}")
        .Attr("Tindices: {int32, int64}")
        .Attr(name == "ScatterUpdate" ? "use_locking: bool = true" : "use_locking: bool = false");
  }
  b.SetShapeFn(ScatterShape);
  RETURN_IF_ERROR(ops->Register(b));
  return ops->SetNoGradient(resource ? absl::StrCat("Resource", name) : name);
}

}  // namespace

absl::Status RegisterScatterOps(OpRegistry* ops) {
  for (const char* name : {"ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
                           "ScatterMin", "ScatterMax"}) {
    RETURN_IF_ERROR(RegisterScatter(ops, name, /*resource=*/false));
    RETURN_IF_ERROR(RegisterScatter(ops, name, /*resource=*/true));
  }
  return absl::OkStatus();
}

namespace ops {
namespace {

Output RefScatter(const Scope& s, const char* op, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs, std::source_location loc) {
  return s.Op(op, loc)
      .Input(ref)
      .Input(indices)
      .Input(updates)
      .Attr("use_locking", attrs.use_locking)
      .Finalize1();
}

Node* ResourceScatter(const Scope& s, const char* op, Input resource, Input indices,
                      Input updates, std::source_location loc) {
  return s.Op(op, loc).Input(resource).Input(indices).Input(updates).Finalize();
}

}  // namespace

#define SLUICE_SCATTER_WRAPPERS_(NAME)                                                      \
  Output Scatter##NAME(const Scope& s, Input ref, Input indices, Input updates,              \
                       const ScatterAttrs& attrs, std::source_location loc) {                \
    return RefScatter(s, "Scatter" #NAME, ref, indices, updates, attrs, loc);                \
  }                                                                                          \
  Node* ResourceScatter##NAME(const Scope& s, Input resource, Input indices, Input updates, \
                              std::source_location loc) {                                    \
    return ResourceScatter(s, "ResourceScatter" #NAME, resource, indices, updates, loc);     \
  }
SLUICE_SCATTER_WRAPPERS_(Update)
SLUICE_SCATTER_WRAPPERS_(Add)
SLUICE_SCATTER_WRAPPERS_(Sub)
SLUICE_SCATTER_WRAPPERS_(Mul)
SLUICE_SCATTER_WRAPPERS_(Div)
SLUICE_SCATTER_WRAPPERS_(Min)
SLUICE_SCATTER_WRAPPERS_(Max)
#undef SLUICE_SCATTER_WRAPPERS_

}  // namespace ops
}  // namespace sluice
