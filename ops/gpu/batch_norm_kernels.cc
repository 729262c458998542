// GPU kernels of the fused batch normalization — FusedBatchNorm, V2, V3 and
// their gradients — for NHWC data: x (and y, dy, dx) float, or half or
// bfloat16 in V2 and V3 (what mixed precision gives them; computed in
// float), the per-channel tensors float (CUDA code: batch_norm.cu). They
// check their attrs and inputs as the CPU kernels do
// (ops/nn/internal/batch_norm_checks.h) and compute what those compute,
// statistics in double; scratch comes from the device's allocator, ordered
// on the compute stream.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/batch_norm.cu.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/nn/internal/batch_norm_checks.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

absl::StatusOr<gpu::BatchNormType> StorageOf(const Tensor& t) {
  switch (t.dtype()) {
    case DT_FLOAT:
      return gpu::BatchNormType::kFloat;
    case DT_HALF:
      return gpu::BatchNormType::kHalf;
    case DT_BFLOAT16:
      return gpu::BatchNormType::kBFloat16;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("batch norm on the GPU: no kernel for ", DataTypeName(t.dtype())));
  }
}

// The per-channel kernels' grid has a block row per 256 channels, at most
// 65535 rows.
absl::Status CheckDepth(OpKernelContext* ctx, const internal::BatchNormGeometry& geo) {
  constexpr int64_t kMaxDepth = int64_t{65535} * 256;
  if (geo.depth <= kMaxDepth) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": ", geo.depth,
                                                 " channels; the GPU kernel takes at most ",
                                                 kMaxDepth));
}

// The launchers' scratch (doubles), from the device's allocator: freed on
// return, its reuse ordered on the compute stream behind the launches.
absl::StatusOr<Tensor> Scratch(OpKernelContext* ctx, const internal::BatchNormGeometry& geo) {
  return ctx->allocate_temp(DT_DOUBLE,
                            TensorShape({gpu::BatchNormScratchDoubles(geo.rows, geo.depth)}));
}

// Null for an empty tensor (training without moving averages).
const float* DataOrNull(const Tensor& t) {
  return t.NumElements() == 0 ? nullptr : t.data<float>();
}

class GpuFusedBatchNormOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadBatchNormAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const internal::BatchNormGeometry geo,
                     internal::CheckBatchNormInputs(ctx, attrs_));
    RETURN_IF_ERROR(CheckDepth(ctx, geo));
    const Tensor& x = ctx->input(0);
    gpu::BatchNormForwardArgs a;
    ASSIGN_OR_RETURN(a.type, StorageOf(x));
    a.x = x.raw_data();
    a.scale = ctx->input(1).data<float>();
    a.offset = ctx->input(2).data<float>();
    a.mean_in = DataOrNull(ctx->input(3));
    a.var_in = DataOrNull(ctx->input(4));
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    a.y = y->raw_data();
    float** stats[] = {&a.batch_mean, &a.batch_var, &a.saved_mean, &a.saved_var};
    for (int k = 0; k < 4; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(1 + k, TensorShape({geo.depth})));
      *stats[k] = t->data<float>();
    }
    if (ctx->num_outputs() == 6) {  // V3's reserve_space_3: unused, as on the CPU
      RETURN_IF_ERROR(ctx->allocate_output(5, TensorShape({0})).status());
    }
    if (geo.depth == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor scratch, Scratch(ctx, geo));
    a.scratch = scratch.data<double>();
    a.rows = geo.rows;
    a.depth = geo.depth;
    a.epsilon = attrs_.epsilon;
    a.factor = attrs_.factor;
    a.training = attrs_.training;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchBatchNormForward(a, stream));
  }

 private:
  internal::BatchNormAttrs attrs_;
};

class GpuFusedBatchNormGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadBatchNormAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const internal::BatchNormGeometry geo,
                     internal::CheckBatchNormGradInputs(ctx));
    RETURN_IF_ERROR(CheckDepth(ctx, geo));
    gpu::BatchNormGradArgs a;
    ASSIGN_OR_RETURN(a.type, StorageOf(ctx->input(1)));
    a.dy = ctx->input(0).raw_data();
    a.x = ctx->input(1).raw_data();
    a.scale = ctx->input(2).data<float>();
    a.mean = ctx->input(3).data<float>();
    a.var = ctx->input(4).data<float>();
    ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, ctx->input(1).shape()));
    a.dx = dx->raw_data();
    ASSIGN_OR_RETURN(Tensor * scale_grad, ctx->allocate_output(1, TensorShape({geo.depth})));
    ASSIGN_OR_RETURN(Tensor * offset_grad, ctx->allocate_output(2, TensorShape({geo.depth})));
    a.scale_grad = scale_grad->data<float>();
    a.offset_grad = offset_grad->data<float>();
    for (int i = 3; i < 5; ++i) RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape({0})).status());
    if (geo.depth == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor scratch, Scratch(ctx, geo));
    a.scratch = scratch.data<double>();
    a.rows = geo.rows;
    a.depth = geo.depth;
    a.epsilon = attrs_.epsilon;
    a.training = attrs_.training;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchBatchNormGrad(a, stream));
  }

 private:
  internal::BatchNormAttrs attrs_;
};

}  // namespace

void RegisterGpuBatchNormKernels(KernelRegistry* kernels) {
  kernels->Register<GpuFusedBatchNormOp>(
      GpuKernel("FusedBatchNorm").TypeConstraint("T", DT_FLOAT));
  kernels->Register<GpuFusedBatchNormGradOp>(
      GpuKernel("FusedBatchNormGrad").TypeConstraint("T", DT_FLOAT));
  for (DataType t : {DT_FLOAT, DT_HALF, DT_BFLOAT16}) {
    for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
      kernels->Register<GpuFusedBatchNormOp>(
          GpuKernel(op).TypeConstraint("T", t).TypeConstraint("U", DT_FLOAT));
    }
    for (const char* op : {"FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
      kernels->Register<GpuFusedBatchNormGradOp>(
          GpuKernel(op).TypeConstraint("T", t).TypeConstraint("U", DT_FLOAT));
    }
  }
}

}  // namespace sluice
