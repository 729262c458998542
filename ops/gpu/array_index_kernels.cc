// GPU kernels of the array ops that move elements: Transpose, Tile,
// ConcatV2 / Concat, Split, Pack, Unpack, Slice, StridedSlice,
// StridedSliceGrad, GatherV2 / Gather and UnsortedSegmentSum. The host side
// validates exactly as the CPU kernels do (same messages), reads the index
// arguments from host memory (HostMemory args) and enqueues one of the
// launchers of array.cu.h. Buffers are shared, as on the CPU, where the
// result equals the input (identity Transpose, Tile, Slice, StridedSlice).
//
// Differences from the CPU kernels, forced by indices that stay on the GPU:
// Gather writes zeros for out-of-range indices instead of failing, and
// UnsortedSegmentSum drops ids >= num_segments instead of failing.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/status_macros.h"
#include "ops/gpu/array.cu.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/internal/array_kernel_util.h"
#include "ops/internal/array_util.h"

namespace sluice {
namespace {

using internal::CanonicalAxis;
using internal::CheckPermutation;
using internal::IntsDebugString;
using internal::ReadHostInts;
using internal::ReadHostScalar;
using internal::ReadHostVector;

// The product of dims[begin, end).
int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// The map of a box of `dims` whose element steps are `steps`, starting at
// `base`: dimensions of 1 dropped, neighbours that walk as one dimension
// merged. Unimplemented when more than kMaxArrayDims dimensions remain.
absl::StatusOr<gpu::StridedMap> MakeStridedMap(absl::Span<const int64_t> dims,
                                               absl::Span<const int64_t> steps, int64_t base,
                                               absl::string_view what) {
  std::vector<int64_t> d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == steps[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = steps[i];
    } else {
      d.push_back(dims[i]);
      s.push_back(steps[i]);
    }
  }
  if (d.size() > static_cast<size_t>(gpu::kMaxArrayDims)) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": ", d.size(), " dimensions after merging (box ", IntsDebugString(dims),
                     "); the GPU kernel takes at most ", gpu::kMaxArrayDims));
  }
  gpu::StridedMap map;
  map.rank = static_cast<int>(d.size());
  map.base = base;
  for (size_t i = 0; i < d.size(); ++i) {
    map.dims[i] = d[i];
    map.steps[i] = s[i];
  }
  return map;
}

// The map of the box `box` of a row-major tensor of `full_dims` that
// starts at `begin` and steps `strides` (possibly negative) per dimension.
absl::StatusOr<gpu::StridedMap> BoxMap(absl::Span<const int64_t> full_dims,
                                       absl::Span<const int64_t> begin,
                                       absl::Span<const int64_t> strides,
                                       absl::Span<const int64_t> box, absl::string_view what) {
  const std::vector<int64_t> full_strides = RowMajorStrides(full_dims);
  int64_t base = 0;
  std::vector<int64_t> steps(full_dims.size());
  for (size_t i = 0; i < full_dims.size(); ++i) {
    base += begin[i] * full_strides[i];
    steps[i] = strides[i] * full_strides[i];
  }
  return MakeStridedMap(box, steps, base, what);
}

absl::Status StridedGather(OpKernelContext* ctx, const Tensor& in, Tensor* out,
                           const gpu::StridedMap& map) {
  ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
  return LaunchStatus(ctx,
                      gpu::LaunchStridedGather(in.raw_data(), out->raw_data(), out->NumElements(),
                                               DataTypeSize(in.dtype()), map, stream));
}

// ---- Transposing and tiling ----------------------------------------------

class TransposeGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadHostVector(ctx->input(1), "Transpose: perm"));
    if (static_cast<int>(perm.size()) != x.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Transpose: perm ", IntsDebugString(perm), " has ", perm.size(),
                       " entries but x has shape ", x.shape().DebugString()));
    }
    RETURN_IF_ERROR(CheckPermutation(perm, "Transpose: perm"));
    TensorShape out_shape = x.shape();
    for (size_t i = 0; i < perm.size(); ++i) out_shape.set_dim(i, x.dim_size(perm[i]));
    if (x.NumElements() == 0) return ctx->allocate_output(0, out_shape).status();

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
    std::vector<size_t> order(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) order[g] = g;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
    // Merged dims in input order, and the perm over them.
    std::vector<int64_t> merged_dims(groups.size()), merged_perm(groups.size());
    std::vector<int64_t> rank_in_input(groups.size());
    for (size_t k = 0; k < order.size(); ++k) {
      rank_in_input[order[k]] = static_cast<int64_t>(k);
      int64_t n = 1;
      for (int64_t d : groups[order[k]]) n *= dims[d];
      merged_dims[k] = n;
    }
    bool identity = true;
    for (size_t g = 0; g < groups.size(); ++g) {
      merged_perm[g] = rank_in_input[g];
      identity = identity && merged_perm[g] == static_cast<int64_t>(g);
    }
    if (identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, out_shape));
    const int esize = DataTypeSize(x.dtype());
    const size_t rank = merged_dims.size();
    if (rank == 2 || (rank == 3 && merged_perm[0] == 0 && merged_perm[1] == 2)) {
      // [rows, cols] -> [cols, rows], or that per batch entry.
      const int64_t batch = rank == 2 ? 1 : merged_dims[0];
      ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
      return LaunchStatus(
          ctx, gpu::LaunchBatchTranspose(x.raw_data(), y->raw_data(), batch, merged_dims[rank - 2],
                                         merged_dims[rank - 1], esize, stream));
    }
    const std::vector<int64_t> in_strides = RowMajorStrides(merged_dims);
    std::vector<int64_t> out_dims(rank), steps(rank);
    for (size_t k = 0; k < rank; ++k) {
      out_dims[k] = merged_dims[merged_perm[k]];
      steps[k] = in_strides[merged_perm[k]];
    }
    ASSIGN_OR_RETURN(gpu::StridedMap map, MakeStridedMap(out_dims, steps, 0, "Transpose"));
    return StridedGather(ctx, x, y, map);
  }
};

class TileGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> multiples,
                     ReadHostVector(ctx->input(1), "Tile: multiples"));
    if (static_cast<int>(multiples.size()) != x.dims()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Tile: multiples ", IntsDebugString(multiples), " has ", multiples.size(),
                       " entries but input has shape ", x.shape().DebugString()));
    }
    TensorShape out_shape = x.shape();
    bool identity = true;
    for (int i = 0; i < x.dims(); ++i) {
      if (multiples[i] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Tile: multiples ", IntsDebugString(multiples), " must be non-negative"));
      }
      out_shape.set_dim(i, x.dim_size(i) * multiples[i]);
      identity = identity && multiples[i] == 1;
    }
    if (identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Drop dims of 1 repeated once; fold a dim repeated once into the one
    // before it (coordinate c*n + c' modulo in*n is (c mod in)*n + c').
    std::vector<int64_t> in_dims, mults;
    for (int i = 0; i < x.dims(); ++i) {
      const int64_t n = x.dim_size(i);
      if (n == 1 && multiples[i] == 1) continue;
      if (!in_dims.empty() && multiples[i] == 1) {
        in_dims.back() *= n;
      } else {
        in_dims.push_back(n);
        mults.push_back(multiples[i]);
      }
    }
    if (in_dims.size() > static_cast<size_t>(gpu::kMaxArrayDims)) {
      return absl::UnimplementedError(
          absl::StrCat("Tile: input shape ", x.shape().DebugString(), " with multiples ",
                       IntsDebugString(multiples), " needs ", in_dims.size(),
                       " dimensions; the GPU kernel takes at most ", gpu::kMaxArrayDims));
    }
    gpu::TileMap map;
    map.rank = static_cast<int>(in_dims.size());
    for (size_t i = 0; i < in_dims.size(); ++i) {
      map.in_dims[i] = in_dims[i];
      map.out_dims[i] = in_dims[i] * mults[i];
    }
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchTile(x.raw_data(), out->raw_data(), out->NumElements(),
                                             DataTypeSize(x.dtype()), map, stream));
  }
};

// ---- Joining and splitting ------------------------------------------------

