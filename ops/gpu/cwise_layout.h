// Host side of the element-wise GPU kernels' broadcasting: the CwiseLayout
// (ops/gpu/cwise.cu.h) of a BroadcastPlan (ops/math/internal/broadcast.h), which
// already checked the shapes and merged adjacent dimensions.
//
//   ASSIGN_OR_RETURN(auto plan, internal::MakeBroadcastPlan<2>({&x.shape(), &y.shape()}));
//   ASSIGN_OR_RETURN(gpu::CwiseLayout<2> layout, CwiseLayoutOf(plan));
//   // [256,1024] + [1024]: rank 2, dims {256, 1024}, x strides {1024, 1}, y {0, 1}
//
// Thread-safety: pure functions. Header-only.
#ifndef SLUICE_OPS_GPU_CWISE_LAYOUT_H_
#define SLUICE_OPS_GPU_CWISE_LAYOUT_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/gpu/cwise.cu.h"
#include "ops/math/internal/broadcast.h"

namespace sluice {

// Unimplemented when the merged broadcast has more than gpu::kMaxCwiseDims
// dimensions (alternating broadcast patterns of a high-rank tensor).
template <int N>
absl::StatusOr<gpu::CwiseLayout<N>> CwiseLayoutOf(const internal::BroadcastPlan<N>& plan) {
  const int rank = static_cast<int>(plan.dims.size());
  if (rank > gpu::kMaxCwiseDims) {
    return absl::UnimplementedError(absl::StrCat(
        "broadcasting to ", plan.out_shape.DebugString(), " takes ", rank,
        " dimensions after merging; the GPU kernels handle at most ", gpu::kMaxCwiseDims));
  }
  gpu::CwiseLayout<N> layout;
  layout.rank = rank;
  for (int k = 0; k < rank; ++k) {
    layout.dims[k] = plan.dims[k];
    for (int j = 0; j < N; ++j) layout.strides[k][j] = plan.strides[k][j];
  }
  return layout;
}

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_CWISE_LAYOUT_H_
