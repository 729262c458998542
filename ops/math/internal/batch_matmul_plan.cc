#include "ops/math/internal/batch_matmul_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sluice::internal {

absl::StatusOr<std::vector<int64_t>> BatchMatMulBatchDims(const TensorShape& x,
                                                          const TensorShape& y, bool broadcast) {
  const int bx = x.rank() - 2, by = y.rank() - 2;
  const int b = std::max(bx, by);
  std::vector<int64_t> out(b);
  for (int i = 0; i < b; ++i) {
    const int ix = i - (b - bx), iy = i - (b - by);
    const int64_t dx = ix >= 0 ? x.dim(ix) : 1, dy = iy >= 0 ? y.dim(iy) : 1;
    if (dx == dy || (broadcast && (dx == 1 || dy == 1))) {
      out[i] = dx == 1 ? dy : dx;
      continue;
    }
    if (dx >= 0 && dy >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch dimensions of ", x.DebugString(), " and ", y.DebugString(),
                       broadcast ? " do not broadcast" : " differ (they must be equal)"));
    }
    // One is unknown: without broadcasting it equals the known one; with
    // it, a known size above 1 is the result's.
    const int64_t known = std::max(dx, dy);
    out[i] = !broadcast || known > 1 ? known : TensorShape::kUnknownDim;
  }
  if (!broadcast && bx != by) {
    return absl::InvalidArgumentError(absl::StrCat("the batch ranks of ", x.DebugString(),
                                                   " and ", y.DebugString(), " differ"));
  }
  return out;
}

absl::StatusOr<BatchMatMulPlan> PlanBatchMatMul(absl::string_view op, const TensorShape& x,
                                                const TensorShape& y, bool adj_x, bool adj_y,
                                                bool broadcast) {
  if (x.rank() < 2 || y.rank() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": inputs must be at least 2-D, got ",
                                                   x.DebugString(), " and ", y.DebugString()));
  }
  BatchMatMulPlan p;
  p.m = x.dim(x.rank() - (adj_x ? 1 : 2));
  p.k = x.dim(x.rank() - (adj_x ? 2 : 1));
  const int64_t ky = y.dim(y.rank() - (adj_y ? 1 : 2));
  p.n = y.dim(y.rank() - (adj_y ? 2 : 1));
  if (p.k != ky) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the inner dimensions of ",
                                                   x.DebugString(), " and ", y.DebugString(),
                                                   " differ (", p.k, " vs. ", ky, ")"));
  }
  absl::StatusOr<std::vector<int64_t>> batch = BatchMatMulBatchDims(x, y, broadcast);
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", batch.status().message()));
  }
  p.out_shape = TensorShape(*batch);
  p.out_shape.AddDim(p.m);
  p.out_shape.AddDim(p.n);
  const int b = static_cast<int>(batch->size());
  p.batches = 1;
  for (int64_t d : *batch) p.batches *= d;
  // Walk the output's batch index; map it to x's and y's (size-1 dims
  // broadcast).
  p.x_index.resize(p.batches);
  p.y_index.resize(p.batches);
  std::vector<int64_t> index(b, 0);
  const int bx = x.rank() - 2, by = y.rank() - 2;
  for (int64_t i = 0; i < p.batches; ++i) {
    int64_t xi = 0, yi = 0;
    for (int d = 0; d < b; ++d) {
      const int ix = d - (b - bx), iy = d - (b - by);
      if (ix >= 0) xi = xi * x.dim(ix) + (x.dim(ix) == 1 ? 0 : index[d]);
      if (iy >= 0) yi = yi * y.dim(iy) + (y.dim(iy) == 1 ? 0 : index[d]);
    }
    p.x_index[i] = xi;
    p.y_index[i] = yi;
    for (int d = b - 1; d >= 0; --d) {
      if (++index[d] < (*batch)[d]) break;
      index[d] = 0;
    }
  }
  // One stride per input: every index i (the input has the output's batch)
  // or every index 0 (it has none to speak of).
  auto stride_of = [&](const std::vector<int64_t>& at) -> int64_t {
    bool all_i = true, all_0 = true;
    for (int64_t i = 0; i < p.batches; ++i) {
      all_i &= at[i] == i;
      all_0 &= at[i] == 0;
    }
    return all_i ? 1 : (all_0 ? 0 : -1);
  };
  p.x_stride = stride_of(p.x_index);
  p.y_stride = stride_of(p.y_index);
  p.strided = p.x_stride >= 0 && p.y_stride >= 0;
  if (!p.strided) p.x_stride = p.y_stride = 0;
  return p;
}

}  // namespace sluice::internal
