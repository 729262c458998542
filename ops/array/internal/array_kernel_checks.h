// The host-side half of the array kernels that move elements, shared by the
// CPU kernels (array_kernels.cc, slice_kernels.cc) and the GPU kernels
// (ops/gpu/array_*kernels.cc): reading the index arguments, checking them
// against the inputs (with the error texts both devices report) and
// computing the output shape plus what the copy loop needs.
//
//   ASSIGN_OR_RETURN(internal::TilePlan plan,
//                    internal::PlanTile(ctx->input(0), ctx->input(1)));
//   if (plan.is_identity) { ctx->set_output(0, ctx->input(0)); return absl::OkStatus(); }
//   ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
//
// Index arguments are read with ops/internal/index_tensors.h (host memory only). Errors:
// InvalidArgument naming the op, the argument and the shapes involved.
// Thread-safety: pure functions of their arguments. Internal to ops/.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_CHECKS_H_
#define SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"
#include "ops/internal/array_util.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The product of dims[begin, end).
int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end);

// Fill: the output shape `dims` (input 0, non-negative) once `value` (input
// 1) is known to be a scalar.
absl::StatusOr<TensorShape> FillShape(const Tensor& dims, const Tensor& value);

// Transpose of x by perm (input 1).
struct TransposePlan {
  TensorShape out_shape;
  // x's dimensions with those of size 1 dropped and neighbours that stay
  // neighbours merged, in input order, and the permutation over them.
  std::vector<int64_t> merged_dims;
  std::vector<int64_t> merged_perm;
  bool is_identity = false;  // the output is x reshaped to out_shape
};
absl::StatusOr<TransposePlan> PlanTranspose(const Tensor& x, const Tensor& perm);

// Tile of x by multiples (input 1).
struct TilePlan {
  std::vector<int64_t> multiples;
  TensorShape out_shape;
  bool is_identity = false;  // every multiple is 1: the output is x
};
absl::StatusOr<TilePlan> PlanTile(const Tensor& x, const Tensor& multiples);

// Joining and splitting along one axis: the axis in [0, rank) and the shape
// of the output (of each output for Split and Unpack).
struct AxisPlan {
  int64_t axis = 0;
  TensorShape out_shape;
};
// ConcatV2 (axis last, axis_first false) or Concat (axis input first).
absl::StatusOr<AxisPlan> PlanConcat(const OpKernelContext& ctx, bool axis_first);
// Split of x along split_dim into `num` equal parts.
absl::StatusOr<AxisPlan> PlanSplit(const Tensor& split_dim, const Tensor& x, int64_t num);
// Pack of every input of ctx along the attr `axis`.
absl::StatusOr<AxisPlan> PlanPack(const OpKernelContext& ctx, int64_t axis);
// Unpack of x along the attr `axis` into `num` outputs.
absl::StatusOr<AxisPlan> PlanUnpack(const Tensor& x, int64_t axis, int64_t num);

// Slice of x: begin and size (inputs 1, 2) with size -1 resolved.
struct SlicePlan {
  std::vector<int64_t> begin;
  std::vector<int64_t> size;
  bool is_identity = false;  // the whole of x
};
absl::StatusOr<SlicePlan> PlanSlice(const Tensor& x, const Tensor& begin, const Tensor& size);

// StridedSlice and StridedSliceGrad: the five mask attrs.
absl::StatusOr<StridedSliceSpec> ReadStridedSliceSpec(const OpKernelConstruction& ctx);
// Reads begin/end/strides (inputs first..first+2) and plans the slice of a
// tensor of `shape`; the error names the shape and the three vectors.
absl::StatusOr<StridedSlicePlan> PlanStridedSliceOfInputs(const OpKernelContext& ctx, int first,
                                                          const TensorShape& shape,
                                                          const StridedSliceSpec& spec);
// StridedSliceGrad: the output shape (input 0) and the slice of it that dy
// (input 4, whose shape is checked) fills.
struct StridedSliceGradPlan {
  std::vector<int64_t> dims;  // the output shape's dimensions
  TensorShape shape;
  StridedSlicePlan slice;
};
absl::StatusOr<StridedSliceGradPlan> PlanStridedSliceGrad(const OpKernelContext& ctx,
                                                          const StridedSliceSpec& spec);

// GatherV2 (has_axis) only serves batch_dims = 0.
absl::Status CheckGatherBatchDims(const OpKernelConstruction& ctx, bool has_axis);
// The gather axis of params (input 0): GatherV2's input 2, else 0.
absl::StatusOr<int64_t> GatherAxis(const OpKernelContext& ctx, bool has_axis);
// params' dims before axis, then indices' dims, then params' dims after axis.
TensorShape GatherShape(const TensorShape& params, const TensorShape& indices, int64_t axis);

// UnsortedSegmentSum (and the other unsorted segment reductions) of data
// (input 0) by segment_ids (input 1) into num_segments (input 2) rows;
// errors name the node's op.
struct SegmentSumPlan {
  int64_t num_segments = 0;
  TensorShape out_shape;
  int64_t inner = 1;  // elements per segment id
};
absl::StatusOr<SegmentSumPlan> PlanUnsortedSegmentSum(const OpKernelContext& ctx);

// Pad and PadV2: paddings a [rank, 2] matrix of non-negative counts; the
// output shape and each dimension's padding before.
struct PadPlan {
  TensorShape out_shape;
  std::vector<int64_t> before;
};
absl::StatusOr<PadPlan> PlanPad(absl::string_view op, const Tensor& x, const Tensor& paddings);
// PadV2's constant_values must hold one value.
absl::Status CheckPadValue(const Tensor& value);

// OneHot: axis -1 or in [0, rank], depth (input 1) non-negative, on_value
// and off_value one value each. indices [prefix..., suffix...] gives the
// output [prefix..., depth, suffix...] (prefix: the dims before axis).
struct OneHotPlan {
  TensorShape out_shape;
  int64_t prefix = 1, depth = 0, suffix = 1;
};
absl::StatusOr<OneHotPlan> PlanOneHot(int64_t axis, const Tensor& indices, const Tensor& depth,
                                      const Tensor& on_value, const Tensor& off_value);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INTERNAL_ARRAY_KERNEL_CHECKS_H_
