#include "graph/indexed_slices.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {

Output IndexedSlicesToDense(const Scope& scope, const IndexedSlices& slices) {
  // dense_shape[0]: the number of rows.
  const Output rows = scope.Op("GatherV2")
                          .Input(slices.dense_shape)
                          .Input(int32_t{0})
                          .Input(int32_t{0})
                          .DefaultName("IndexedSlicesToDense/rows")
                          .Finalize1();
  return scope.Op("UnsortedSegmentSum")
      .Input(slices.values)
      .Input(slices.indices)
      .Input(rows)
      .DefaultName("IndexedSlicesToDense")
      .Finalize1();
}

Output DenseOf(const Scope& scope, const Gradient& g) {
  return g.sparse() ? IndexedSlicesToDense(scope, g.slices) : g.dense;
}

absl::StatusOr<IndexedSlices> ConcatIndexedSlices(const Scope& scope,
                                                  absl::Span<const IndexedSlices> parts) {
  if (parts.empty()) return absl::InvalidArgumentError("ConcatIndexedSlices: no slices");
  if (parts.size() == 1) return parts[0];
  bool mixed = false;
  for (const IndexedSlices& p : parts) mixed |= p.indices.dtype() != parts[0].indices.dtype();
  std::vector<Output> values, indices;
  for (const IndexedSlices& p : parts) {
    values.push_back(p.values);
    indices.push_back(mixed && p.indices.dtype() != DT_INT64
                          ? scope.Op("Cast").Input(p.indices).Attr("DstT", DT_INT64).Finalize1()
                          : p.indices);
  }
  IndexedSlices sum;
  sum.values = scope.Op("ConcatV2")
                   .InputList(absl::MakeConstSpan(values))
                   .Input(int32_t{0})
                   .DefaultName("AggregateIndexedSlices/values")
                   .Finalize1();
  sum.indices = scope.Op("ConcatV2")
                    .InputList(absl::MakeConstSpan(indices))
                    .Input(int32_t{0})
                    .DefaultName("AggregateIndexedSlices/indices")
                    .Finalize1();
  sum.dense_shape = parts[0].dense_shape;
  RETURN_IF_ERROR(scope.status());
  return sum;
}

}  // namespace sluice
