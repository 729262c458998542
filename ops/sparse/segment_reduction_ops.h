// Segment reductions beyond the sums (tf.math.segment_max/min/mean/prod and
// unsorted_segment_max/min/prod), under TensorFlow's names, inputs, attrs
// and values:
//   SegmentMax/Min/Mean/Prod    data's rows reduced into the segments a
//                               sorted 1-D segment_ids names: output row k
//                               reduces the rows whose id is k; rows =
//                               last id + 1; an empty segment gives 0 (1 for
//                               Prod); Mean divides by the count (integer
//                               division for integers)
//   UnsortedSegmentMax/Min/Prod segment_ids of any order and of a shape that
//                               prefixes data's, into num_segments rows;
//                               negative ids dropped; an empty segment gives
//                               the type's lowest value (Max), highest (Min)
//                               or 1 (Prod)
// CPU kernels for float, double, int32 and int64. Gradients are
// TensorFlow's (math_grad.py): Mean's spreads each segment's gradient over
// its rows; Max and Min's goes to the rows equal to the result, shared
// between ties; Prod's is the product of the others (the product of the
// non-zero others at a segment's only zero, 0 where a segment has two
// zeros). Errors (InvalidArgument, TensorFlow's texts): ids not of data's
// first dimension or not increasing, an id out of range, num_segments
// negative or not a scalar.
//
//   Output pooled = ops::UnsortedSegmentMax(s, messages, receivers, num_nodes);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_SPARSE_SEGMENT_REDUCTION_OPS_H_
#define SLUICE_OPS_SPARSE_SEGMENT_REDUCTION_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSegmentReductionOps(OpRegistry* ops);
absl::Status RegisterSegmentReductionGradients(OpRegistry* ops);
void RegisterSegmentReductionKernels(KernelRegistry* kernels);

namespace ops {

Output SegmentMax(const Scope& scope, Input data, Input segment_ids,
                  std::source_location loc = std::source_location::current());
Output SegmentMin(const Scope& scope, Input data, Input segment_ids,
                  std::source_location loc = std::source_location::current());
Output SegmentMean(const Scope& scope, Input data, Input segment_ids,
                   std::source_location loc = std::source_location::current());
Output SegmentProd(const Scope& scope, Input data, Input segment_ids,
                   std::source_location loc = std::source_location::current());
Output UnsortedSegmentMax(const Scope& scope, Input data, Input segment_ids, Input num_segments,
                          std::source_location loc = std::source_location::current());
Output UnsortedSegmentMin(const Scope& scope, Input data, Input segment_ids, Input num_segments,
                          std::source_location loc = std::source_location::current());
Output UnsortedSegmentProd(const Scope& scope, Input data, Input segment_ids, Input num_segments,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_SEGMENT_REDUCTION_OPS_H_
