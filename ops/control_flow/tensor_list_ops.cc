// The list ops' definitions (see tensor_list_ops.h); their kernels are in
// tensor_list_kernels.cc.
#include "ops/control_flow/tensor_list_ops.h"

#include <optional>
#include <vector>

#include "base/status_macros.h"
#include "graph/shape_inference.h"

namespace sluice {
namespace {


absl::Status ScalarOutputs(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape());
  return absl::OkStatus();
}

// Output `out` has the element shape input `in` gives, when constant.
ShapeFn ElementFromInput(int in, int out, bool stacked) {
  return [in, out, stacked](InferenceContext* c) -> absl::Status {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape());
    TensorShape shape = TensorShape::Unknown();
    absl::StatusOr<std::optional<std::vector<int64_t>>> dims = c->InputAsInts(in);
    if (dims.ok() && dims->has_value() && c->input(in).rank() == 1) {
      shape = TensorShape(absl::MakeConstSpan(**dims));
    }
    if (stacked && !shape.unknown_rank()) shape.InsertDim(0, TensorShape::kUnknownDim);
    c->set_output(out, stacked && shape.unknown_rank() ? TensorShape::Unknown() : shape);
    return absl::OkStatus();
  };
}

absl::Status UnknownVector(InferenceContext* c) {
  c->set_output(0, TensorShape::UnknownOfRank(1));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterTensorListOps(OpRegistry* ops) {
  auto op = [](const char* name) { return OpDefBuilder(name); };
  RETURN_IF_ERROR(ops->Register(op("EmptyTensorList")
                                    .Input("element_shape: shape_type")
                                    .Input("max_num_elements: int32")
                                    .Output("handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListReserve")
                                    .Input("element_shape: shape_type")
                                    .Input("num_elements: int32")
                                    .Output("handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListFromTensor")
                                    .Input("tensor: element_dtype")
                                    .Input("element_shape: shape_type")
                                    .Output("output_handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListPushBack")
                                    .Input("input_handle: variant")
                                    .Input("tensor: element_dtype")
                                    .Output("output_handle: variant")
                                    .Attr("element_dtype: type")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListPopBack")
                                    .Input("input_handle: variant")
                                    .Input("element_shape: int32")
                                    .Output("output_handle: variant")
                                    .Output("tensor: element_dtype")
                                    .Attr("element_dtype: type")
                                    .SetShapeFn(ElementFromInput(1, 1, false))));
  RETURN_IF_ERROR(ops->Register(op("TensorListLength")
                                    .Input("input_handle: variant")
                                    .Output("length: int32")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListElementShape")
                                    .Input("input_handle: variant")
                                    .Output("element_shape: shape_type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(UnknownVector)));
  RETURN_IF_ERROR(ops->Register(op("TensorListGetItem")
                                    .Input("input_handle: variant")
                                    .Input("index: int32")
                                    .Input("element_shape: Tshape")
                                    .Output("item: element_dtype")
                                    .Attr("element_dtype: type")
                                    .Attr("Tshape: {int32, int64} = DT_INT32")
                                    .SetShapeFn(ElementFromInput(2, 0, false))));
  RETURN_IF_ERROR(ops->Register(op("TensorListSetItem")
                                    .Input("input_handle: variant")
                                    .Input("index: int32")
                                    .Input("item: element_dtype")
                                    .Output("output_handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("resize_if_index_out_of_bounds: bool = false")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListResize")
                                    .Input("input_handle: variant")
                                    .Input("size: int32")
                                    .Output("output_handle: variant")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListStack")
                                    .Input("input_handle: variant")
                                    .Input("element_shape: int32")
                                    .Output("tensor: element_dtype")
                                    .Attr("element_dtype: type")
                                    .Attr("num_elements: int = -1")
                                    .SetShapeFn(ElementFromInput(1, 0, true))));
  RETURN_IF_ERROR(ops->Register(op("TensorListGather")
                                    .Input("input_handle: variant")
                                    .Input("indices: int32")
                                    .Input("element_shape: int32")
                                    .Output("values: element_dtype")
                                    .Attr("element_dtype: type")
                                    .SetShapeFn(ElementFromInput(2, 0, true))));
  RETURN_IF_ERROR(ops->Register(op("TensorListScatter")
                                    .Input("tensor: element_dtype")
                                    .Input("indices: int32")
                                    .Input("element_shape: shape_type")
                                    .Output("output_handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(ScalarOutputs)));
  RETURN_IF_ERROR(ops->Register(op("TensorListScatterV2")
                                    .Input("tensor: element_dtype")
                                    .Input("indices: int32")
                                    .Input("element_shape: shape_type")
                                    .Input("num_elements: int32")
                                    .Output("output_handle: variant")
                                    .Attr("element_dtype: type")
                                    .Attr("shape_type: {int32, int64}")
                                    .SetShapeFn(ScalarOutputs)));
  return ops->Register(op("TensorListScatterIntoExistingList")
                           .Input("input_handle: variant")
                           .Input("tensor: element_dtype")
                           .Input("indices: int32")
                           .Output("output_handle: variant")
                           .Attr("element_dtype: type")
                           .SetShapeFn(ScalarOutputs));
}

}  // namespace sluice
