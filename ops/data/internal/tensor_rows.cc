#include "ops/data/internal/tensor_rows.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace data {
namespace internal {
namespace {

// Copies n elements from src[from] to dst[to].
void CopyElements(const Tensor& src, int64_t from, const Tensor& dst, int64_t to, int64_t n) {
  if (n <= 0) return;
  if (HoldsStrings(src.dtype())) {
    const std::string* s = src.data<std::string>() + from;
    std::string* d = dst.data<std::string>() + to;
    for (int64_t k = 0; k < n; ++k) d[k] = s[k];
  } else if (HoldsVariants(src.dtype())) {
    const Variant* s = src.data<Variant>() + from;
    Variant* d = dst.data<Variant>() + to;
    for (int64_t k = 0; k < n; ++k) d[k] = s[k];
  } else {
    const size_t bytes = ElementBytes(src.dtype());
    std::memcpy(static_cast<char*>(dst.raw_data()) + to * bytes,
                static_cast<const char*>(src.raw_data()) + from * bytes, n * bytes);
  }
}

}  // namespace

TensorShape RowShape(const TensorShape& shape) {
  if (shape.unknown_rank() || shape.rank() == 0) return TensorShape::Unknown();
  std::vector<int64_t> dims;
  for (int d = 1; d < shape.rank(); ++d) dims.push_back(shape.dim(d));
  return TensorShape(dims);
}

TensorShape BatchShape(int64_t n, const TensorShape& shape) {
  if (shape.unknown_rank()) return TensorShape::Unknown();
  std::vector<int64_t> dims = {n};
  for (int d = 0; d < shape.rank(); ++d) dims.push_back(shape.dim(d));
  return TensorShape(dims);
}

absl::StatusOr<Tensor> Row(const Tensor& t, int64_t i, Allocator* allocator) {
  if (t.dims() == 0 || i < 0 || i >= t.dim_size(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("row ", i, " of a tensor of shape ", t.shape().DebugString()));
  }
  absl::StatusOr<Tensor> row = Tensor::Allocate(allocator, t.dtype(), RowShape(t.shape()));
  if (!row.ok()) return row.status();
  const int64_t n = row->NumElements();
  CopyElements(t, i * n, *row, 0, n);
  return row;
}

absl::Status CopyIntoRow(const Tensor& element, Tensor* batch, int64_t i) {
  const int64_t n = element.NumElements();
  if (batch->dims() == 0 || batch->dim_size(0) <= i || batch->NumElements() / batch->dim_size(0) != n ||
      element.dtype() != batch->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot copy ", element.DebugString(0),
                                                   " into row ", i, " of ",
                                                   batch->DebugString(0)));
  }
  CopyElements(element, 0, *batch, i * n, n);
  return absl::OkStatus();
}

absl::Status CopyIntoPaddedRow(const Tensor& element, Tensor* batch, int64_t i) {
  const TensorShape row = RowShape(batch->shape());
  if (element.dims() != row.rank() || element.dtype() != batch->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot pad ", element.DebugString(0),
                                                   " into a row of ", batch->DebugString(0)));
  }
  for (int d = 0; d < row.rank(); ++d) {
    if (element.dim_size(d) > row.dim(d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot pad an element of shape ", element.shape().DebugString(), " to ",
          row.DebugString(), ": dim ", d, " is larger"));
    }
  }
  const int64_t row_elems = row.num_elements();
  if (element.NumElements() == 0) return absl::OkStatus();
  if (element.dims() == 0) {
    CopyElements(element, 0, *batch, i * row_elems, 1);
    return absl::OkStatus();
  }
  // Copy the innermost runs: one per index of the outer dims.
  const int r = element.dims();
  const int64_t run = element.dim_size(r - 1);
  const int64_t runs = element.NumElements() / run;
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < runs; ++k) {
    int64_t dst = 0;
    for (int d = 0; d < r - 1; ++d) dst = dst * row.dim(d) + idx[d];
    dst = dst * row.dim(r - 1);
    CopyElements(element, k * run, *batch, i * row_elems + dst, run);
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < element.dim_size(d)) break;
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status FillWith(const Tensor& value, Tensor* t) {
  if (value.NumElements() != 1 || value.dtype() != t->dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding value ", value.DebugString(1), " is not a scalar of ",
                     DataTypeName(t->dtype())));
  }
  const int64_t n = t->NumElements();
  if (HoldsStrings(t->dtype())) {
    for (int64_t k = 0; k < n; ++k) t->data<std::string>()[k] = value.scalar<std::string>();
  } else if (HoldsVariants(t->dtype())) {
    for (int64_t k = 0; k < n; ++k) t->data<Variant>()[k] = value.scalar<Variant>();
  } else {
    const size_t bytes = ElementBytes(t->dtype());
    char* d = static_cast<char*>(t->raw_data());
    bool zero = true;
    for (size_t b = 0; b < bytes; ++b) zero &= static_cast<const char*>(value.raw_data())[b] == 0;
    if (zero) {
      std::memset(d, 0, n * bytes);
    } else {
      for (int64_t k = 0; k < n; ++k) std::memcpy(d + k * bytes, value.raw_data(), bytes);
    }
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace data
}  // namespace sluice
