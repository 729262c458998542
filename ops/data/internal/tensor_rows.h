// Rows of tensors, for datasets that slice (TensorSliceDataset, unbatching)
// and stack (BatchDatasetV2, PaddedBatchDatasetV2): plain dtypes move by
// memcpy, strings and variants element by element.
//
//   Tensor row = *Row(t, 3, allocator);                  // t[3]
//   Tensor batch = ...;  CopyIntoRow(row, &batch, 0);    // batch[0] = row
//
// Thread-compatible. Errors: InvalidArgument when the sizes do not fit.
#ifndef SLUICE_OPS_DATA_INTERNAL_TENSOR_ROWS_H_
#define SLUICE_OPS_DATA_INTERNAL_TENSOR_ROWS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {
namespace data {
namespace internal {

// The shape of one row of `shape` (its first dim dropped).
TensorShape RowShape(const TensorShape& shape);
// `shape` with `n` prepended.
TensorShape BatchShape(int64_t n, const TensorShape& shape);

// A new tensor holding row `i` of `t` (rank >= 1).
absl::StatusOr<Tensor> Row(const Tensor& t, int64_t i, Allocator* allocator);
// Copies `element` (its NumElements() == a row of `batch`) into row `i`.
absl::Status CopyIntoRow(const Tensor& element, Tensor* batch, int64_t i);
// Copies `element` into row `i` of `batch`, whose rows are at least as large
// in every dim (PaddedBatch): the rest of the row keeps what it holds.
absl::Status CopyIntoPaddedRow(const Tensor& element, Tensor* batch, int64_t i);
// Sets every element of `t` to the scalar `value`.
absl::Status FillWith(const Tensor& value, Tensor* t);

}  // namespace internal
}  // namespace data
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_INTERNAL_TENSOR_ROWS_H_
