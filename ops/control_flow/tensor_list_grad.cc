// Gradients of the list ops (TensorFlow's list_ops.py): the gradient of a
// list is a list of the gradients of its elements, and each op's gradient
// is its mirror image on that list: a push's is a pop, a read's a write, a
// stack's an unstack, a gather's a scatter, and the other way round.
#include <vector>

#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/control_flow/control_flow_gradients.h"
#include "ops/internal/grad_util.h"

namespace sluice {
namespace {

using internal::InputOf;
using internal::OutputOf;
using Grads = std::vector<Output>;
using GradResult = absl::StatusOr<Grads>;

DataType ElementType(const Node& node) {
  absl::StatusOr<DataType> t = node.GetAttr<DataType>("element_dtype");
  return t.ok() ? *t : DT_INVALID;
}

// The shape of `x` (int32).
Output ShapeOf(const Scope& s, const Output& x) {
  return s.Op("Shape").Input(x).Attr("out_type", DT_INT32).Finalize1();
}

// The shape of one row of `x` (its shape less the first dimension).
Output RowShapeOf(const Scope& s, const Output& x) {
  return s.Op("Slice").Input(ShapeOf(s, x)).Input(ops::Const(s, std::vector<int32_t>{1})).Input(ops::Const(s, std::vector<int32_t>{-1}))
      .Finalize1();
}

// A list as long as `like` of elements not set: where gradients go.
Output EmptyLike(const Scope& s, const Output& like, DataType dtype) {
  Output shape = s.Op("TensorListElementShape").Input(like).Attr("shape_type", DT_INT32)
                     .Finalize1();
  Output length = s.Op("TensorListLength").Input(like).Finalize1();
  return s.Op("TensorListReserve").Input(shape).Input(length).Attr("element_dtype", dtype)
      .Finalize1();
}

// input_handle, tensor -> output_handle.
GradResult PushBackGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  std::vector<Output> popped = s.Op("TensorListPopBack")
                                   .Input(dy[0])
                                   .Input(ShapeOf(s, InputOf(node, 1)))
                                   .Attr("element_dtype", ElementType(node))
                                   .FinalizeAll();
  grads[0] = popped[0];
  grads[1] = popped[1];
  return grads;
}

// input_handle, element_shape -> output_handle, tensor.
GradResult PopBackGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid() && !dy[1].valid()) return grads;
  const DataType dtype = ElementType(node);
  Output dlist = dy[0];
  if (!dlist.valid()) {
    Output shape = s.Op("TensorListElementShape").Input(OutputOf(node, 0))
                       .Attr("shape_type", DT_INT32).Finalize1();
    dlist = s.Op("EmptyTensorList").Input(shape).Input(ops::Const(s, int32_t{-1}))
                .Attr("element_dtype", dtype).Finalize1();
  }
  Output dvalue = dy[1].valid() ? dy[1] : s.Op("ZerosLike").Input(OutputOf(node, 1)).Finalize1();
  grads[0] = s.Op("TensorListPushBack").Input(dlist).Input(dvalue).Attr("element_dtype", dtype)
                 .Finalize1();
  return grads;
}

// input_handle, index, element_shape -> item.
GradResult GetItemGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  const DataType dtype = ElementType(node);
  grads[0] = s.Op("TensorListSetItem")
                 .Input(EmptyLike(s, InputOf(node, 0), dtype))
                 .Input(InputOf(node, 1))
                 .Input(dy[0])
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  return grads;
}

// input_handle, index, item -> output_handle.
GradResult SetItemGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  const DataType dtype = ElementType(node);
  const Output item = InputOf(node, 2);
  grads[2] = s.Op("TensorListGetItem")
                 .Input(dy[0])
                 .Input(InputOf(node, 1))
                 .Input(ShapeOf(s, item))
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  grads[0] = s.Op("TensorListSetItem")
                 .Input(dy[0])
                 .Input(InputOf(node, 1))
                 .Input(s.Op("ZerosLike").Input(item).Finalize1())
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  absl::StatusOr<bool> resized = node.GetAttr<bool>("resize_if_index_out_of_bounds");
  if (resized.ok() && *resized) {  // the set may have grown the list: back to the input's length
    grads[0] = s.Op("TensorListResize")
                   .Input(grads[0])
                   .Input(s.Op("TensorListLength").Input(InputOf(node, 0)).Finalize1())
                   .Finalize1();
  }
  return grads;
}

