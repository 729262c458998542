// SparseGradientAccumulator: the resource behind the SparseAccumulator* ops
// (ops/data_flow/data_flow_ops.h), TensorFlow's SparseConditionalAccumulator:
// sums the IndexedSlices gradients workers apply for the current global step
// (an embedding table's touched rows) and hands the chief their average
// (StepAccumulator, step_accumulator.h, says how steps and takes work).
//
//   SparseGradientAccumulator acc("emb/grad_accum", DT_FLOAT, TensorShape({1000, 8}), timer);
//   RETURN_IF_ERROR(acc.Apply(0, indices, values, dense_shape));  // int64 [n], [n, 8], [2]
//   acc.Take(2, timeout, [](absl::StatusOr<SparseGradient> avg) { ... });
//
// The average is TensorFlow's: each row's sum divided by the number of
// gradients that held that row (a row one worker touched is not halved).
// Repeated indices within one gradient are summed. The result's indices are
// sorted and distinct; only touched rows are held, never the whole table.
//
// Apply: InvalidArgument, naming the accumulator, for values of another
// dtype, indices that are not a vector or disagree with values' first
// dimension, a dense shape that does not fit the declared shape or this
// step's earlier ones, a row shape that differs, or an index outside
// [0, dense_shape[0]).
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_SPARSE_GRADIENT_ACCUMULATOR_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_SPARSE_GRADIENT_ACCUMULATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ops/data_flow/internal/step_accumulator.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

struct SparseGradient {
  Tensor indices;      // int64 [n], sorted, distinct
  Tensor values;       // dtype [n, row...]
  Tensor dense_shape;  // int64 [rank]
};

class SparseGradientSum {
 public:
  struct Partial {
    SparseGradient sum;
    std::vector<int> counts;  // per row (sorted): the gradients that held it
  };
  using Result = SparseGradient;
  static constexpr char kKind[] = "SparseGradientAccumulator";

  SparseGradientSum(DataType dtype, TensorShape shape) : dtype_(dtype), shape_(std::move(shape)) {}

  absl::Status Add(const std::string& accumulator, const Tensor& indices, const Tensor& values,
                   const Tensor& dense_shape);
  Partial Release();
  void Clear();
  static absl::StatusOr<SparseGradient> Average(Partial sum, int count);

 private:
  const DataType dtype_;
  const TensorShape shape_;
  std::vector<int64_t> dense_shape_;  // empty while nothing is summed
  int64_t row_elems_ = 0;
  absl::flat_hash_map<int64_t, int64_t> slot_of_row_;
  std::vector<int64_t> rows_;       // by slot
  std::vector<double> sums_;        // by slot, row_elems_ each
  std::vector<int> counts_;         // by slot
  std::vector<int64_t> last_seen_;  // by slot: the gradient that last counted it
  int64_t gradients_ = 0;
};

using SparseGradientAccumulator = StepAccumulator<SparseGradientSum>;

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_SPARSE_GRADIENT_ACCUMULATOR_H_
