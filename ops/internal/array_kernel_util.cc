// Index-tensor reading and writing for the array kernels (see array_kernel_util.h).
#include "ops/internal/array_kernel_util.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace sluice {
namespace internal {

const std::vector<DataType>& AllTypes() {
  static const auto* types =
      new std::vector<DataType>{DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8,   DT_INT8,
                                DT_INT16, DT_UINT16, DT_BOOL,  DT_HALF,  DT_BFLOAT16};
  return *types;
}

absl::StatusOr<std::vector<int64_t>> ReadInts(const Tensor& t, absl::string_view what) {
  std::vector<int64_t> v(t.NumElements());
  if (t.dtype() == DT_INT32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else if (t.dtype() == DT_INT64) {
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be int32 or int64, got ", DataTypeName(t.dtype())));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> ReadVector(const Tensor& t, absl::string_view what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector, got shape ", t.shape().DebugString()));
  }
  return ReadInts(t, what);
}

absl::StatusOr<int64_t> ReadScalar(const Tensor& t, absl::string_view what) {
  if (t.NumElements() != 1 || t.dims() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(t, what));
  return v[0];
}

absl::Status WriteInts(absl::Span<const int64_t> values, Tensor* t) {
  if (t->dtype() == DT_INT64) {
    std::copy(values.begin(), values.end(), t->data<int64_t>());
    return absl::OkStatus();
  }
  int32_t* p = t->data<int32_t>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > INT32_MAX || values[i] < INT32_MIN) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", values[i], " does not fit in int32; use out_type int64"));
    }
    p[i] = static_cast<int32_t>(values[i]);
  }
  return absl::OkStatus();
}

int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

}  // namespace internal
}  // namespace sluice