// input_handle, element_shape -> tensor.
GradResult StackGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  grads[0] = s.Op("TensorListFromTensor")
                 .Input(dy[0])
                 .Input(RowShapeOf(s, dy[0]))
                 .Attr("element_dtype", ElementType(node))
                 .Finalize1();
  return grads;
}

// tensor, element_shape -> output_handle.
GradResult FromTensorGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  grads[0] = s.Op("TensorListStack")
                 .Input(dy[0])
                 .Input(RowShapeOf(s, InputOf(node, 0)))
                 .Attr("element_dtype", ElementType(node))
                 .Finalize1();
  return grads;
}

// input_handle, indices, element_shape -> values.
GradResult GatherGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  const DataType dtype = ElementType(node);
  grads[0] = s.Op("TensorListScatterIntoExistingList")
                 .Input(EmptyLike(s, InputOf(node, 0), dtype))
                 .Input(dy[0])
                 .Input(InputOf(node, 1))
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  return grads;
}

// tensor, indices, element_shape[, num_elements] -> output_handle.
GradResult ScatterGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(node.num_inputs());
  if (!dy[0].valid()) return grads;
  grads[0] = s.Op("TensorListGather")
                 .Input(dy[0])
                 .Input(InputOf(node, 1))
                 .Input(RowShapeOf(s, InputOf(node, 0)))
                 .Attr("element_dtype", ElementType(node))
                 .Finalize1();
  return grads;
}

// input_handle, tensor, indices -> output_handle.
GradResult ScatterIntoExistingListGrad(const Scope& s, const Node& node,
                                       absl::Span<const Output> dy) {
  Grads grads(3);
  if (!dy[0].valid()) return grads;
  const DataType dtype = ElementType(node);
  const Output tensor = InputOf(node, 1);
  grads[1] = s.Op("TensorListGather")
                 .Input(dy[0])
                 .Input(InputOf(node, 2))
                 .Input(RowShapeOf(s, tensor))
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  grads[0] = s.Op("TensorListScatterIntoExistingList")
                 .Input(dy[0])
                 .Input(s.Op("ZerosLike").Input(tensor).Finalize1())
                 .Input(InputOf(node, 2))
                 .Attr("element_dtype", dtype)
                 .Finalize1();
  return grads;
}

// input_handle, size -> output_handle: back to the input's length.
GradResult ResizeGrad(const Scope& s, const Node& node, absl::Span<const Output> dy) {
  Grads grads(2);
  if (!dy[0].valid()) return grads;
  grads[0] = s.Op("TensorListResize")
                 .Input(dy[0])
                 .Input(s.Op("TensorListLength").Input(InputOf(node, 0)).Finalize1())
                 .Finalize1();
  return grads;
}

}  // namespace

absl::Status RegisterTensorListGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("TensorListPushBack", PushBackGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListPopBack", PopBackGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListGetItem", GetItemGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListSetItem", SetItemGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListStack", StackGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListFromTensor", FromTensorGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListGather", GatherGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListScatter", ScatterGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListScatterV2", ScatterGrad));
  RETURN_IF_ERROR(
      ops->SetGradient("TensorListScatterIntoExistingList", ScatterIntoExistingListGrad));
  RETURN_IF_ERROR(ops->SetGradient("TensorListResize", ResizeGrad));
  for (const char* op : {"EmptyTensorList", "TensorListReserve", "TensorListLength",
                         "TensorListElementShape"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

}  // namespace sluice
