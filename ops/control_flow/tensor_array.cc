#include "ops/control_flow/tensor_array.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/device.h"

namespace sluice {
namespace {

Tensor Zeros(DataType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  if (!HoldsStrings(dtype) && t.NumElements() > 0) {
    std::memset(t.raw_data(), 0, static_cast<size_t>(t.NumElements()) * DataTypeSize(dtype));
  }
  return t;
}

template <typename T>
void AddInto(const Tensor& from, Tensor* to) {
  absl::Span<T> dst = to->flat<T>();
  absl::Span<const T> src = from.flat<T>();
  for (size_t i = 0; i < dst.size(); ++i) dst[i] += src[i];
}

}  // namespace

absl::StatusOr<Tensor> SumOnHost(const Tensor& a, const Tensor& b, absl::string_view what) {
  Tensor out(a.dtype(), a.shape());
  CopyRows(a, 0, &out, 0, 1, a.NumElements());
  switch (a.dtype()) {
    case DT_FLOAT: AddInto<float>(b, &out); break;
    case DT_DOUBLE: AddInto<double>(b, &out); break;
    case DT_INT32: AddInto<int32_t>(b, &out); break;
    case DT_INT64: AddInto<int64_t>(b, &out); break;
    default:
      return absl::UnimplementedError(absl::StrCat(what, DataTypeName(a.dtype())));
  }
  return out;
}

void CopyRows(const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row, int64_t rows,
              int64_t row_elements) {
  const int64_t n = rows * row_elements;
  if (n == 0) return;
  if (HoldsStrings(src.dtype())) {
    const std::string* from = src.data<std::string>() + src_row * row_elements;
    std::string* to = dst->data<std::string>() + dst_row * row_elements;
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
    return;
  }
  if (HoldsVariants(src.dtype())) {  // objects: a list of lists
    const Variant* from = src.data<Variant>() + src_row * row_elements;
    Variant* to = dst->data<Variant>() + dst_row * row_elements;
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
    return;
  }
  const size_t size = DataTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + dst_row * row_elements * size,
              static_cast<const char*>(src.raw_data()) + src_row * row_elements * size, n * size);
}

TensorArray::TensorArray(std::string name, Options options, std::vector<TensorShape> shapes)
    : name_(std::move(name)), options_(std::move(options)) {
  elements_.resize(static_cast<size_t>(options_.size));
  for (size_t i = 0; i < shapes.size() && i < elements_.size(); ++i) {
    elements_[i].shape = std::move(shapes[i]);
  }
  element_shape_ = options_.element_shape;
}

std::string TensorArray::DebugString() const { return absl::StrCat("TensorArray '", name_, "'"); }

absl::Status TensorArray::CheckOpen() const {
  if (closed_) return absl::InvalidArgumentError(absl::StrCat(DebugString(), " has already been closed"));
  return absl::OkStatus();
}

absl::Status TensorArray::Write(int64_t index, const Tensor& value) {
  absl::MutexLock lock(&mu_);
  return WriteLocked(index, value);
}

absl::Status TensorArray::WriteMany(absl::Span<const int64_t> indices,
                                    absl::Span<const Tensor> values) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < indices.size(); ++i) RETURN_IF_ERROR(WriteLocked(indices[i], values[i]));
  return absl::OkStatus();
}

absl::Status TensorArray::WriteLocked(int64_t index, const Tensor& value) {
  RETURN_IF_ERROR(CheckOpen());
  if (value.dtype() != options_.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(DebugString(), " holds ",
                                                   DataTypeName(options_.dtype),
                                                   " but the op writes ", DataTypeName(value.dtype())));
  }
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tried to write to index ", index, " of ", DebugString()));
  }
  if (index >= static_cast<int64_t>(elements_.size())) {
    if (!options_.dynamic_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tried to write to index ", index, " but ", DebugString(),
                       " is not resizeable and its size is: ", elements_.size()));
    }
    elements_.resize(static_cast<size_t>(index) + 1);
  }
  if (!element_shape_.IsCompatibleWith(value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Could not write to ", DebugString(), " index ", index, " because the value shape is ",
        value.shape().DebugString(), " which is incompatible with the element shape ",
        element_shape_.DebugString()));
  }
  if (options_.identical_element_shapes) {
    ASSIGN_OR_RETURN(element_shape_, element_shape_.Merge(value.shape()));
  }
  Element& e = elements_[static_cast<size_t>(index)];
  if (e.read) {
    return absl::InvalidArgumentError(absl::StrCat("Could not write to ", DebugString(), " index ",
                                                   index, " because it has already been read"));
  }
  if (e.written) {
    if (!options_.multiple_writes_aggregate) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not write to ", DebugString(), " index ", index,
          " because it has already been written to"));
    }
    if (e.value.shape() != value.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not aggregate to ", DebugString(), " index ", index, " because the existing shape is ",
          e.value.shape().DebugString(), " but the new input shape is ", value.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(e.value, AddWrites(e.value, value));
    return absl::OkStatus();
  }
  e.value = value;
  e.shape = value.shape();
  e.written = true;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorArray::Read(int64_t index) {
  absl::MutexLock lock(&mu_);
  return ReadLocked(index);
}

