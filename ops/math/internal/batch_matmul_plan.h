// The shapes of BatchMatMul and BatchMatMulV2 (NumPy's batch broadcasting in
// V2), worked out once for the CPU and GPU kernels and the shape function:
// the output's shape, and which matrix of x and of y each output matrix
// multiplies.
//
//   ASSIGN_OR_RETURN(internal::BatchMatMulPlan p,
//                    internal::PlanBatchMatMul("BatchMatMulV2", x.shape(), y.shape(),
//                                              adj_x, adj_y, /*broadcast=*/true));
//   for (int64_t i = 0; i < p.batches; ++i)  // out[i] = op(x[p.x_index[i]]) op(y[p.y_index[i]])
//
// When the batches are a stride apart in both inputs (the batch dimensions
// equal, or one input without batch), `strided` is true and x_index[i] is
// i * x_stride (0 or 1), y_index[i] is i * y_stride: one strided batched
// GEMM does them all. Pure functions: thread-safe.
#ifndef SLUICE_OPS_MATH_INTERNAL_BATCH_MATMUL_PLAN_H_
#define SLUICE_OPS_MATH_INTERNAL_BATCH_MATMUL_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor_shape.h"

namespace sluice::internal {

// The batch dimensions of x and y (all but the last two) broadcast
// (`broadcast`, V2) or required equal (BatchMatMul). A dimension unknown in
// one takes the other's size when they must be equal, or when that size is
// above 1 under broadcasting; else it stays unknown. InvalidArgument saying
// why otherwise (without the op's name).
absl::StatusOr<std::vector<int64_t>> BatchMatMulBatchDims(const TensorShape& x,
                                                          const TensorShape& y, bool broadcast);

struct BatchMatMulPlan {
  int64_t m = 0, n = 0, k = 0;  // out[i] is [m, n]; the products sum over k
  TensorShape out_shape;
  int64_t batches = 0;
  std::vector<int64_t> x_index, y_index;  // per output matrix
  bool strided = false;
  int64_t x_stride = 0, y_stride = 0;  // in matrices, when strided
};

// InvalidArgument naming `op` for inputs of rank < 2, inner dimensions that
// differ, or batch dimensions that do not broadcast (differ, for
// BatchMatMul).
absl::StatusOr<BatchMatMulPlan> PlanBatchMatMul(absl::string_view op, const TensorShape& x,
                                                const TensorShape& y, bool adj_x, bool adj_y,
                                                bool broadcast);

}  // namespace sluice::internal

#endif  // SLUICE_OPS_MATH_INTERNAL_BATCH_MATMUL_PLAN_H_
