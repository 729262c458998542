// Checks and output shapes of the array kernels (see array_kernel_checks.h).
#include "ops/array/internal/array_kernel_checks.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/internal/index_tensors.h"

namespace sluice {
namespace internal {

int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

absl::StatusOr<TensorShape> FillShape(const Tensor& dims_t, const Tensor& value) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadVector(dims_t, "Fill: dims"));
  if (value.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Fill: value must be a scalar, got shape ", value.shape().DebugString()));
  }
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Fill: dims must be non-negative, got ", IntsDebugString(dims)));
    }
  }
  return TensorShape(absl::MakeConstSpan(dims));
}

absl::StatusOr<TransposePlan> PlanTranspose(const Tensor& x, const Tensor& perm_t) {
  ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadVector(perm_t, "Transpose: perm"));
  if (static_cast<int>(perm.size()) != x.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Transpose: perm ", IntsDebugString(perm), " has ", perm.size(),
                     " entries but x has shape ", x.shape().DebugString()));
  }
  RETURN_IF_ERROR(CheckPermutation(perm, "Transpose: perm"));
  TransposePlan plan;
  plan.out_shape = x.shape();
  for (size_t i = 0; i < perm.size(); ++i) plan.out_shape.set_dim(i, x.dim_size(perm[i]));

  // Drop size-1 dimensions, then merge input dims that stay adjacent.
  std::vector<int64_t> keep_index(x.dims(), -1);
  std::vector<int64_t> dims;
  for (int i = 0; i < x.dims(); ++i) {
    if (x.dim_size(i) != 1) {
      keep_index[i] = static_cast<int64_t>(dims.size());
      dims.push_back(x.dim_size(i));
    }
  }
  std::vector<int64_t> p;
  for (int64_t q : perm) {
    if (keep_index[q] >= 0) p.push_back(keep_index[q]);
  }
  std::vector<std::vector<int64_t>> groups;  // runs p[i], p[i]+1, ..., in output order
  for (size_t i = 0; i < p.size(); ++i) {
    if (i > 0 && p[i] == p[i - 1] + 1) {
      groups.back().push_back(p[i]);
    } else {
      groups.push_back({p[i]});
    }
  }
  // Merged dims in input order, and the perm over them.
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  plan.merged_dims.resize(groups.size());
  plan.merged_perm.resize(groups.size());
  std::vector<int64_t> rank_in_input(groups.size());
  for (size_t k = 0; k < order.size(); ++k) {
    rank_in_input[order[k]] = static_cast<int64_t>(k);
    int64_t n = 1;
    for (int64_t d : groups[order[k]]) n *= dims[d];
    plan.merged_dims[k] = n;
  }
  plan.is_identity = true;
  for (size_t g = 0; g < groups.size(); ++g) {
    plan.merged_perm[g] = rank_in_input[g];
    plan.is_identity = plan.is_identity && plan.merged_perm[g] == static_cast<int64_t>(g);
  }
  return plan;
}

absl::StatusOr<TilePlan> PlanTile(const Tensor& x, const Tensor& multiples_t) {
  TilePlan plan;
  ASSIGN_OR_RETURN(plan.multiples, ReadVector(multiples_t, "Tile: multiples"));
  const std::vector<int64_t>& multiples = plan.multiples;
  if (static_cast<int>(multiples.size()) != x.dims()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tile: multiples ", IntsDebugString(multiples), " has ", multiples.size(),
                     " entries but input has shape ", x.shape().DebugString()));
  }
  plan.out_shape = x.shape();
  plan.is_identity = true;
  for (int i = 0; i < x.dims(); ++i) {
    if (multiples[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile: multiples ", IntsDebugString(multiples), " must be non-negative"));
    }
    plan.out_shape.set_dim(i, x.dim_size(i) * multiples[i]);
    plan.is_identity = plan.is_identity && multiples[i] == 1;
  }
  return plan;
}

