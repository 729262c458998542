// The TensorArray ops' definitions, shape functions and graph-building
// wrappers (kernels: tensor_array_kernels.cc).
#include "ops/control_flow/tensor_array_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/array_shape_fns.h"

namespace sluice {
namespace {

// ---- Shapes ----------------------------------------------------------------------

absl::Status HandleAndFlowShape(InferenceContext* c) {
  c->set_output(0, TensorShape());
  c->set_output(1, TensorShape());
  return absl::OkStatus();
}

absl::Status CreateShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 0));
  return HandleAndFlowShape(c);
}

absl::Status UnknownShape(InferenceContext* c) {
  c->set_output(0, TensorShape::Unknown());
  return absl::OkStatus();
}

// [n] + element_shape, n from the indices when known.
absl::Status GatherShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(1, 1));
  ASSIGN_OR_RETURN(TensorShape element, c->GetAttr<TensorShape>("element_shape"));
  if (element.unknown_rank()) return UnknownShape(c);
  const TensorShape& indices = c->input(1);
  element.InsertDim(0, indices.rank() == 1 ? indices.dim(0) : TensorShape::kUnknownDim);
  c->set_output(0, std::move(element));
  return absl::OkStatus();
}

absl::Status ConcatShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(TensorShape rest, c->GetAttr<TensorShape>("element_shape_except0"));
  if (!rest.unknown_rank()) rest.InsertDim(0, TensorShape::kUnknownDim);
  c->set_output(0, rest.unknown_rank() ? TensorShape::Unknown() : std::move(rest));
  c->set_output(1, TensorShape({TensorShape::kUnknownDim}));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterTensorArrayOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayV3")
                                    .Input("size: int32")
                                    .Output("handle: resource")
                                    .Output("flow: float")
                                    .Attr("dtype: type")
                                    .Attr("element_shape: shape")
                                    .Attr("dynamic_size: bool = false")
                                    .Attr("clear_after_read: bool = true")
                                    .Attr("identical_element_shapes: bool = false")
                                    .Attr("tensor_array_name: string")
                                    .SetAttrDefault("element_shape", MakeAttr(TensorShape::Unknown()))
                                    .SetAttrDefault("tensor_array_name", MakeAttr(std::string()))
                                    .SetIsStateful()
                                    .SetShapeFn(CreateShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayGradV3")
                                    .Input("handle: resource")
                                    .Input("flow_in: float")
                                    .Output("grad_handle: resource")
                                    .Output("flow_out: float")
                                    .Attr("source: string")
                                    .SetIsStateful()
                                    .SetShapeFn(HandleAndFlowShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayGradWithShape")
                                    .Input("handle: resource")
                                    .Input("flow_in: float")
                                    .Input("shape_to_prepend: int32")
                                    .Output("grad_handle: resource")
                                    .Output("flow_out: float")
                                    .Attr("source: string")
                                    .SetIsStateful()
                                    .SetShapeFn(HandleAndFlowShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayWriteV3")
                                    .Input("handle: resource")
                                    .Input("index: int32")
                                    .Input("value: T")
                                    .Input("flow_in: float")
                                    .Output("flow_out: float")
                                    .Attr("T: type")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayReadV3")
                                    .Input("handle: resource")
                                    .Input("index: int32")
                                    .Input("flow_in: float")
                                    .Output("value: dtype")
                                    .Attr("dtype: type")
                                    .SetIsStateful()
                                    .SetShapeFn(UnknownShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayGatherV3")
                                    .Input("handle: resource")
                                    .Input("indices: int32")
                                    .Input("flow_in: float")
                                    .Output("value: dtype")
                                    .Attr("dtype: type")
                                    .Attr("element_shape: shape")
                                    .SetAttrDefault("element_shape", MakeAttr(TensorShape::Unknown()))
                                    .SetIsStateful()
                                    .SetShapeFn(GatherShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayScatterV3")
                                    .Input("handle: resource")
                                    .Input("indices: int32")
                                    .Input("value: T")
                                    .Input("flow_in: float")
                                    .Output("flow_out: float")
                                    .Attr("T: type")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArrayConcatV3")
                                    .Input("handle: resource")
                                    .Input("flow_in: float")
                                    .Output("value: dtype")
                                    .Output("lengths: int64")
                                    .Attr("dtype: type")
                                    .Attr("element_shape_except0: shape")
                                    .SetAttrDefault("element_shape_except0",
                                                    MakeAttr(TensorShape::Unknown()))
                                    .SetIsStateful()
                                    .SetShapeFn(ConcatShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArraySplitV3")
                                    .Input("handle: resource")
                                    .Input("value: T")
                                    .Input("lengths: int64")
                                    .Input("flow_in: float")
                                    .Output("flow_out: float")
                                    .Attr("T: type")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("TensorArraySizeV3")
                                    .Input("handle: resource")
                                    .Input("flow_in: float")
                                    .Output("size: int32")
                                    .SetIsStateful()
                                    .SetShapeFn(internal::ScalarShape)));
  RETURN_IF_ERROR(ops->Register(
      OpDefBuilder("TensorArrayCloseV3").Input("handle: resource").SetIsStateful()));
  return absl::OkStatus();
}

namespace ops {

TensorArrayOutputs TensorArrayV3(const Scope& scope, const Input& size, DataType dtype,
                                 const TensorArrayAttrs& attrs, std::source_location loc) {
  std::vector<Output> out = scope.Op("TensorArrayV3", loc)
                                .Input(size)
                                .Attr("dtype", dtype)
                                .Attr("element_shape", attrs.element_shape)
                                .Attr("dynamic_size", attrs.dynamic_size)
                                .Attr("clear_after_read", attrs.clear_after_read)
                                .Attr("identical_element_shapes", attrs.identical_element_shapes)
                                .Attr("tensor_array_name", attrs.tensor_array_name)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

TensorArrayOutputs TensorArrayGradV3(const Scope& scope, const Input& handle, const Input& flow_in,
                                     const std::string& source, std::source_location loc) {
  std::vector<Output> out = scope.Op("TensorArrayGradV3", loc)
                                .Input(handle)
                                .Input(flow_in)
                                .Attr("source", source)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

TensorArrayOutputs TensorArrayGradWithShape(const Scope& scope, const Input& handle,
                                            const Input& flow_in, const Input& shape_to_prepend,
                                            const std::string& source,
                                            std::source_location loc) {
  std::vector<Output> out = scope.Op("TensorArrayGradWithShape", loc)
                                .Input(handle)
                                .Input(flow_in)
                                .Input(shape_to_prepend)
                                .Attr("source", source)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output TensorArrayWriteV3(const Scope& scope, const Input& handle, const Input& index,
                          const Input& value, const Input& flow_in, std::source_location loc) {
  return scope.Op("TensorArrayWriteV3", loc)
      .Input(handle)
      .Input(index)
      .Input(value)
      .Input(flow_in)
      .Finalize1();
}

Output TensorArrayReadV3(const Scope& scope, const Input& handle, const Input& index,
                         const Input& flow_in, DataType dtype, std::source_location loc) {
  return scope.Op("TensorArrayReadV3", loc)
      .Input(handle)
      .Input(index)
      .Input(flow_in)
      .Attr("dtype", dtype)
      .Finalize1();
}

Output TensorArrayGatherV3(const Scope& scope, const Input& handle, const Input& indices,
                           const Input& flow_in, DataType dtype, const TensorShape& element_shape,
                           std::source_location loc) {
  return scope.Op("TensorArrayGatherV3", loc)
      .Input(handle)
      .Input(indices)
      .Input(flow_in)
      .Attr("dtype", dtype)
      .Attr("element_shape", element_shape)
      .Finalize1();
}

Output TensorArrayScatterV3(const Scope& scope, const Input& handle, const Input& indices,
                            const Input& value, const Input& flow_in, std::source_location loc) {
  return scope.Op("TensorArrayScatterV3", loc)
      .Input(handle)
      .Input(indices)
      .Input(value)
      .Input(flow_in)
      .Finalize1();
}

TensorArrayConcatOutputs TensorArrayConcatV3(const Scope& scope, const Input& handle,
                                             const Input& flow_in, DataType dtype,
                                             const TensorShape& element_shape_except0,
                                             std::source_location loc) {
  std::vector<Output> out = scope.Op("TensorArrayConcatV3", loc)
                                .Input(handle)
                                .Input(flow_in)
                                .Attr("dtype", dtype)
                                .Attr("element_shape_except0", element_shape_except0)
                                .FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output TensorArraySplitV3(const Scope& scope, const Input& handle, const Input& value,
                          const Input& lengths, const Input& flow_in, std::source_location loc) {
  return scope.Op("TensorArraySplitV3", loc)
      .Input(handle)
      .Input(value)
      .Input(lengths)
      .Input(flow_in)
      .Finalize1();
}

Output TensorArraySizeV3(const Scope& scope, const Input& handle, const Input& flow_in,
                         std::source_location loc) {
  return scope.Op("TensorArraySizeV3", loc).Input(handle).Input(flow_in).Finalize1();
}

Node* TensorArrayCloseV3(const Scope& scope, const Input& handle, std::source_location loc) {
  return scope.Op("TensorArrayCloseV3", loc).Input(handle).Finalize();
}

}  // namespace ops
}  // namespace sluice
