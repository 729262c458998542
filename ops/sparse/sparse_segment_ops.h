// Reductions over a sparse selection of rows, as embedding lookups with
// combiners use them, under TensorFlow's names, inputs, attrs and errors
// (its core/ops/math_ops.cc):
//   SparseSegmentSum(data, indices, segment_ids)     output[k] = sum of data[indices[i]]
//                                                    over the i with segment_ids[i] == k
//   SparseSegmentMean / SparseSegmentSqrtN           ... divided by the segment's count,
//                                                    or by its square root
//   ...WithNumSegments(..., num_segments)            output has num_segments rows
//                                                    (else last segment id + 1)
//   SparseSegment{Sum,Mean,SqrtN}Grad(grad, indices, segment_ids, output_dim0)
//       the gradient w.r.t. data: [output_dim0, ...], row indices[i] gets
//       grad[segment_ids[i]] (times the segment's weight)
//   SparseSegment{Sum,Mean,SqrtN}GradV2(grad, indices, segment_ids, dense_output_dim0)
//       the same, only for the rows touched: (values, sorted_unique_indices),
//       the parts of an IndexedSlices gradient
//   SegmentSum(data, segment_ids)                    the dense form (every row of
//                                                    data, segment_ids sorted), as
//                                                    weighted embedding_lookup_sparse
//                                                    uses it; gradient: Gather
// Segment ids must be sorted (non-decreasing) and >= 0; empty segments are
// zero. Gradients (sparse_segment_grad.cc): w.r.t. data through the Grad
// ops (a dense gradient; `sparse_gradient` is accepted and does not change
// it yet); none w.r.t. indices, segment ids or num_segments.
// Errors (InvalidArgument, TensorFlow's words): "segment ids are not
// increasing", "segment ids must be >= 0", "segment ids must be <
// num_segments", "Bad: indices[i] == x out of range [0, n)",
// "segment_ids and indices should have same size.", data of rank 0.
//
//   Output pooled = ops::SparseSegmentMean(s, embeddings, ids, row_of_each_id);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_SPARSE_SPARSE_SEGMENT_OPS_H_
#define SLUICE_OPS_SPARSE_SPARSE_SEGMENT_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSparseSegmentOps(OpRegistry* ops);
absl::Status RegisterSparseSegmentGradients(OpRegistry* ops);
void RegisterSparseSegmentKernels(KernelRegistry* kernels);

namespace ops {

// kind: "Sum", "Mean" or "SqrtN".
Output SparseSegmentReduction(const Scope& scope, const std::string& kind, Input data,
                              Input indices, Input segment_ids,
                              std::source_location loc = std::source_location::current());
Output SparseSegmentReductionWithNumSegments(
    const Scope& scope, const std::string& kind, Input data, Input indices, Input segment_ids,
    Input num_segments, std::source_location loc = std::source_location::current());
Output SegmentSum(const Scope& scope, Input data, Input segment_ids,
                  std::source_location loc = std::source_location::current());
Output SparseSegmentReductionGrad(const Scope& scope, const std::string& kind, Input grad,
                                  Input indices, Input segment_ids, Input output_dim0,
                                  std::source_location loc = std::source_location::current());

inline Output SparseSegmentSum(const Scope& s, Input data, Input indices, Input segment_ids,
                               std::source_location loc = std::source_location::current()) {
  return SparseSegmentReduction(s, "Sum", data, indices, segment_ids, loc);
}
inline Output SparseSegmentMean(const Scope& s, Input data, Input indices, Input segment_ids,
                                std::source_location loc = std::source_location::current()) {
  return SparseSegmentReduction(s, "Mean", data, indices, segment_ids, loc);
}
inline Output SparseSegmentSqrtN(const Scope& s, Input data, Input indices, Input segment_ids,
                                 std::source_location loc = std::source_location::current()) {
  return SparseSegmentReduction(s, "SqrtN", data, indices, segment_ids, loc);
}

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_SPARSE_SPARSE_SEGMENT_OPS_H_