absl::StatusOr<AxisPlan> PlanConcat(const OpKernelContext& ctx, bool axis_first) {
  const int n = ctx.num_inputs() - 1;
  const int first = axis_first ? 1 : 0;
  ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(ctx.input(axis_first ? 0 : n), "Concat: axis"));
  const Tensor& x0 = ctx.input(first);
  const int rank = x0.dims();
  if (rank == 0) {
    return absl::InvalidArgumentError("Concat: can't concatenate scalars (use Pack instead)");
  }
  AxisPlan plan;
  ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis_value, rank, "Concat: axis", x0.shape()));
  const int64_t axis = plan.axis;
  int64_t axis_size = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& x = ctx.input(first + i);
    bool match = x.dims() == rank;
    for (int d = 0; match && d < rank; ++d) match = d == axis || x.dim_size(d) == x0.dim_size(d);
    if (!match) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Concat: dimensions of inputs should match except along axis ", axis, ": shape[0] = ",
          x0.shape().DebugString(), " vs. shape[", i, "] = ", x.shape().DebugString()));
    }
    axis_size += x.dim_size(axis);
  }
  plan.out_shape = x0.shape();
  plan.out_shape.set_dim(static_cast<int>(axis), axis_size);
  return plan;
}

absl::StatusOr<AxisPlan> PlanSplit(const Tensor& split_dim, const Tensor& x, int64_t num) {
  ASSIGN_OR_RETURN(int64_t axis_value, ReadScalar(split_dim, "Split: axis"));
  AxisPlan plan;
  ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis_value, x.dims(), "Split: axis", x.shape()));
  const int64_t d = x.dim_size(plan.axis);
  if (d % num != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Number of ways to split should evenly divide the split dimension, but got split_dim ",
        plan.axis, " (size = ", d, ") and num_split ", num));
  }
  plan.out_shape = x.shape();
  plan.out_shape.set_dim(static_cast<int>(plan.axis), d / num);
  return plan;
}

absl::StatusOr<AxisPlan> PlanPack(const OpKernelContext& ctx, int64_t axis) {
  const int n = ctx.num_inputs();
  const Tensor& x0 = ctx.input(0);
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).shape() != x0.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Pack: shapes of all inputs must match: values[0].shape = ", x0.shape().DebugString(),
          " != values[", i, "].shape = ", ctx.input(i).shape().DebugString()));
    }
  }
  AxisPlan plan;
  ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis, x0.dims() + 1, "Pack: axis", x0.shape()));
  plan.out_shape = x0.shape();
  plan.out_shape.InsertDim(static_cast<int>(plan.axis), n);
  return plan;
}

absl::StatusOr<AxisPlan> PlanUnpack(const Tensor& x, int64_t axis, int64_t num) {
  AxisPlan plan;
  ASSIGN_OR_RETURN(plan.axis, CanonicalAxis(axis, x.dims(), "Unpack: axis", x.shape()));
  if (x.dim_size(plan.axis) != num) {
    return absl::InvalidArgumentError(absl::StrCat("Unpack: input shape ", x.shape().DebugString(),
                                                   " has ", x.dim_size(plan.axis), " along axis ",
                                                   plan.axis, " but num = ", num));
  }
  plan.out_shape = x.shape();
  plan.out_shape.RemoveDim(static_cast<int>(plan.axis));
  return plan;
}