// Writes `inputs` (each a row-major [rows, widths[i]] tensor) side by side
// into `out`, a row-major [rows, sum of widths] tensor.
absl::Status ConcatColumns(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs,
                           const std::vector<int64_t>& widths, int64_t rows, Tensor* out) {
  int64_t out_cols = 0;
  for (int64_t w : widths) out_cols += w;
  if (rows == 0 || out_cols == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
  const int esize = DataTypeSize(out->dtype());
  gpu::ConcatPieces pieces;
  int64_t col = 0;
  auto flush = [&]() -> absl::Status {
    if (pieces.count == 0) return absl::OkStatus();
    const cudaError_t e = gpu::LaunchConcat(pieces, out->raw_data(), rows, out_cols, esize, stream);
    pieces = gpu::ConcatPieces();
    return LaunchStatus(ctx, e);
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (widths[i] == 0) continue;
    if (pieces.count == gpu::kMaxConcatPieces) RETURN_IF_ERROR(flush());
    pieces.ptrs[pieces.count] = inputs[i]->raw_data();
    pieces.col_begin[pieces.count] = col;
    col += widths[i];
    ++pieces.count;
    pieces.col_begin[pieces.count] = col;
  }
  return flush();
}

// ConcatV2 (axis last) and Concat (axis first).
class ConcatGpuOp : public OpKernel {
 public:
  explicit ConcatGpuOp(bool axis_first) : axis_first_(axis_first) {}
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    ASSIGN_OR_RETURN(int64_t axis_value,
                     ReadHostScalar(ctx->input(axis_first_ ? 0 : n), "Concat: axis"));
    const Tensor& x0 = ctx->input(first);
    const int rank = x0.dims();
    if (rank == 0) {
      return absl::InvalidArgumentError("Concat: can't concatenate scalars (use Pack instead)");
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, rank, "Concat: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    int64_t axis_size = 0;
    std::vector<const Tensor*> inputs(n);
    std::vector<int64_t> widths(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx->input(first + i);
      bool match = x.dims() == rank;
      for (int d = 0; match && d < rank; ++d) match = d == axis || x.dim_size(d) == x0.dim_size(d);
      if (!match) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Concat: dimensions of inputs should match except along axis ", axis, ": shape[0] = ",
            x0.shape().DebugString(), " vs. shape[", i, "] = ", x.shape().DebugString()));
      }
      axis_size += x.dim_size(axis);
      inputs[i] = &x;
      widths[i] = Product(x.shape().dims(), axis, rank);
    }
    out_shape.set_dim(static_cast<int>(axis), axis_size);
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    return ConcatColumns(ctx, inputs, widths, Product(x0.shape().dims(), 0, axis), out);
  }

 private:
  const bool axis_first_;
};

class PackGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      if (ctx->input(i).shape() != x0.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Pack: shapes of all inputs must match: values[0].shape = ", x0.shape().DebugString(),
            " != values[", i, "].shape = ", ctx->input(i).shape().DebugString()));
      }
    }
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x0.dims() + 1, "Pack: axis", x0.shape()));
    TensorShape out_shape = x0.shape();
    out_shape.InsertDim(static_cast<int>(axis), n);
    if (n == 1) {
      ASSIGN_OR_RETURN(Tensor y, x0.Reshaped(out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, out_shape));
    std::vector<const Tensor*> inputs(n);
    for (int i = 0; i < n; ++i) inputs[i] = &ctx->input(i);
    const std::vector<int64_t> widths(n, Product(x0.shape().dims(), axis, x0.dims()));
    return ConcatColumns(ctx, inputs, widths, Product(x0.shape().dims(), 0, axis), out);
  }

 private:
  int64_t axis_ = 0;
};

// Output i (of num) takes, from each of `outer` rows of x, the i-th run of
// `chunk` elements.
absl::Status SplitRows(OpKernelContext* ctx, const Tensor& x, int64_t num, int64_t outer,
                       int64_t chunk, const TensorShape& out_shape) {
  const int esize = DataTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  for (int64_t i = 0; i < num; ++i) {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(static_cast<int>(i), out_shape));
    if (outer == 0 || chunk == 0) continue;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(
        LaunchStatus(ctx, gpu::LaunchCopyRows(src + i * chunk * esize, num * chunk, out->raw_data(),
                                              chunk, outer, chunk, esize, stream)));
  }
  return absl::OkStatus();
}

class SplitGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(1);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis_value, ReadHostScalar(ctx->input(0), "Split: axis"));
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_value, x.dims(), "Split: axis", x.shape()));
    const int64_t d = x.dim_size(axis);
    if (d % num != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Number of ways to split should evenly divide the split dimension, but got split_dim ",
          axis, " (size = ", d, ") and num_split ", num));
    }
    if (num == 1) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    TensorShape out_shape = x.shape();
    out_shape.set_dim(static_cast<int>(axis), d / num);
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis),
                     Product(out_shape.dims(), axis, x.dims()), out_shape);
  }
};

class UnpackGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(int64_t axis, CanonicalAxis(axis_, x.dims(), "Unpack: axis", x.shape()));
    if (x.dim_size(axis) != num) {
      return absl::InvalidArgumentError(
          absl::StrCat("Unpack: input shape ", x.shape().DebugString(), " has ", x.dim_size(axis),
                       " along axis ", axis, " but num = ", num));
    }
    TensorShape out_shape = x.shape();
    out_shape.RemoveDim(static_cast<int>(axis));
    if (num == 1) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    return SplitRows(ctx, x, num, Product(x.shape().dims(), 0, axis),
                     Product(x.shape().dims(), axis + 1, x.dims()), out_shape);
  }

 private:
  int64_t axis_ = 0;
};

// ---- Slicing --------------------------------------------------------------

class SliceGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> begin, ReadHostVector(ctx->input(1), "Slice: begin"));
    ASSIGN_OR_RETURN(std::vector<int64_t> size, ReadHostVector(ctx->input(2), "Slice: size"));
    const int rank = x.dims();
    if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Slice: expected begin and size of length ", rank, " for input shape ",
                       x.shape().DebugString(), ", got begin ", IntsDebugString(begin),
                       " and size ", IntsDebugString(size)));
    }
    bool identity = true;
    for (int i = 0; i < rank; ++i) {
      const int64_t d = x.dim_size(i);
      if (size[i] == -1) size[i] = d - begin[i];
      if (begin[i] < 0 || begin[i] > d || size[i] < 0 || begin[i] + size[i] > d) {
        return absl::InvalidArgumentError(
            absl::StrCat("Slice: expected begin[", i, "] in [0, ", d, "] and size[", i, "] in [0, ",
                         d - begin[i], "], but got begin ", IntsDebugString(begin), " and size ",
                         IntsDebugString(size), " for input shape ", x.shape().DebugString()));
      }
      identity = identity && begin[i] == 0 && size[i] == d;
    }
    if (identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(size))));
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> strides(rank, 1);
    ASSIGN_OR_RETURN(gpu::StridedMap map, BoxMap(x.shape().dims(), begin, strides, size, "Slice"));
    return StridedGather(ctx, x, out, map);
  }
};

absl::StatusOr<internal::StridedSliceSpec> ReadSpec(const OpKernelConstruction& ctx) {
  internal::StridedSliceSpec spec;
  ASSIGN_OR_RETURN(spec.begin_mask, ctx.GetAttr<int64_t>("begin_mask"));
  ASSIGN_OR_RETURN(spec.end_mask, ctx.GetAttr<int64_t>("end_mask"));
  ASSIGN_OR_RETURN(spec.ellipsis_mask, ctx.GetAttr<int64_t>("ellipsis_mask"));
  ASSIGN_OR_RETURN(spec.new_axis_mask, ctx.GetAttr<int64_t>("new_axis_mask"));
  ASSIGN_OR_RETURN(spec.shrink_axis_mask, ctx.GetAttr<int64_t>("shrink_axis_mask"));
  return spec;
}

// Reads begin/end/strides (inputs first..first+2, host memory) and plans
// the slice of a tensor of `shape`.
absl::StatusOr<internal::StridedSlicePlan> PlanFromInputs(OpKernelContext* ctx, int first,
                                                          const TensorShape& shape,
                                                          const internal::StridedSliceSpec& spec) {
  ASSIGN_OR_RETURN(std::vector<int64_t> begin,
                   ReadHostVector(ctx->input(first), "StridedSlice: begin"));
  ASSIGN_OR_RETURN(std::vector<int64_t> end,
                   ReadHostVector(ctx->input(first + 1), "StridedSlice: end"));
  ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                   ReadHostVector(ctx->input(first + 2), "StridedSlice: strides"));
  absl::StatusOr<internal::StridedSlicePlan> plan =
      internal::PlanStridedSlice(shape, begin, end, strides, spec);
  if (!plan.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(plan.status().message(), " (input shape ", shape.DebugString(), ", begin ",
                     IntsDebugString(begin), ", end ", IntsDebugString(end), ", strides ",
                     IntsDebugString(strides), ")"));
  }
  return plan;
}

class StridedSliceGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, ReadSpec(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::StridedSlicePlan plan, PlanFromInputs(ctx, 1, x.shape(), spec_));
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(plan.final_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.final_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(gpu::StridedMap map, BoxMap(x.shape().dims(), plan.begin, plan.strides,
                                                 plan.processing_dims, "StridedSlice"));
    return StridedGather(ctx, x, out, map);
  }

 private:
  internal::StridedSliceSpec spec_;
};

class StridedSliceGradGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, ReadSpec(ctx));
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                     ReadHostVector(ctx->input(0), "StridedSliceGrad: shape"));
    for (int64_t d : dims) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "StridedSliceGrad: shape ", IntsDebugString(dims), " must be non-negative"));
      }
    }
    const TensorShape shape(absl::MakeConstSpan(dims));
    const Tensor& dy = ctx->input(4);
    ASSIGN_OR_RETURN(internal::StridedSlicePlan plan, PlanFromInputs(ctx, 1, shape, spec_));
    if (dy.shape() != plan.final_shape) {
      return absl::InvalidArgumentError(absl::StrCat(
          "StridedSliceGrad: dy has shape ", dy.shape().DebugString(), " but the slice of ",
          shape.DebugString(), " has shape ", plan.final_shape.DebugString()));
    }
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, dy.Reshaped(shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(
        LaunchStatus(ctx, cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream)));
    if (dy.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(gpu::StridedMap map, BoxMap(dims, plan.begin, plan.strides,
                                                 plan.processing_dims, "StridedSliceGrad"));
    return LaunchStatus(ctx,
                        gpu::LaunchStridedScatter(dy.raw_data(), out->raw_data(), dy.NumElements(),
                                                  DataTypeSize(dy.dtype()), map, stream));
  }

 private:
  internal::StridedSliceSpec spec_;
};

// ---- Gathering and scattering ------------------------------------------------

bool IsInt64(const Tensor& t) { return t.dtype() == DT_INT64; }

absl::Status CheckIndexType(const Tensor& t, absl::string_view what) {
  if (t.dtype() == DT_INT32 || t.dtype() == DT_INT64) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be int32 or int64, got ", DataTypeName(t.dtype())));
}

// GatherV2 (axis input, host memory) and Gather (axis 0). Indices stay on
// the GPU; out-of-range ones give rows of zeros.
class GatherGpuOp : public OpKernel {
 public:
  explicit GatherGpuOp(bool has_axis) : has_axis_(has_axis) {}
  absl::Status Init(const OpKernelConstruction& ctx) override {
    if (has_axis_) {
      ASSIGN_OR_RETURN(int64_t batch_dims, ctx.GetAttr<int64_t>("batch_dims"));
      if (batch_dims != 0) {
        return absl::UnimplementedError(
            absl::StrCat("GatherV2: batch_dims = ", batch_dims, " is not supported (only 0)"));
      }
    }
    return absl::OkStatus();
  }
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis_value = 0;
    if (has_axis_) {
      ASSIGN_OR_RETURN(axis_value, ReadHostScalar(ctx->input(2), "GatherV2: axis"));
    }
    if (params.dims() == 0) {
      return absl::InvalidArgumentError("Gather: params must be at least 1-D, got a scalar");
    }
    ASSIGN_OR_RETURN(int64_t axis,
                     CanonicalAxis(axis_value, params.dims(), "Gather: axis", params.shape()));
    RETURN_IF_ERROR(CheckIndexType(indices, "Gather: indices"));
    const std::vector<int64_t>& pd = params.shape().dims();
    std::vector<int64_t> out_dims(pd.begin(), pd.begin() + axis);
    out_dims.insert(out_dims.end(), indices.shape().dims().begin(), indices.shape().dims().end());
    out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx,
        gpu::LaunchGather(params.raw_data(), indices.raw_data(), IsInt64(indices), out->raw_data(),
                          Product(pd, 0, axis), pd[axis], indices.NumElements(),
                          Product(pd, axis + 1, pd.size()), DataTypeSize(params.dtype()), stream));
  }

 private:
  const bool has_axis_;
};

