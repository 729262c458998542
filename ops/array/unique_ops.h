// Unique's other TensorFlow forms: UniqueV2 (the distinct slices along one
// axis: tf.unique, tf.raw_ops in TF2 graphs), UniqueWithCounts and
// UniqueWithCountsV2 (each distinct value's or slice's count too: Keras'
// IntegerLookup and StringLookup vocabularies, tf.unique_with_counts). CPU
// kernels for the dtypes Unique has (numbers, bool, string).
//
//   ops::UniqueOutputs u = ops::UniqueV2(s, rows, {0});      // distinct rows
//   ops::UniqueWithCountsOutputs c = ops::UniqueWithCounts(s, ids);
//   // c.y: distinct ids in order of first appearance; c.idx: x[i] == y[idx[i]];
//   // c.count: how often each occurs.
//
// `axis` is a vector of one element (negative counts from the end) or empty
// for a vector input. Slices compare element by element, so NaN is never
// equal to itself and 0.0 equals -0.0, as in TensorFlow's kernel.
//
// Gradients (TensorFlow registers none; Sluice's Unique has one): x's
// gradient gathers dy at idx along the axis. idx and count are not
// differentiable.
//
// Errors, InvalidArgument with TensorFlow's wording: an axis that is not a
// vector, has more than one element or is out of range; an input that is
// not a vector where no axis is given.
#ifndef SLUICE_OPS_ARRAY_UNIQUE_OPS_H_
#define SLUICE_OPS_ARRAY_UNIQUE_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/array/index_ops.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterUniqueOps(OpRegistry* ops);
absl::Status RegisterUniqueGradients(OpRegistry* ops);
void RegisterUniqueKernels(KernelRegistry* kernels);

namespace ops {

struct UniqueWithCountsOutputs {
  Output y;
  Output idx;
  Output count;
};

UniqueOutputs UniqueV2(const Scope& scope, Input x, Input axis, DataType out_idx = DT_INT32,
                       std::source_location loc = std::source_location::current());
UniqueWithCountsOutputs UniqueWithCounts(
    const Scope& scope, Input x, DataType out_idx = DT_INT32,
    std::source_location loc = std::source_location::current());
UniqueWithCountsOutputs UniqueWithCountsV2(
    const Scope& scope, Input x, Input axis, DataType out_idx = DT_INT32,
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_UNIQUE_OPS_H_
