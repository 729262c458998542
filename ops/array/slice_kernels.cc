// CPU element moves of the array ops that index or rearrange elements: Slice,
// StridedSlice, StridedSliceGrad, GatherV2, Gather, UnsortedSegmentSum, Tile
// and Transpose (their shells: ops/array/array_index_kernels.h). All but
// UnsortedSegmentSum move bytes, so one kernel serves every fixed-size
// dtype; strings move by position (MoveStrings).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "ops/array/array_index_kernels.h"
#include "ops/array/array_ops.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/array/internal/array_kernel_util.h"
#include "ops/array/internal/strided_box.h"
#include "ops/internal/array_util.h"
#include "ops/internal/index_tensors.h"

namespace sluice {
namespace {

using internal::DispatchBySize;
using internal::Product;
using internal::ReadInts;

// ---- Byte movers ---------------------------------------------------------

// ---- Transposing and tiling ----------------------------------------------

// out[i0..] = in[...] with out.dim(i) == in.dim(perm[i]); dims and perm
// already simplified (no size-1 dims, no adjacent dims that stay adjacent).
void TransposeBytes(const char* in, absl::Span<const int64_t> in_dims,
                    absl::Span<const int64_t> perm, char* out, size_t esize) {
  const int rank = static_cast<int>(perm.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * in_dims[i + 1];
  std::vector<int64_t> out_dims(rank), step(rank);
  for (int i = 0; i < rank; ++i) {
    out_dims[i] = in_dims[perm[i]];
    step[i] = in_strides[perm[i]];
  }
  DispatchBySize(esize, [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = reinterpret_cast<const U*>(in);
    U* dst = reinterpret_cast<U*>(out);
    if (rank == 2) {
      // Blocked, so that both sides stay in cache.
      constexpr int64_t kBlock = 32;
      const int64_t rows = out_dims[0], cols = out_dims[1];
      for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
        for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
          const int64_t r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
          for (int64_t r = r0; r < r1; ++r) {
            for (int64_t c = c0; c < c1; ++c) dst[r * cols + c] = src[r * step[0] + c * step[1]];
          }
        }
      }
      return;
    }
    const int64_t row = out_dims[rank - 1];
    const int64_t row_step = step[rank - 1];
    std::vector<int64_t> idx(rank - 1, 0);
    int64_t offset = 0;
    while (true) {
      const U* s = src + offset;
      for (int64_t c = 0; c < row; ++c) dst[c] = s[c * row_step];
      dst += row;
      int d = rank - 2;
      for (; d >= 0; --d) {
        offset += step[d];
        if (++idx[d] < out_dims[d]) break;
        offset -= step[d] * out_dims[d];
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  });
}


// Writes the tile of dimension d onward: the input block at `in` (dims
// in_dims[d:]) into `out` (dims out_dims[d:]).
void TileBlock(const char* in, char* out, int d, absl::Span<const int64_t> in_dims,
               absl::Span<const int64_t> multiples, absl::Span<const size_t> in_block_bytes,
               absl::Span<const size_t> out_block_bytes) {
  const int rank = static_cast<int>(in_dims.size());
  const int64_t n = in_dims[d];
  size_t one_tile;  // bytes of one copy of the input along dimension d
  if (d == rank - 1) {
    one_tile = in_block_bytes[d];
    std::memcpy(out, in, one_tile);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      TileBlock(in + i * in_block_bytes[d + 1], out + i * out_block_bytes[d + 1], d + 1, in_dims,
                multiples, in_block_bytes, out_block_bytes);
    }
    one_tile = static_cast<size_t>(n) * out_block_bytes[d + 1];
  }
  for (int64_t m = 1; m < multiples[d]; ++m) std::memcpy(out + m * one_tile, out, one_tile);
}


// ---- Strings ------------------------------------------------------------------

// DT_STRING elements are objects, not bytes: `move` moves an int64 tensor
// of x's flat positions the way it would move x (into one of out's shape),
// then each output string is copied from the position that landed there.
// One path for every mover, at the cost of an int64 per element.
template <typename Move>
absl::Status MoveStrings(const Tensor& x, Tensor* out, Move move) {
  Tensor positions(DT_INT64, x.shape());
  int64_t* p = positions.data<int64_t>();
  for (int64_t i = 0; i < x.NumElements(); ++i) p[i] = i;
  Tensor moved(DT_INT64, out->shape());
  RETURN_IF_ERROR(move(positions, &moved));
  const std::string* src = x.data<std::string>();
  std::string* dst = out->data<std::string>();
  const int64_t* m = moved.data<int64_t>();
  for (int64_t i = 0; i < out->NumElements(); ++i) dst[i] = src[m[i]];
  return absl::OkStatus();
}

// ---- Indexing -------------------------------------------------------------------

// The CPU's element moves for the shells of ops/array/array_index_kernels.h
// (the join and split ones: array_kernels.cc).
struct CpuSliceImpl {
  static absl::Status Transpose(OpKernelContext* ctx, const Tensor& x,
                                const internal::TransposePlan& plan, Tensor* y) {
    if (x.dtype() == DT_STRING) {
      return MoveStrings(x, y, [&](const Tensor& p, Tensor* m) { return Transpose(ctx, p, plan, m); });
    }
    TransposeBytes(static_cast<const char*>(x.raw_data()), plan.merged_dims, plan.merged_perm,
                   static_cast<char*>(y->raw_data()), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }

  static absl::Status Tile(OpKernelContext* ctx, const Tensor& x, const internal::TilePlan& plan,
                           Tensor* out) {
    if (x.dtype() == DT_STRING) {
      return MoveStrings(x, out, [&](const Tensor& p, Tensor* m) { return Tile(ctx, p, plan, m); });
    }
    const int rank = x.dims();
    const size_t esize = DataTypeSize(x.dtype());
    // Bytes of one block of dims [d, rank), for input and output.
    std::vector<size_t> in_block(rank + 1, esize), out_block(rank + 1, esize);
    for (int d = rank - 1; d >= 0; --d) {
      in_block[d] = in_block[d + 1] * x.dim_size(d);
      out_block[d] = out_block[d + 1] * plan.out_shape.dim(d);
    }
    TileBlock(static_cast<const char*>(x.raw_data()), static_cast<char*>(out->raw_data()), 0,
              x.shape().dims(), plan.multiples, in_block, out_block);
    return absl::OkStatus();
  }

  static absl::Status StridedGather(OpKernelContext* ctx, const Tensor& x,
                                    const std::vector<int64_t>& begin,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& size, Tensor* out,
                                    const char* op) {
    if (x.dtype() == DT_STRING) {
      return MoveStrings(x, out, [&](const Tensor& p, Tensor* m) {
        return StridedGather(ctx, p, begin, strides, size, m, op);
      });
    }
    internal::StridedBoxCopy<false>(static_cast<char*>(x.raw_data()), x.shape().dims(), begin, strides,
                          size, static_cast<char*>(out->raw_data()), DataTypeSize(x.dtype()));
    return absl::OkStatus();
  }

  static absl::Status StridedScatter(OpKernelContext*, const Tensor& dy,
                                     const std::vector<int64_t>& dims,
                                     const internal::StridedSlicePlan& plan, Tensor* out) {
    std::memset(out->raw_data(), 0, out->TotalBytes());
    internal::StridedBoxCopy<true>(static_cast<char*>(out->raw_data()), dims, plan.begin, plan.strides,
                         plan.processing_dims, static_cast<char*>(dy.raw_data()),
                         DataTypeSize(dy.dtype()));
    return absl::OkStatus();
  }

  static absl::Status Gather(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                             int64_t axis, Tensor* out) {
    if (params.dtype() == DT_STRING) {
      return MoveStrings(params, out, [&](const Tensor& p, Tensor* m) {
        return Gather(ctx, p, indices, axis, m);
      });
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadInts(indices, "Gather: indices"));
    const int64_t limit = params.dim_size(axis);
    for (size_t i = 0; i < idx.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= limit) {
        return absl::InvalidArgumentError(
            absl::StrCat("Gather: indices[", i, "] = ", idx[i], " is not in [0, ", limit, ")"));
      }
    }
    const std::vector<int64_t>& pd = params.shape().dims();
    const int64_t outer = Product(pd, 0, axis);
    const size_t inner =
        static_cast<size_t>(Product(pd, axis + 1, pd.size())) * DataTypeSize(params.dtype());
    if (inner == 0) return absl::OkStatus();
    const char* src = static_cast<const char*>(params.raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    const int64_t n = static_cast<int64_t>(idx.size());
    for (int64_t o = 0; o < outer; ++o) {
      const char* block = src + o * limit * inner;
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(dst, block + idx[j] * inner, inner);
        dst += inner;
      }
    }
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status UnsortedSegmentSum(OpKernelContext*, const Tensor& data, const Tensor& ids,
                                         const internal::SegmentSumPlan& plan, Tensor* out) {
    const int64_t num = plan.num_segments;
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), T{});
    ASSIGN_OR_RETURN(std::vector<int64_t> seg, ReadInts(ids, "UnsortedSegmentSum: segment_ids"));
    const int64_t inner = plan.inner;
    const T* d = data.data<T>();
    for (size_t i = 0; i < seg.size(); ++i) {
      const int64_t s = seg[i];
      if (s < 0) continue;  // dropped, as in TensorFlow
      if (s >= num) {
        return absl::InvalidArgumentError(absl::StrCat(
            "UnsortedSegmentSum: segment_ids[", i, "] = ", s, " is out of range [0, ", num, ")"));
      }
      T* dst = o + s * inner;
      const T* src = d + static_cast<int64_t>(i) * inner;
      for (int64_t k = 0; k < inner; ++k) dst[k] += src[k];
    }
    return absl::OkStatus();
  }
};

using Impl = CpuSliceImpl;

// TensorStridedSliceUpdate: a copy of the input with the slice overwritten
// by the value, broadcast to the slice's shape.
class TensorStridedSliceUpdateOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, internal::ReadStridedSliceSpec(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ASSIGN_OR_RETURN(internal::StridedSlicePlan plan,
                     internal::PlanStridedSliceOfInputs(*ctx, 1, input.shape(), spec_));
    ASSIGN_OR_RETURN(Tensor value, internal::BroadcastValue(ctx->input(4), plan.final_shape,
                                                            "TensorStridedSliceUpdate"));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, input.shape()));
    if (out->NumElements() == 0) return absl::OkStatus();
    std::memcpy(out->raw_data(), input.raw_data(), input.TotalBytes());
    internal::StridedBoxCopy<true>(static_cast<char*>(out->raw_data()), input.shape().dims(),
                                   plan.begin, plan.strides, plan.processing_dims,
                                   static_cast<char*>(value.raw_data()),
                                   DataTypeSize(input.dtype()));
    return absl::OkStatus();
  }

 private:
  internal::StridedSliceSpec spec_;
};

}  // namespace