// num_segments in host memory; ids on the GPU (those >= num_segments are
// dropped, like negative ones).
template <typename T>
class UnsortedSegmentSumGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    ASSIGN_OR_RETURN(int64_t num,
                     ReadHostScalar(ctx->input(2), "UnsortedSegmentSum: num_segments"));
    if (num < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("UnsortedSegmentSum: num_segments must be non-negative, got ", num));
    }
    bool prefix = ids.dims() <= data.dims();
    for (int i = 0; prefix && i < ids.dims(); ++i) prefix = ids.dim_size(i) == data.dim_size(i);
    if (!prefix) {
      return absl::InvalidArgumentError(
          absl::StrCat("UnsortedSegmentSum: data.shape = ", data.shape().DebugString(),
                       " does not start with segment_ids.shape = ", ids.shape().DebugString()));
    }
    RETURN_IF_ERROR(CheckIndexType(ids, "UnsortedSegmentSum: segment_ids"));
    std::vector<int64_t> out_dims = {num};
    out_dims.insert(out_dims.end(), data.shape().dims().begin() + ids.dims(),
                    data.shape().dims().end());
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(out_dims))));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchUnsortedSegmentSum(
                 data.data<T>(), ids.raw_data(), IsInt64(ids), out->data<T>(), ids.NumElements(),
                 Product(data.shape().dims(), ids.dims(), data.dims()), num, stream));
  }
};

}  // namespace

namespace internal {

void RegisterGpuIndexKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& types = GpuArrayTypes();
  auto gpu = [](const char* op) { return GpuKernel(op); };

  kernels->Register<TransposeGpuOp>(gpu("Transpose").TypeConstraint("T", types).HostMemory("perm"));
  kernels->Register<TileGpuOp>(gpu("Tile").TypeConstraint("T", types).HostMemory("multiples"));
  kernels->Register(gpu("ConcatV2").TypeConstraint("T", types).HostMemory("axis"),
                    [] { return std::make_unique<ConcatGpuOp>(/*axis_first=*/false); });
  kernels->Register(gpu("Concat").TypeConstraint("T", types).HostMemory("concat_dim"),
                    [] { return std::make_unique<ConcatGpuOp>(/*axis_first=*/true); });
  kernels->Register<SplitGpuOp>(gpu("Split").TypeConstraint("T", types).HostMemory("split_dim"));
  kernels->Register<PackGpuOp>(gpu("Pack").TypeConstraint("T", types));
  kernels->Register<UnpackGpuOp>(gpu("Unpack").TypeConstraint("T", types));

  kernels->Register<SliceGpuOp>(
      gpu("Slice").TypeConstraint("T", types).HostMemory("begin").HostMemory("size"));
  kernels->Register<StridedSliceGpuOp>(gpu("StridedSlice")
                                           .TypeConstraint("T", types)
                                           .HostMemory("begin")
                                           .HostMemory("end")
                                           .HostMemory("strides"));
  kernels->Register<StridedSliceGradGpuOp>(gpu("StridedSliceGrad")
                                               .TypeConstraint("T", types)
                                               .HostMemory("shape")
                                               .HostMemory("begin")
                                               .HostMemory("end")
                                               .HostMemory("strides"));

  kernels->Register(gpu("GatherV2").TypeConstraint("Tparams", types).HostMemory("axis"),
                    [] { return std::make_unique<GatherGpuOp>(/*has_axis=*/true); });
  kernels->Register(gpu("Gather").TypeConstraint("Tparams", types),
                    [] { return std::make_unique<GatherGpuOp>(/*has_axis=*/false); });
  kernels->Register<UnsortedSegmentSumGpuOp<float>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_FLOAT).HostMemory("num_segments"));
  kernels->Register<UnsortedSegmentSumGpuOp<double>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_DOUBLE).HostMemory("num_segments"));
  kernels->Register<UnsortedSegmentSumGpuOp<int64_t>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT64).HostMemory("num_segments"));
}

}  // namespace internal
}  // namespace sluice
