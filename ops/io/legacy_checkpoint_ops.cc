#include "ops/io/legacy_checkpoint_ops.h"

#include "base/status_macros.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {

// A restored tensor's shape is what the file holds: known at run time only.
absl::Status UnknownShape(InferenceContext* c) {
  c->set_output(0, TensorShape::Unknown());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterLegacyCheckpointOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Save")
                                    .Input("filename: string")
                                    .Input("tensor_names: string")
                                    .Input("data: T")
                                    .Attr("T: list(type) >= 1")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SaveSlices")
                                    .Input("filename: string")
                                    .Input("tensor_names: string")
                                    .Input("shapes_and_slices: string")
                                    .Input("data: T")
                                    .Attr("T: list(type) >= 1")
                                    .SetIsStateful()));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Restore")
                                    .Input("file_pattern: string")
                                    .Input("tensor_name: string")
                                    .Output("tensor: dt")
                                    .Attr("dt: type")
                                    .Attr("preferred_shard: int = -1")
                                    .SetIsStateful()
                                    .SetShapeFn(UnknownShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("RestoreSlice")
                                    .Input("file_pattern: string")
                                    .Input("tensor_name: string")
                                    .Input("shape_and_slice: string")
                                    .Output("tensor: dt")
                                    .Attr("dt: type")
                                    .Attr("preferred_shard: int = -1")
                                    .SetIsStateful()
                                    .SetShapeFn(UnknownShape)));
  for (const char* op : {"Save", "SaveSlices", "Restore", "RestoreSlice"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Node* SaveSlices(const Scope& scope, Input filename, Input tensor_names, Input shapes_and_slices,
                 absl::Span<const Output> data, std::source_location loc) {
  return scope.Op("SaveSlices", loc)
      .Input(filename)
      .Input(tensor_names)
      .Input(shapes_and_slices)
      .InputList(data)
      .Finalize();
}

Output RestoreSlice(const Scope& scope, Input file_pattern, Input tensor_name,
                    Input shape_and_slice, DataType dt, std::source_location loc) {
  return scope.Op("RestoreSlice", loc)
      .Input(file_pattern)
      .Input(tensor_name)
      .Input(shape_and_slice)
      .Attr("dt", dt)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