absl::StatusOr<SlicePlan> PlanSlice(const Tensor& x, const Tensor& begin_input,
                                    const Tensor& size_input) {
  SlicePlan plan;
  ASSIGN_OR_RETURN(plan.begin, ReadVector(begin_input, "Slice: begin"));
  ASSIGN_OR_RETURN(plan.size, ReadVector(size_input, "Slice: size"));
  std::vector<int64_t>& begin = plan.begin;
  std::vector<int64_t>& size = plan.size;
  const int rank = x.dims();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("Slice: expected begin and size of length ", rank, " for input shape ",
                     x.shape().DebugString(), ", got begin ", IntsDebugString(begin), " and size ",
                     IntsDebugString(size)));
  }
  plan.is_identity = true;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = x.dim_size(i);
    if (size[i] == -1) size[i] = d - begin[i];
    if (begin[i] < 0 || begin[i] > d || size[i] < 0 || begin[i] + size[i] > d) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: expected begin[", i, "] in [0, ", d, "] and size[", i, "] in [0, ",
                       d - begin[i], "], but got begin ", IntsDebugString(begin), " and size ",
                       IntsDebugString(size), " for input shape ", x.shape().DebugString()));
    }
    plan.is_identity = plan.is_identity && begin[i] == 0 && size[i] == d;
  }
  return plan;
}

absl::StatusOr<StridedSliceSpec> ReadStridedSliceSpec(const OpKernelConstruction& ctx) {
  StridedSliceSpec spec;
  ASSIGN_OR_RETURN(spec.begin_mask, ctx.GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(spec.end_mask, ctx.GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(spec.ellipsis_mask, ctx.GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(spec.new_axis_mask, ctx.GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(spec.shrink_axis_mask, ctx.GetAttr<int64_t>("shrink_axis_mask"));
  return spec;
}

absl::StatusOr<StridedSlicePlan> PlanStridedSliceOfInputs(const OpKernelContext& ctx, int first,
                                                          const TensorShape& shape,
                                                          const StridedSliceSpec& spec) {
  ASSIGN_OR_RETURN(std::vector<int64_t> begin, ReadVector(ctx.input(first), "StridedSlice: begin"));
  ASSIGN_OR_RETURN(std::vector<int64_t> end, ReadVector(ctx.input(first + 1), "StridedSlice: end"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                   ReadVector(ctx.input(first + 2), "StridedSlice: strides"));
  absl::StatusOr<StridedSlicePlan> plan = PlanStridedSlice(shape, begin, end, strides, spec);
  if (!plan.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(plan.status().message(), " (input shape ", shape.DebugString(), ", begin ",
                     IntsDebugString(begin), ", end ", IntsDebugString(end), ", strides ",
                     IntsDebugString(strides), ")"));
  }
  return plan;
}

absl::StatusOr<StridedSliceGradPlan> PlanStridedSliceGrad(const OpKernelContext& ctx,
                                                          const StridedSliceSpec& spec) {
  StridedSliceGradPlan plan;
  ASSIGN_OR_RETURN(plan.dims, ReadVector(ctx.input(0), "StridedSliceGrad: shape"));
  for (int64_t d : plan.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StridedSliceGrad: shape ", IntsDebugString(plan.dims), " must be non-negative"));
    }
  }
  plan.shape = TensorShape(absl::MakeConstSpan(plan.dims));
  const Tensor& dy = ctx.input(4);
  ASSIGN_OR_RETURN(plan.slice, PlanStridedSliceOfInputs(ctx, 1, plan.shape, spec));
  if (dy.shape() != plan.slice.final_shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "StridedSliceGrad: dy has shape ", dy.shape().DebugString(), " but the slice of ",
        plan.shape.DebugString(), " has shape ", plan.slice.final_shape.DebugString()));
  }
  return plan;
}

absl::Status CheckGatherBatchDims(const OpKernelConstruction& ctx, bool has_axis) {
  if (!has_axis) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t batch_dims, ctx.GetAttr<int64_t>("batch_dims"));
  if (batch_dims != 0) {
    return absl::UnimplementedError(
        absl::StrCat("GatherV2: batch_dims = ", batch_dims, " is not supported (only 0)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> GatherAxis(const OpKernelContext& ctx, bool has_axis) {
  const Tensor& params = ctx.input(0);
  int64_t axis_value = 0;
  if (has_axis) {
    ASSIGN_OR_RETURN(axis_value, ReadScalar(ctx.input(2), "GatherV2: axis"));
  }
  if (params.dims() == 0) {
    return absl::InvalidArgumentError("Gather: params must be at least 1-D, got a scalar");
  }
  return CanonicalAxis(axis_value, params.dims(), "Gather: axis", params.shape());
}

TensorShape GatherShape(const TensorShape& params, const TensorShape& indices, int64_t axis) {
  const std::vector<int64_t>& pd = params.dims();
  std::vector<int64_t> out_dims(pd.begin(), pd.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims().begin(), indices.dims().end());
  out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
  return TensorShape(absl::MakeConstSpan(out_dims));
}

absl::StatusOr<SegmentSumPlan> PlanUnsortedSegmentSum(const OpKernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& ids = ctx.input(1);
  const std::string& op = ctx.node().op();
  SegmentSumPlan plan;
  ASSIGN_OR_RETURN(plan.num_segments, ReadScalar(ctx.input(2), absl::StrCat(op, ": num_segments")));
  const int64_t num = plan.num_segments;
  if (num < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": num_segments must be non-negative, got ", num));
  }
  bool prefix = ids.dims() <= data.dims();
  for (int i = 0; prefix && i < ids.dims(); ++i) prefix = ids.dim_size(i) == data.dim_size(i);
  if (!prefix) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": data.shape = ", data.shape().DebugString(),
                     " does not start with segment_ids.shape = ", ids.shape().DebugString()));
  }
  std::vector<int64_t> out_dims = {num};
  out_dims.insert(out_dims.end(), data.shape().dims().begin() + ids.dims(),
                  data.shape().dims().end());
  plan.out_shape = TensorShape(absl::MakeConstSpan(out_dims));
  plan.inner = Product(data.shape().dims(), ids.dims(), data.dims());
  return plan;
}

