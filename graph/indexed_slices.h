// Sparse gradients: TensorFlow's IndexedSlices, the gradient of a gather.
//
// A gather reads a few rows of a large tensor (an embedding table), so its
// gradient is nonzero in those rows only. As an IndexedSlices it is
//   values       [n, d1, ...]   the rows' gradients
//   indices      [n]            which row each belongs to (repeats allowed:
//                               a repeated row's values are summed)
//   dense_shape  [rank]         the shape of the whole tensor
// and only the touched rows are computed, sent between devices and applied.
//
//   ASSIGN_OR_RETURN(std::vector<Gradient> g, AddGradientsWithSlices(s, {loss}, {table}));
//   if (g[0].sparse()) { ...g[0].slices.values, g[0].slices.indices... }
//
// AddGradientsWithSlices (graph/gradients.h) keeps a gradient sparse while
// every op it flows through has a sparse gradient function
// (OpRegistry::SetSparseGradient: Gather, GatherV2, ResourceGather,
// Identity, ReadVariableOp, ...), and aggregates sparse gradients of one
// tensor by concatenating them. Where a consumer needs a dense gradient, the
// slices become one UnsortedSegmentSum node named "IndexedSlicesToDense", so
// the graph says where a table-sized tensor appears.
#ifndef SLUICE_GRAPH_INDEXED_SLICES_H_
#define SLUICE_GRAPH_INDEXED_SLICES_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/scope.h"

namespace sluice {

struct IndexedSlices {
  Output values;
  Output indices;      // int32 or int64, rank 1
  Output dense_shape;  // int32 or int64, rank 1
};

// One tensor's gradient: dense, sparse, or none (both invalid).
struct Gradient {
  Gradient() = default;
  Gradient(const Output& d) : dense(d) {}          // NOLINT: a dense gradient
  Gradient(const IndexedSlices& s) : slices(s) {}  // NOLINT: a sparse one

  bool valid() const { return dense.valid() || slices.values.valid(); }
  bool sparse() const { return slices.values.valid(); }

  Output dense;
  IndexedSlices slices;
};

// The dense tensor of `slices`: UnsortedSegmentSum(values, indices,
// dense_shape[0]), named "IndexedSlicesToDense" in `scope`.
Output IndexedSlicesToDense(const Scope& scope, const IndexedSlices& slices);

// `g` as a dense Output (the same Output when dense; invalid when none).
Output DenseOf(const Scope& scope, const Gradient& g);

// The sum of several sparse gradients of one tensor: their values and
// indices concatenated (indices widened to int64 when their types differ),
// the first one's dense_shape. InvalidArgument for an empty list.
absl::StatusOr<IndexedSlices> ConcatIndexedSlices(const Scope& scope,
                                                  absl::Span<const IndexedSlices> parts);

}  // namespace sluice

#endif  // SLUICE_GRAPH_INDEXED_SLICES_H_