absl::StatusOr<std::vector<Tensor>> TensorArray::ReadMany(absl::Span<const int64_t> indices) {
  absl::MutexLock lock(&mu_);
  std::vector<Tensor> out;
  out.reserve(indices.size());
  for (int64_t i : indices) {
    ASSIGN_OR_RETURN(Tensor t, ReadLocked(i));
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<Tensor> TensorArray::ReadLocked(int64_t index) {
  RETURN_IF_ERROR(CheckOpen());
  if (index < 0 || index >= static_cast<int64_t>(elements_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("Tried to read from index ", index, " of ",
                                                   DebugString(), " but its size is: ",
                                                   elements_.size()));
  }
  Element& e = elements_[static_cast<size_t>(index)];
  if (e.cleared) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Could not read ", DebugString(), " index ", index,
        " twice because it was cleared after a previous read (perhaps try setting "
        "clear_after_read = false?)"));
  }
  Tensor value;
  if (e.written) {
    value = e.value;
  } else if (e.shape.IsFullyDefined()) {
    ASSIGN_OR_RETURN(value, MakeZeros(e.shape));
  } else if (element_shape_.IsFullyDefined()) {
    ASSIGN_OR_RETURN(value, MakeZeros(element_shape_));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "Could not read from ", DebugString(), " index ", index,
        ": it was never written and the element shape ", element_shape_.DebugString(),
        " is not fully defined (with a full element shape, an unwritten element reads as zeros)"));
  }
  e.read = true;
  if (options_.clear_after_read) {
    e.value = Tensor();
    e.cleared = true;
  }
  return value;
}

absl::StatusOr<Tensor> TensorArray::AddWrites(const Tensor& a, const Tensor& b) const {
  const TensorArrayDeviceOps* ops = options_.device_ops;
  if (ops == nullptr) return SumOnHost(a, b, "TensorArray: adding gradients of ");
  if (ops->add == nullptr) {
    return absl::UnimplementedError(absl::StrCat("Could not add two writes to one index of ",
                                                 DebugString(), ": ", options_.device->name(),
                                                 " has no addition for TensorArrays"));
  }
  ASSIGN_OR_RETURN(Tensor sum, Tensor::Allocate(options_.device->allocator(), a.dtype(), a.shape()));
  absl::Status added = ops->add(options_.device, a, b, &sum);
  if (!added.ok()) {
    return absl::Status(added.code(), absl::StrCat("Could not add two writes to one index of ",
                                                   DebugString(), ": ", added.message()));
  }
  return sum;
}

absl::StatusOr<Tensor> TensorArray::MakeZeros(const TensorShape& shape) const {
  if (options_.device_ops == nullptr) return Zeros(options_.dtype, shape);
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(options_.device->allocator(), options_.dtype, shape));
  RETURN_IF_ERROR(options_.device_ops->zero(options_.device, &t));
  return t;
}

absl::StatusOr<int64_t> TensorArray::Size() const {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpen());
  return static_cast<int64_t>(elements_.size());
}

absl::StatusOr<TensorShape> TensorArray::ElementShape() const {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpen());
  return element_shape_;
}

absl::StatusOr<TensorArray::GradientSpec> TensorArray::Gradient() const {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckOpen());
  GradientSpec g;
  g.options = options_;
  g.options.size = static_cast<int64_t>(elements_.size());
  g.options.element_shape = element_shape_;
  g.options.dynamic_size = false;
  g.options.multiple_writes_aggregate = true;
  g.options.clear_after_read = true;
  for (const Element& e : elements_) g.shapes.push_back(e.shape);
  return g;
}

void TensorArray::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  elements_.clear();
}

}  // namespace sluice
