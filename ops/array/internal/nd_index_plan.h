// The shapes of GatherNd and ScatterNd, checked alike by their CPU and GPU
// kernels: indices [..., depth] address slices of the first `depth`
// dimensions of params (GatherNd) or of the output shape (ScatterNd); each
// slice is the product of the remaining dimensions.
//
//   ASSIGN_OR_RETURN(internal::NdIndexPlan p,
//                    internal::PlanGatherNd(params.shape(), indices.shape()));
//   // out: p.out_shape; index row i of p.rows copies p.slice elements.
//
// Errors: InvalidArgument naming the op and the shapes. The indices' values
// are each device's to check (the CPU fails on one out of range; the GPU,
// which cannot read them without a synchronization, gives zeros or skips
// them, as TensorFlow's GPU kernels do). Pure functions: thread-safe.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_ND_INDEX_PLAN_H_
#define SLUICE_OPS_ARRAY_INTERNAL_ND_INDEX_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor_shape.h"
#include "runtime/tensor.h"

namespace sluice::internal {

struct NdIndexPlan {
  TensorShape out_shape;  // GatherNd's output; ScatterNd's `shape`
  TensorShape indexed;    // the shape the index rows address slices of
  int64_t depth = 0;      // indices.shape[-1]
  int64_t rows = 0;       // index rows: the product of indices.shape[:-1]
  int64_t slice = 1;      // elements per index row
};

absl::StatusOr<NdIndexPlan> PlanGatherNd(const TensorShape& params, const TensorShape& indices);

// `shape` is ScatterNd's third input (an int vector in host memory);
// updates must be indices.shape[:-1] + shape[depth:].
absl::StatusOr<NdIndexPlan> PlanScatterNd(const TensorShape& indices, const TensorShape& updates,
                                          const Tensor& shape);

// The flat slice number of each index row of `idx` (rows of `depth`
// values, row-major) in `shape`'s first `depth` dimensions; InvalidArgument
// naming `op`, the row and the shape for a value out of range, or -1 for
// that row when `skip_bad` (bad_indices_policy "IGNORE").
absl::StatusOr<std::vector<int64_t>> NdIndexOffsets(const std::vector<int64_t>& idx,
                                                    int64_t depth, const TensorShape& shape,
                                                    const char* op, bool skip_bad = false);

}  // namespace sluice::internal

#endif  // SLUICE_OPS_ARRAY_INTERNAL_ND_INDEX_PLAN_H_
