#include "ops/array/internal/nd_index_plan.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "ops/internal/index_tensors.h"

namespace sluice::internal {
namespace {

// The index rows and, from `indexed`, the slice and the output's trailing
// dimensions (appended to `out`).
void Fill(const TensorShape& indices, const TensorShape& indexed, NdIndexPlan* p,
          TensorShape* out) {
  p->depth = indices.dim(indices.rank() - 1);
  p->rows = 1;
  for (int d = 0; d + 1 < indices.rank(); ++d) p->rows *= indices.dim(d);
  p->slice = 1;
  for (int d = static_cast<int>(p->depth); d < indexed.rank(); ++d) {
    out->AddDim(indexed.dim(d));
    p->slice *= indexed.dim(d);
  }
  p->indexed = indexed;
}

}  // namespace

absl::StatusOr<NdIndexPlan> PlanGatherNd(const TensorShape& params, const TensorShape& indices) {
  if (indices.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GatherNd: indices must be at least a vector, got ", indices.DebugString()));
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth > params.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("GatherNd: indices.shape[-1] = ", depth,
                                                   " must be <= the rank of params ",
                                                   params.DebugString()));
  }
  NdIndexPlan p;
  p.out_shape = indices;
  p.out_shape.RemoveDim(p.out_shape.rank() - 1);
  Fill(indices, params, &p, &p.out_shape);
  return p;
}

absl::StatusOr<NdIndexPlan> PlanScatterNd(const TensorShape& indices, const TensorShape& updates,
                                          const Tensor& shape) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadVector(shape, "ScatterNd: shape"));
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ScatterNd: shape [", absl::StrJoin(dims, ", "), "] has a negative dimension"));
    }
  }
  const TensorShape out{absl::MakeConstSpan(dims)};
  if (indices.rank() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScatterNd: indices must be at least a vector, got ", indices.DebugString()));
  }
  const int64_t depth = indices.dim(indices.rank() - 1);
  if (depth > out.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("ScatterNd: indices.shape[-1] = ", depth,
                                                   " must be <= the rank of shape ",
                                                   out.DebugString()));
  }
  NdIndexPlan p;
  TensorShape expected = indices;
  expected.RemoveDim(expected.rank() - 1);
  Fill(indices, out, &p, &expected);
  if (updates != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScatterNd: updates must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = ",
        expected.DebugString(), ", got ", updates.DebugString()));
  }
  p.out_shape = out;
  return p;
}

absl::StatusOr<std::vector<int64_t>> NdIndexOffsets(const std::vector<int64_t>& idx,
                                                    int64_t depth, const TensorShape& shape,
                                                    const char* op, bool skip_bad) {
  const int64_t n = depth == 0 ? 0 : static_cast<int64_t>(idx.size()) / depth;
  std::vector<int64_t> offsets(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t v = idx[i * depth + d];
      if (v < 0 || v >= shape.dim(static_cast<int>(d))) {
        if (skip_bad) {
          offset = -1;
          break;
        }
        std::vector<int64_t> row(idx.begin() + i * depth, idx.begin() + (i + 1) * depth);
        return absl::InvalidArgumentError(absl::StrCat(op, ": indices[", i, "] = [",
                                                       absl::StrJoin(row, ", "),
                                                       "] does not index into shape ",
                                                       shape.DebugString()));
      }
      offset = offset * shape.dim(static_cast<int>(d)) + v;
    }
    offsets[i] = offset;
  }
  return offsets;
}

}  // namespace sluice::internal
