// What the CPU and GPU kernels of the fused batch normalization
// (FusedBatchNorm{,V2,V3} and FusedBatchNormGrad{,V2,V3}) read and check
// alike: the attrs, and the shapes of the inputs.
//
//   ASSIGN_OR_RETURN(attrs_, internal::ReadBatchNormAttrs(ctx));   // in Init
//   ASSIGN_OR_RETURN(internal::BatchNormGeometry g,
//                    internal::CheckBatchNormInputs(ctx, attrs_));  // in Compute
//
// Errors: Unimplemented for data_format NCHW (neither device runs it);
// InvalidArgument naming the op, the input and both shapes for a bad shape.
// Pure functions of their arguments: thread-safe.
#ifndef SLUICE_OPS_NN_INTERNAL_BATCH_NORM_CHECKS_H_
#define SLUICE_OPS_NN_INTERNAL_BATCH_NORM_CHECKS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/kernel.h"

namespace sluice::internal {

struct BatchNormAttrs {
  float epsilon = 0.0001f;
  float factor = 1.0f;  // exponential_avg_factor (the forward ops only)
  bool training = true;
};

absl::StatusOr<BatchNormAttrs> ReadBatchNormAttrs(const OpKernelConstruction& ctx);

// x [N, H, W, C] seen as [rows, depth] = [N * H * W, C].
struct BatchNormGeometry {
  int64_t rows = 0;
  int64_t depth = 0;
};

// The forward ops: x 4-D; scale, offset [C]; mean, variance [C], or empty
// when training without a moving average (factor 1).
absl::StatusOr<BatchNormGeometry> CheckBatchNormInputs(OpKernelContext* ctx,
                                                       const BatchNormAttrs& attrs);

// The gradient ops: x 4-D and y_backprop of its shape; scale,
// reserve_space_1 and reserve_space_2 [C].
absl::StatusOr<BatchNormGeometry> CheckBatchNormGradInputs(OpKernelContext* ctx);

}  // namespace sluice::internal

#endif  // SLUICE_OPS_NN_INTERNAL_BATCH_NORM_CHECKS_H_
