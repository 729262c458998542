// Batched matrix products: BatchMatMul (equal batch dimensions) and
// BatchMatMulV2 (NumPy-broadcast batch dimensions), as tf.matmul writes them
// for tensors of rank > 2. Definitions, CPU kernels (float, double; one
// OpenBLAS GEMM per matrix) and a wrapper:
//
//   Output scores = ops::BatchMatMulV2(s, q, k, {.adj_y = true});  // [b, h, t, t]
//
// x is [..., m, k] ([..., k, m] with adj_x), y is [..., k, n] ([..., n, k]
// with adj_y); the result is [broadcast(...), m, n]. Gradients:
// RegisterBatchMatMulGradients (ops/math/math_gradients.h), summed over broadcast
// batch dimensions. Errors: InvalidArgument naming both shapes.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_BATCH_MATMUL_OPS_H_
#define SLUICE_OPS_MATH_BATCH_MATMUL_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBatchMatMulOps(OpRegistry* ops);
void RegisterBatchMatMulKernels(KernelRegistry* kernels);

namespace ops {

struct BatchMatMulAttrs {
  bool adj_x = false;  // transpose the last two dimensions of x (real types)
  bool adj_y = false;
};
Output BatchMatMulV2(const Scope& scope, Input x, Input y, const BatchMatMulAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output BatchMatMul(const Scope& scope, Input x, Input y, const BatchMatMulAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_BATCH_MATMUL_OPS_H_
