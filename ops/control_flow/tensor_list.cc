#include "ops/control_flow/tensor_list.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

std::string TensorList::DebugString() const {
  return absl::StrCat("TensorList of ", tensors.size(), " ", DataTypeName(element_dtype), " ",
                      element_shape.DebugString());
}

Tensor TensorListHandle(std::shared_ptr<const TensorList> list) {
  Tensor t(::tensorflow::DT_VARIANT, TensorShape());
  t.scalar<Variant>() = Variant(std::move(list));
  return t;
}

absl::StatusOr<const TensorList*> GetTensorList(const Tensor& handle, absl::string_view op) {
  if (handle.dtype() != ::tensorflow::DT_VARIANT || handle.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the list handle must be a variant scalar, got ",
                                                   DataTypeName(handle.dtype()), " ",
                                                   handle.shape().DebugString()));
  }
  const Variant& v = handle.flat<Variant>()[0];
  const TensorList* list = v.get<TensorList>();
  if (list == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": expected a TensorList, got ", v.TypeName()));
  }
  return list;
}

absl::StatusOr<TensorShape> ShapeFromTensor(const Tensor& shape, absl::string_view op) {
  const DataType t = shape.dtype();
  if (t != DT_INT32 && t != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": an element shape must be int32 or int64, got ", DataTypeName(t)));
  }
  auto at = [&](int64_t i) {
    return t == DT_INT32 ? int64_t{shape.data<int32_t>()[i]} : shape.data<int64_t>()[i];
  };
  if (shape.dims() == 0) {
    if (at(0) != -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": a scalar element shape must be -1 (unknown rank), got ", at(0)));
    }
    return TensorShape::Unknown();
  }
  if (shape.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": an element shape must be a vector, got ",
                                                   shape.shape().DebugString()));
  }
  TensorShape out = TensorShape::UnknownOfRank(shape.NumElements());
  for (int64_t i = 0; i < shape.NumElements(); ++i) {
    if (at(i) < -1) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": dimension ", i, " of an element shape is ",
                                                     at(i)));
    }
    out.set_dim(static_cast<int>(i), at(i));
  }
  return out;
}

Tensor ShapeToTensor(const TensorShape& shape, DataType dtype) {
  if (shape.unknown_rank()) {
    return dtype == DT_INT32 ? Tensor::Scalar<int32_t>(-1) : Tensor::Scalar<int64_t>(-1);
  }
  if (dtype == DT_INT32) {
    std::vector<int32_t> dims(shape.dims().begin(), shape.dims().end());
    return Tensor::FromVector<int32_t>(dims, TensorShape({shape.rank()}));
  }
  return Tensor::FromVector<int64_t>(shape.dims(), TensorShape({shape.rank()}));
}

absl::StatusOr<const Tensor*> ElementAt(const TensorList& list, int64_t index,
                                        absl::string_view op) {
  if (index < 0 || index >= static_cast<int64_t>(list.tensors.size())) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": index ", index, " is outside a list of ",
                                                   list.tensors.size(), " elements"));
  }
  return &list.tensors[index];
}

absl::StatusOr<TensorShape> UnsetElementShape(const TensorList& list, int64_t index,
                                              const TensorShape& hint, absl::string_view op) {
  absl::StatusOr<TensorShape> shape = list.element_shape.Merge(hint);
  // Still open: the elements that are set say it, as in TensorFlow.
  for (size_t i = 0; shape.ok() && !shape->IsFullyDefined() && i < list.tensors.size(); ++i) {
    if (list.tensors[i].IsInitialized()) shape = shape->Merge(list.tensors[i].shape());
  }
  if (!shape.ok() || !shape->IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": element ", index, " was never set and its shape is not known (the list's is ",
        list.element_shape.DebugString(), ", the op's ", hint.DebugString(), ")"));
  }
  return *shape;
}

absl::Status CheckElement(const TensorList& list, const Tensor& t, absl::string_view op) {
  if (t.dtype() != list.element_dtype) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the list holds ",
                                                   DataTypeName(list.element_dtype), ", not ",
                                                   DataTypeName(t.dtype())));
  }
  if (!list.element_shape.IsCompatibleWith(t.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": an element of shape ",
                                                   t.shape().DebugString(),
                                                   " does not fit the list's element shape ",
                                                   list.element_shape.DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace sluice
