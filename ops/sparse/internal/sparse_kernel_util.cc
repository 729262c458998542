#include "ops/sparse/internal/sparse_kernel_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ops/internal/array_util.h"

namespace sluice {
namespace internal {

void CopyElement(const Tensor& src, int64_t i, Tensor* dst, int64_t j) {
  if (src.dtype() == DT_STRING) {
    dst->data<std::string>()[j] = src.data<std::string>()[i];
    return;
  }
  const size_t size = static_cast<size_t>(DataTypeSize(src.dtype()));
  std::memcpy(static_cast<char*>(dst->raw_data()) + j * size,
              static_cast<const char*>(src.raw_data()) + i * size, size);
}

absl::Status CheckMatrix(const Tensor& t, const char* what) {
  if (t.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a matrix, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status CheckVector(const Tensor& t, const char* what) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a vector, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

std::string Ints(const int64_t* v, size_t n) {
  return internal::IntsDebugString(absl::MakeConstSpan(v, n));
}

int CompareRows(const int64_t* idx, int64_t rank, int64_t a, int64_t b) {
  for (int64_t d = 0; d < rank; ++d) {
    if (idx[a * rank + d] != idx[b * rank + d]) return idx[a * rank + d] < idx[b * rank + d] ? -1 : 1;
  }
  return 0;
}

std::string RowKey(const int64_t* idx, int64_t rank, int64_t i) {
  return std::string(reinterpret_cast<const char*>(idx + i * rank),
                     static_cast<size_t>(rank) * sizeof(int64_t));
}

double RealScalar(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT: return t.data<float>()[0];
    case DT_DOUBLE: return t.data<double>()[0];
    case DT_INT32: return t.data<int32_t>()[0];
    case DT_INT64: return static_cast<double>(t.data<int64_t>()[0]);
    default: return 0;
  }
}

}  // namespace internal
}  // namespace sluice
