// The kernels that move elements without arithmetic, written once for every
// device (the pattern of ops/training/training_kernels.h): Transpose, Tile, Concat,
// ConcatV2, Pack, Split, Unpack, Slice, StridedSlice, StridedSliceGrad,
// Gather, GatherV2 and UnsortedSegmentSum. The shell reads the attrs, plans
// with the shared checks (ops/array/internal/array_kernel_checks.h, same messages
// on every device), hands the input through (reshaped) where the op is the
// identity, and allocates the output; a device's `Impl` moves the elements:
//
//   Transpose(ctx, x, plan, y)       Tile(ctx, x, plan, out)
//   ConcatColumns(ctx, inputs, widths, rows, out)
//       out is [rows, sum of widths]; input i is [rows, widths[i]] (elements)
//   SplitRows(ctx, x, num, outer, chunk, out_shape)
//       allocates the num outputs; output i takes, from each of `outer`
//       rows of x, the i-th run of `chunk` elements
//   StridedGather(ctx, x, begin, strides, size, out, op)   Slice, StridedSlice
//   StridedScatter(ctx, dy, dims, plan, out)   zeroes out, then scatters dy
//   Gather(ctx, params, indices, axis, out)    checks indices as it can
//   UnsortedSegmentSum<T>(ctx, data, ids, plan, out)
//
// Every Impl function but Gather and UnsortedSegmentSum (whose index checks
// the CPU makes even for empty outputs) is called with a non-empty output.
#ifndef SLUICE_OPS_ARRAY_ARRAY_INDEX_KERNELS_H_
#define SLUICE_OPS_ARRAY_ARRAY_INDEX_KERNELS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/internal/array_util.h"
#include "runtime/kernel.h"

namespace sluice {

template <typename Impl>
class TransposeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::TransposePlan plan, internal::PlanTranspose(x, ctx->input(1)));
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(plan.out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, plan.out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Impl::Transpose(ctx, x, plan, y);
  }
};

template <typename Impl>
class TileOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::TilePlan plan, internal::PlanTile(x, ctx->input(1)));
    if (plan.is_identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::Tile(ctx, x, plan, out);
  }
};

// ConcatV2 (axis last) and Concat (axis first).
template <typename Impl>
class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(bool axis_first) : axis_first_(axis_first) {}

  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() - 1;
    const int first = axis_first_ ? 1 : 0;
    ASSIGN_OR_RETURN(internal::AxisPlan plan, internal::PlanConcat(*ctx, axis_first_));
    const Tensor& x0 = ctx->input(first);
    std::vector<const Tensor*> inputs(n);
    std::vector<int64_t> widths(n);
    for (int i = 0; i < n; ++i) {
      inputs[i] = &ctx->input(first + i);
      widths[i] = internal::Product(inputs[i]->shape().dims(), plan.axis, x0.dims());
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::ConcatColumns(ctx, inputs, widths,
                               internal::Product(x0.shape().dims(), 0, plan.axis), out);
  }

 private:
  const bool axis_first_;
};

template <typename Impl>
class PackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    ASSIGN_OR_RETURN(internal::AxisPlan plan, internal::PlanPack(*ctx, axis_));
    if (n == 1) {
      ASSIGN_OR_RETURN(Tensor y, x0.Reshaped(plan.out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    std::vector<const Tensor*> inputs(n);
    for (int i = 0; i < n; ++i) inputs[i] = &ctx->input(i);
    const std::vector<int64_t> widths(n,
                                      internal::Product(x0.shape().dims(), plan.axis, x0.dims()));
    return Impl::ConcatColumns(ctx, inputs, widths,
                               internal::Product(x0.shape().dims(), 0, plan.axis), out);
  }

 private:
  int64_t axis_ = 0;
};

template <typename Impl>
class SplitOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(1);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(internal::AxisPlan plan, internal::PlanSplit(ctx->input(0), x, num));
    if (num == 1) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    return Impl::SplitRows(ctx, x, num, internal::Product(x.shape().dims(), 0, plan.axis),
                           internal::Product(plan.out_shape.dims(), plan.axis, x.dims()),
                           plan.out_shape);
  }
};

template <typename Impl>
class UnpackOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int64_t num = ctx->num_outputs();
    ASSIGN_OR_RETURN(internal::AxisPlan plan, internal::PlanUnpack(x, axis_, num));
    if (num == 1) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(plan.out_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    return Impl::SplitRows(ctx, x, num, internal::Product(x.shape().dims(), 0, plan.axis),
                           internal::Product(x.shape().dims(), plan.axis + 1, x.dims()),
                           plan.out_shape);
  }

 private:
  int64_t axis_ = 0;
};

template <typename Impl>
class SliceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::SlicePlan plan,
                     internal::PlanSlice(x, ctx->input(1), ctx->input(2)));
    if (plan.is_identity) {
      ctx->set_output(0, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx->allocate_output(0, TensorShape(absl::MakeConstSpan(plan.size))));
    if (out->NumElements() == 0) return absl::OkStatus();
    const std::vector<int64_t> strides(x.dims(), 1);
    return Impl::StridedGather(ctx, x, plan.begin, strides, plan.size, out, "Slice");
  }
};

template <typename Impl>
class StridedSliceOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, internal::ReadStridedSliceSpec(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::StridedSlicePlan plan,
                     internal::PlanStridedSliceOfInputs(*ctx, 1, x.shape(), spec_));
    if (plan.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, x.Reshaped(plan.final_shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.final_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::StridedGather(ctx, x, plan.begin, plan.strides, plan.processing_dims, out,
                               "StridedSlice");
  }

 private:
  internal::StridedSliceSpec spec_;
};

template <typename Impl>
class StridedSliceGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(spec_, internal::ReadStridedSliceSpec(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(internal::StridedSliceGradPlan grad,
                     internal::PlanStridedSliceGrad(*ctx, spec_));
    const Tensor& dy = ctx->input(4);
    if (grad.slice.is_identity) {
      ASSIGN_OR_RETURN(Tensor y, dy.Reshaped(grad.shape));
      ctx->set_output(0, std::move(y));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, grad.shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Impl::StridedScatter(ctx, dy, grad.dims, grad.slice, out);
  }

 private:
  internal::StridedSliceSpec spec_;
};

// GatherV2 (has_axis: the axis input) and Gather (axis 0).
template <typename Impl>
class GatherOp : public OpKernel {
 public:
  explicit GatherOp(bool has_axis) : has_axis_(has_axis) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    return internal::CheckGatherBatchDims(ctx, has_axis_);
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    ASSIGN_OR_RETURN(int64_t axis, internal::GatherAxis(*ctx, has_axis_));
    ASSIGN_OR_RETURN(
        Tensor * out,
        ctx->allocate_output(0, internal::GatherShape(params.shape(), indices.shape(), axis)));
    return Impl::Gather(ctx, params, indices, axis, out);
  }

 private:
  const bool has_axis_;
};

template <typename Impl, typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(internal::SegmentSumPlan plan, internal::PlanUnsortedSegmentSum(*ctx));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    return Impl::template UnsortedSegmentSum<T>(ctx, ctx->input(0), ctx->input(1), plan, out);
  }
};

}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_ARRAY_INDEX_KERNELS_H_
