// Ops that compute with indices, as TensorFlow 1.x graphs use them:
// Bucketize, Unique, ListDiff, DynamicStitch, ParallelDynamicStitch,
// DynamicPartition, GatherNd, ScatterNd, TopKV2 and InTopKV2. Definitions
// with TensorFlow's names, attrs and defaults (RegisterIndexOps), CPU
// kernels (RegisterIndexKernels; index_kernels.cc, stitch_kernels.cc,
// top_k_kernels.cc) and wrappers:
//
//   Output b = ops::Bucketize(s, x, {0.0f, 10.0f, 100.0f});   // int32 bucket ids
//   ops::UniqueOutputs u = ops::Unique(s, x);                   // u.y, u.idx
//   Output m = ops::DynamicStitch(s, {i0, i1}, {d0, d1});
//   std::vector<Output> parts = ops::DynamicPartition(s, data, partitions, 2);
//   Output g = ops::GatherNd(s, params, indices);
//   Output t = ops::ScatterNd(s, indices, updates, shape);
//   ops::TopKOutputs top = ops::TopKV2(s, logits, 5);          // top.values, top.indices
//   Output hit = ops::InTopKV2(s, predictions, labels, 5);
//
// Semantics as TensorFlow's CPU kernels: DynamicStitch lets the later input
// win where indices repeat (ParallelDynamicStitch, whose order TF leaves
// unspecified, does the same) and zero-fills rows no index names; ScatterNd
// sums repeated indices; TopKV2 breaks ties by the lower index and returns
// sorted values even when `sorted` is false (TF leaves that order
// unspecified); InTopKV2 is false for an out-of-range target or a
// non-finite prediction in the row.
//
// Gradients (RegisterIndexGradients, ops/array/array_gradients.h) follow TensorFlow's
// array_grad.py, data_flow_grad.py and nn_grad.py; Bucketize, ListDiff,
// InTopKV2 and the index outputs have none. Errors are InvalidArgument
// naming the op and the bad shape or index. Thread-safety: as Scope; the
// kernels are stateless.
#ifndef SLUICE_OPS_ARRAY_INDEX_OPS_H_
#define SLUICE_OPS_ARRAY_INDEX_OPS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterIndexOps(OpRegistry* ops);
void RegisterIndexKernels(KernelRegistry* kernels);

namespace internal {
// The kernel halves, registered by RegisterIndexKernels.
void RegisterStitchKernels(KernelRegistry* kernels);
void RegisterTopKKernels(KernelRegistry* kernels);
}  // namespace internal

namespace ops {

// For each value, the number of boundaries (sorted ascending) <= it.
Output Bucketize(const Scope& scope, Input input, const std::vector<float>& boundaries,
                 std::source_location loc = std::source_location::current());

struct UniqueOutputs {
  Output y;    // the distinct values of x, in order of first appearance
  Output idx;  // x[i] == y[idx[i]]
};
// out_idx: DT_INT32 or DT_INT64.
UniqueOutputs Unique(const Scope& scope, Input x, DataType out_idx = DT_INT32,
                     std::source_location loc = std::source_location::current());

struct ListDiffOutputs {
  Output out;  // the values of x not in y, in x's order
  Output idx;  // their positions in x
};
ListDiffOutputs ListDiff(const Scope& scope, Input x, Input y, DataType out_idx = DT_INT32,
                         std::source_location loc = std::source_location::current());

// merged[indices[m][i, ...]] = data[m][i, ..., :]; the later input wins.
Output DynamicStitch(const Scope& scope, absl::Span<const Output> indices,
                     absl::Span<const Output> data,
                     std::source_location loc = std::source_location::current());
Output ParallelDynamicStitch(const Scope& scope, absl::Span<const Output> indices,
                             absl::Span<const Output> data,
                             std::source_location loc = std::source_location::current());

// Output p holds the slices data[i, ...] with partitions[i] == p.
std::vector<Output> DynamicPartition(const Scope& scope, Input data, Input partitions,
                                     int64_t num_partitions,
                                     std::source_location loc = std::source_location::current());

// output[i...] = params[indices[i..., :]] (the last index dimension
// addresses params' leading dimensions).
Output GatherNd(const Scope& scope, Input params, Input indices,
                std::source_location loc = std::source_location::current());
// Zeros of `shape` with updates added at indices (repeats sum).
Output ScatterNd(const Scope& scope, Input indices, Input updates, Input shape,
                 std::source_location loc = std::source_location::current());
// `tensor` with the slices at indices replaced by the updates (a repeated
// index: one of its updates), or with the updates added or subtracted
// (repeats sum). Update takes every fixed-size dtype; Add and Sub float,
// double, int32, int64.
Output TensorScatterUpdate(const Scope& scope, Input tensor, Input indices, Input updates,
                           std::source_location loc = std::source_location::current());
Output TensorScatterAdd(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc = std::source_location::current());
Output TensorScatterSub(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc = std::source_location::current());
// The larger / smaller of each addressed element and its update (repeats:
// the extreme of all); float, double, int32, int64.
Output TensorScatterMax(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc = std::source_location::current());
Output TensorScatterMin(const Scope& scope, Input tensor, Input indices, Input updates,
                        std::source_location loc = std::source_location::current());
// TensorScatterAdd under TF1's name (tf.compat.v1.scatter_nd_add of a tensor).
Output ScatterNdNonAliasingAdd(const Scope& scope, Input input, Input indices, Input updates,
                               std::source_location loc = std::source_location::current());

struct TopKOutputs {
  Output values;   // the k largest along the last dimension, largest first
  Output indices;  // int32 positions of those values in the last dimension
};
TopKOutputs TopKV2(const Scope& scope, Input input, Input k, bool sorted = true,
                   std::source_location loc = std::source_location::current());
// Whether predictions[b, targets[b]] is among the k largest of row b.
Output InTopKV2(const Scope& scope, Input predictions, Input targets, Input k,
                std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INDEX_OPS_H_
