// TensorList: TensorFlow 2's list of tensors, the value of the DT_VARIANT
// scalars that the TensorList* ops (tensor_list_ops.h) pass along: what
// TF2's tf.TensorArray is made of, and the accumulators of a while_v2 loop's
// gradient.
//
//   auto list = std::make_shared<TensorList>(DT_FLOAT, TensorShape({2}));
//   list->tensors.push_back(x);
//   Tensor handle = TensorListHandle(std::move(list));
//   ASSIGN_OR_RETURN(const TensorList* l, GetTensorList(handle, "TensorListLength"));
//
// A list in a tensor is immutable (Variant): an op that changes a list makes
// a new one, which shares the element buffers of the old. An element not
// set yet (TensorListReserve) is an uninitialized Tensor; reading it gives
// zeros of the element shape (UnsetElementShape), which must then be known.
//
// Errors are InvalidArgument naming the op. Thread-safe once shared.
#ifndef SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_H_
#define SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/tensor.h"
#include "runtime/variant.h"

namespace sluice {

struct TensorList : VariantValue {
  TensorList(DataType dtype, TensorShape shape)
      : element_dtype(dtype), element_shape(std::move(shape)) {}

  std::string TypeName() const override { return "TensorList"; }
  std::string DebugString() const override;

  DataType element_dtype;
  TensorShape element_shape;  // may be partly or wholly unknown
  int64_t max_num_elements = -1;  // -1: no limit
  std::vector<Tensor> tensors;
};

// A DT_VARIANT scalar holding `list`.
Tensor TensorListHandle(std::shared_ptr<const TensorList> list);

// The list `handle` holds; InvalidArgument naming `op` for anything else.
absl::StatusOr<const TensorList*> GetTensorList(const Tensor& handle, absl::string_view op);

// A shape given as a tensor, as the list ops take it: an int32 or int64
// vector whose -1 entries are unknown dimensions, or the scalar -1 for an
// unknown rank.
absl::StatusOr<TensorShape> ShapeFromTensor(const Tensor& shape, absl::string_view op);
// The other way, in `dtype` (int32 or int64).
Tensor ShapeToTensor(const TensorShape& shape, DataType dtype);

// Element `index` of `list` (InvalidArgument outside the list): an
// uninitialized Tensor when it was never set.
absl::StatusOr<const Tensor*> ElementAt(const TensorList& list, int64_t index,
                                        absl::string_view op);

// The shape an element never set reads as zeros of: the list's element
// shape merged with `hint` and, while that is not fully defined, with the
// shapes of the elements that are set; InvalidArgument when it stays open
// (or the shapes disagree).
absl::StatusOr<TensorShape> UnsetElementShape(const TensorList& list, int64_t index,
                                              const TensorShape& hint, absl::string_view op);

// InvalidArgument unless `t` fits `list` (its dtype, and a shape compatible
// with the element shape).
absl::Status CheckElement(const TensorList& list, const Tensor& t, absl::string_view op);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_TENSOR_LIST_H_
