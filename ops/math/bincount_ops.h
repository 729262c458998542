// Counting how often each small non-negative integer occurs (TensorFlow's
// Bincount, DenseBincount, SparseBincount and RaggedBincount: tf.math.bincount
// and Keras' CategoryEncoding "count" and "multi_hot" modes). CPU kernels.
//
//   Output c = ops::Bincount(s, ids, size, empty_weights);       // [size]
//   Output m = ops::DenseBincount(s, ids2d, size, weights,       // [batch, size]
//                                {.binary_output = true});       // 1 where present
//
// Each value v of the input adds its weight (1 when `weights` has no
// elements) to bin v; values >= size are dropped; with binary_output a bin
// is 1 when any value fell in it. A rank-2 input (DenseBincount), a rank-2
// sparse tensor (SparseBincount: its row is indices[i, 0]) or a ragged
// tensor (RaggedBincount: row r holds values[splits[r]:splits[r+1]]) counts
// each row into its own [size] row of the output.
//
// Errors, InvalidArgument with TensorFlow's wording: a size that is not a
// scalar or is negative; a negative value; weights neither empty nor of the
// values' shape; an input above rank 2; a sparse index outside dense_shape;
// splits that do not start at 0, decrease, or do not end at the number of
// values. No gradients (TensorFlow registers none): AddGradients through
// weights that count is Unimplemented; ids, size, empty weights and
// binary_output's weights get none. Thread-safety: stateless kernels.
#ifndef SLUICE_OPS_MATH_BINCOUNT_OPS_H_
#define SLUICE_OPS_MATH_BINCOUNT_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBincountOps(OpRegistry* ops);
void RegisterBincountKernels(KernelRegistry* kernels);

namespace ops {

struct BincountAttrs {
  bool binary_output = false;
};

// arr: int32 of any shape; size: int32 scalar; weights: arr's shape or empty.
Output Bincount(const Scope& scope, Input arr, Input size, Input weights,
                std::source_location loc = std::source_location::current());
// input: int32 or int64 of rank 0, 1 or 2; size: the same dtype.
Output DenseBincount(const Scope& scope, Input input, Input size, Input weights,
                     const BincountAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output SparseBincount(const Scope& scope, Input indices, Input values, Input dense_shape,
                      Input size, Input weights, const BincountAttrs& attrs = {},
                      std::source_location loc = std::source_location::current());
Output RaggedBincount(const Scope& scope, Input splits, Input values, Input size, Input weights,
                      const BincountAttrs& attrs = {},
                      std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_BINCOUNT_OPS_H_
