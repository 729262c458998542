// GPU element moves of the array ops: Transpose, Tile, ConcatV2 / Concat,
// Split, Pack, Unpack, Slice, StridedSlice, StridedSliceGrad, GatherV2 /
// Gather, ResourceGather and UnsortedSegmentSum. Their shells (ops/array/array_index_kernels.h)
// check the arguments, read the index arguments from host memory (HostMemory
// args), share the input where the result equals it and allocate, as on the
// CPU; GpuIndexImpl enqueues one of the launchers of array.cu.h.
//
// Differences from the CPU kernels, forced by indices that stay on the GPU:
// Gather and ResourceGather write zeros for out-of-range indices instead of
// failing, and
// UnsortedSegmentSum drops ids >= num_segments instead of failing.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "ops/array/array_index_kernels.h"
#include "ops/gpu/array.cu.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/internal/array_kernel_util.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/internal/array_util.h"
#include "ops/state/resource_variable_ops.h"

namespace sluice {
namespace {

using internal::IntsDebugString;
using internal::Product;

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


// ---- Slicing --------------------------------------------------------------


// ---- Gathering and scattering ------------------------------------------------

bool IsInt64(const Tensor& t) { return t.dtype() == DT_INT64; }

absl::Status CheckIndexType(const Tensor& t, absl::string_view what) {
  if (t.dtype() == DT_INT32 || t.dtype() == DT_INT64) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be int32 or int64, got ", DataTypeName(t.dtype())));
}

// The GPU's element moves for the shells of ops/array/array_index_kernels.h.
// Gather's indices and UnsortedSegmentSum's ids stay on the GPU: an index
// out of range gives a row of zeros, an id >= num_segments is dropped (as a
// negative one is), where the CPU returns InvalidArgument.
struct GpuIndexImpl {
  static absl::Status Transpose(OpKernelContext* ctx, const Tensor& x,
                                const internal::TransposePlan& plan, Tensor* y) {
    const std::vector<int64_t>& merged_dims = plan.merged_dims;
    const std::vector<int64_t>& merged_perm = plan.merged_perm;
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
    return ::sluice::StridedGather(ctx, x, y, map);
  }

  static absl::Status Tile(OpKernelContext* ctx, const Tensor& x, const internal::TilePlan& plan,
                           Tensor* out) {
    const std::vector<int64_t>& multiples = plan.multiples;
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

  static absl::Status ConcatColumns(OpKernelContext* ctx, const std::vector<const Tensor*>& inputs,
                                    const std::vector<int64_t>& widths, int64_t rows,
                                    Tensor* out) {
    return ::sluice::ConcatColumns(ctx, inputs, widths, rows, out);
  }

  static absl::Status SplitRows(OpKernelContext* ctx, const Tensor& x, int64_t num,
                                int64_t outer, int64_t chunk, const TensorShape& out_shape) {
    return ::sluice::SplitRows(ctx, x, num, outer, chunk, out_shape);
  }

  static absl::Status StridedGather(OpKernelContext* ctx, const Tensor& x,
                                    const std::vector<int64_t>& begin,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& size, Tensor* out,
                                    const char* op) {
    ASSIGN_OR_RETURN(gpu::StridedMap map, BoxMap(x.shape().dims(), begin, strides, size, op));
    return ::sluice::StridedGather(ctx, x, out, map);
  }

  static absl::Status StridedScatter(OpKernelContext* ctx, const Tensor& dy,
                                     const std::vector<int64_t>& dims,
                                     const internal::StridedSlicePlan& plan, Tensor* out) {
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

  static absl::Status Gather(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                             int64_t axis, Tensor* out) {
    RETURN_IF_ERROR(CheckIndexType(indices, "Gather: indices"));
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t>& pd = params.shape().dims();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx,
        gpu::LaunchGather(params.raw_data(), indices.raw_data(), IsInt64(indices), out->raw_data(),
                          Product(pd, 0, axis), pd[axis], indices.NumElements(),
                          Product(pd, axis + 1, pd.size()), DataTypeSize(params.dtype()), stream));
  }

  template <typename T>
  static absl::Status UnsortedSegmentSum(OpKernelContext* ctx, const Tensor& data,
                                         const Tensor& ids, const internal::SegmentSumPlan& plan,
                                         Tensor* out) {
    RETURN_IF_ERROR(CheckIndexType(ids, "UnsortedSegmentSum: segment_ids"));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchUnsortedSegmentSum(
                                 data.data<T>(), ids.raw_data(), IsInt64(ids), out->data<T>(),
                                 ids.NumElements(), plan.inner, plan.num_segments, stream));
  }
};

using Impl = GpuIndexImpl;

// ResourceGather(resource, indices): rows `indices` of a resource
// variable's value on this GPU; the handle in host memory, the indices in
// device memory.
class ResourceGatherOp : public internal::ResourceGatherBase {
 protected:
  absl::Status Rows(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                    Tensor* out) override {
    return Impl::Gather(ctx, params, indices, /*axis=*/0, out);
  }
};

}  // namespace

namespace internal {

void RegisterGpuIndexKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& types = GpuArrayTypes();
  auto gpu = [](const char* op) { return GpuKernel(op); };

