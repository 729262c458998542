// Index tensors of the array kernels (see index_tensors.h).
#include "ops/internal/index_tensors.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/types.h"

namespace sluice {
namespace internal {

absl::StatusOr<std::vector<int64_t>> ReadInts(const Tensor& t, absl::string_view what) {
  if (t.on_device()) {
    return absl::InternalError(
        absl::StrCat(what, " is in device memory; the kernel must declare it HostMemory"));
  }
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
  if (t->on_device()) {
    return absl::InternalError("an index output is in device memory; it must be HostMemory");
  }
  if (t->dtype() == DT_INT64) {
    int64_t* p = t->data<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
    return absl::OkStatus();
  }
  if (t->dtype() != DT_INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat("index output must be int32 or int64, got ", DataTypeName(t->dtype())));
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

}  // namespace internal
}  // namespace sluice