absl::StatusOr<PadPlan> PlanPad(absl::string_view op, const Tensor& x, const Tensor& paddings) {
  const int rank = x.dims();
  if (paddings.dims() != 2 || paddings.dim_size(0) != rank || paddings.dim_size(1) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": paddings must be a [rank, 2] = [", rank,
                                                   ", 2] matrix, got ",
                                                   paddings.shape().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadInts(paddings, "paddings"));
  PadPlan p;
  p.out_shape = x.shape();
  p.before.resize(rank);
  for (int i = 0; i < rank; ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": paddings must be non-negative, got ",
                                                     pads[2 * i], " and ", pads[2 * i + 1]));
    }
    p.out_shape.set_dim(i, x.dim_size(i) + pads[2 * i] + pads[2 * i + 1]);
    p.before[i] = pads[2 * i];
  }
  return p;
}

absl::Status CheckPadValue(const Tensor& value) {
  if (value.NumElements() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "PadV2: constant_values must be a scalar, got ", value.shape().DebugString()));
}

absl::StatusOr<OneHotPlan> PlanOneHot(int64_t axis, const Tensor& indices, const Tensor& depth,
                                      const Tensor& on_value, const Tensor& off_value) {
  const int rank = indices.dims();
  if (axis < -1 || axis > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("OneHot: axis ", axis, " must be -1 or in [0, ", rank, "]"));
  }
  OneHotPlan p;
  ASSIGN_OR_RETURN(p.depth, ReadScalar(depth, "OneHot: depth"));
  if (p.depth < 0) return absl::InvalidArgumentError(absl::StrCat("OneHot: depth ", p.depth, " < 0"));
  if (on_value.NumElements() != 1 || off_value.NumElements() != 1) {
    return absl::InvalidArgumentError("OneHot: on_value and off_value must be scalars");
  }
  const int at = axis == -1 ? rank : static_cast<int>(axis);
  p.out_shape = indices.shape();
  p.out_shape.InsertDim(at, p.depth);
  p.prefix = Product(indices.shape().dims(), 0, at);
  p.suffix = Product(indices.shape().dims(), at, rank);
  return p;
}

}  // namespace internal
}  // namespace sluice