  kernels->Register<TransposeOp<Impl>>(gpu("Transpose").TypeConstraint("T", types).HostMemory("perm"));
  kernels->Register<TileOp<Impl>>(gpu("Tile").TypeConstraint("T", types).HostMemory("multiples"));
  kernels->Register(gpu("ConcatV2").TypeConstraint("T", types).HostMemory("axis"),
                    [] { return std::make_unique<ConcatOp<Impl>>(/*axis_first=*/false); });
  kernels->Register(gpu("Concat").TypeConstraint("T", types).HostMemory("concat_dim"),
                    [] { return std::make_unique<ConcatOp<Impl>>(/*axis_first=*/true); });
  kernels->Register<SplitOp<Impl>>(gpu("Split").TypeConstraint("T", types).HostMemory("split_dim"));
  kernels->Register<PackOp<Impl>>(gpu("Pack").TypeConstraint("T", types));
  kernels->Register<UnpackOp<Impl>>(gpu("Unpack").TypeConstraint("T", types));

  kernels->Register<SliceOp<Impl>>(
      gpu("Slice").TypeConstraint("T", types).HostMemory("begin").HostMemory("size"));
  kernels->Register<StridedSliceOp<Impl>>(gpu("StridedSlice")
                                           .TypeConstraint("T", types)
                                           .HostMemory("begin")
                                           .HostMemory("end")
                                           .HostMemory("strides"));
  kernels->Register<StridedSliceGradOp<Impl>>(gpu("StridedSliceGrad")
                                               .TypeConstraint("T", types)
                                               .HostMemory("shape")
                                               .HostMemory("begin")
                                               .HostMemory("end")
                                               .HostMemory("strides"));

  kernels->Register(gpu("GatherV2").TypeConstraint("Tparams", types).HostMemory("axis"),
                    [] { return std::make_unique<GatherOp<Impl>>(/*has_axis=*/true); });
  kernels->Register(gpu("Gather").TypeConstraint("Tparams", types),
                    [] { return std::make_unique<GatherOp<Impl>>(/*has_axis=*/false); });
  kernels->Register<ResourceGatherOp>(
      gpu("ResourceGather").TypeConstraint("dtype", types).HostMemory("resource"));
  kernels->Register<UnsortedSegmentSumOp<Impl, float>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_FLOAT).HostMemory("num_segments"));
  kernels->Register<UnsortedSegmentSumOp<Impl, double>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_DOUBLE).HostMemory("num_segments"));
  kernels->Register<UnsortedSegmentSumOp<Impl, int64_t>>(
      gpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT64).HostMemory("num_segments"));
}

}  // namespace internal
}  // namespace sluice