namespace internal {

void RegisterSliceKernels(KernelRegistry* kernels) {
  const std::vector<DataType>& all = AllTypes();
  auto cpu = [](const char* op) { return KernelDef(op, kDeviceTypeCpu); };

  kernels->Register(cpu("Transpose").TypeConstraint("T", all), Make<TransposeOp<Impl>>());
  kernels->Register(cpu("Tile").TypeConstraint("T", all), Make<TileOp<Impl>>());

  // Strings move through MoveStrings; StridedSliceGrad has none (no
  // gradient flows to strings).
  std::vector<DataType> with_strings = all;
  with_strings.push_back(DT_STRING);
  kernels->Register(cpu("Transpose").TypeConstraint("T", DT_STRING), Make<TransposeOp<Impl>>());
  kernels->Register(cpu("Tile").TypeConstraint("T", DT_STRING), Make<TileOp<Impl>>());
  kernels->Register(cpu("Slice").TypeConstraint("T", with_strings), Make<SliceOp<Impl>>());
  kernels->Register(cpu("StridedSlice").TypeConstraint("T", with_strings),
                    Make<StridedSliceOp<Impl>>());
  kernels->Register(cpu("StridedSliceGrad").TypeConstraint("T", all),
                    Make<StridedSliceGradOp<Impl>>());
  kernels->Register(cpu("TensorStridedSliceUpdate").TypeConstraint("T", all),
                    Make<TensorStridedSliceUpdateOp>());
  kernels->Register(cpu("GatherV2").TypeConstraint("Tparams", with_strings),
                    [] { return std::make_unique<GatherOp<Impl>>(/*has_axis=*/true); });
  kernels->Register(cpu("Gather").TypeConstraint("Tparams", with_strings),
                    [] { return std::make_unique<GatherOp<Impl>>(/*has_axis=*/false); });
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_FLOAT),
                    Make<UnsortedSegmentSumOp<Impl, float>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_DOUBLE),
                    Make<UnsortedSegmentSumOp<Impl, double>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT32),
                    Make<UnsortedSegmentSumOp<Impl, int32_t>>());
  kernels->Register(cpu("UnsortedSegmentSum").TypeConstraint("T", DT_INT64),
                    Make<UnsortedSegmentSumOp<Impl, int64_t>>());
}

}  // namespace internal
}  // namespace sluice
