// GPU kernels of the activations beyond Relu — Relu6, Elu, Selu, LeakyRelu,
// Softplus, Softsign — and of their gradient ops, for float, double, half
// and bfloat16 (CUDA code: activation.cu); and of L2Loss (float, double:
// halved squares summed by the GPU reduction). As the CPU kernels
// (ops/nn/activation_ops.cc, activation_grad_ops.cc): the output may take
// the first input's buffer, and a gradient op whose two inputs differ in
// shape is InvalidArgument.
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/activation.cu.h"
#include "ops/gpu/cwise_type.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/reduction_launch.h"
#include "ops/gpu/reduction_plan.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

using gpu::ActivationFn;
using gpu::ActivationGradFn;

// LeakyRelu's and LeakyReluGrad's "alpha"; 0 for the other ops.
absl::StatusOr<float> AlphaOf(const OpKernelConstruction& ctx, bool leaky) {
  if (!leaky) return 0.0f;
  return ctx.GetAttr<float>("alpha");
}

class GpuActivationOp : public OpKernel {
 public:
  explicit GpuActivationOp(ActivationFn fn) : fn_(fn) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(alpha_, AlphaOf(ctx, fn_ == ActivationFn::kLeakyRelu));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(x.dtype()));
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchActivation(fn_, type, x.raw_data(), y->raw_data(),
                                                   x.NumElements(), alpha_, stream));
  }

  bool IsExpensive() const override { return false; }

 private:
  const ActivationFn fn_;
  float alpha_ = 0;
};

class GpuActivationGradOp : public OpKernel {
 public:
  explicit GpuActivationGradOp(ActivationGradFn fn) : fn_(fn) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(alpha_, AlphaOf(ctx, fn_ == ActivationGradFn::kLeakyReluGrad));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& v = ctx->input(1);
    if (g.shape() != v.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(),
                       ": gradients and its second input must have the same shape, got ",
                       g.shape().DebugString(), " and ", v.shape().DebugString()));
    }
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(g.dtype()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    if (g.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchActivationGrad(fn_, type, g.raw_data(), v.raw_data(),
                                                       out->raw_data(), g.NumElements(), alpha_,
                                                       stream));
  }

  bool IsExpensive() const override { return false; }

 private:
  const ActivationGradFn fn_;
  float alpha_ = 0;
};

// L2Loss(t) = sum(t^2) / 2: the halved squares (one element kernel) summed
// by the reduction kernels, all on the compute stream, nothing on the host
// (the CPU sums in double; the GPU's tree of float sums is as TensorFlow's).
template <typename T>
class GpuL2LossOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const int64_t n = t.NumElements();
    ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(t.dtype()));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape()));
    ASSIGN_OR_RETURN(Tensor halves, ctx->allocate_temp(t.dtype(), TensorShape({n})));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    RETURN_IF_ERROR(LaunchStatus(ctx, gpu::LaunchActivation(ActivationFn::kHalfSquare, type,
                                                            t.raw_data(), halves.raw_data(), n,
                                                            0, stream)));
    ASSIGN_OR_RETURN(internal::GpuReducePlan plan,
                     internal::MakeGpuReducePlan(halves.shape(), {0}, /*keep_dims=*/false));
    if (plan.kind == internal::GpuReducePlan::Kind::kIdentity) {  // one element: its half square
      return LaunchStatus(ctx, cudaMemcpyAsync(out->raw_data(), halves.raw_data(), sizeof(T),
                                               cudaMemcpyDeviceToDevice, stream));
    }
    return internal::EnqueueGpuReduction(ctx, gpu::ReduceOp::kSum,
                                         internal::GpuReduceTypeOf<T>::value, halves, plan, out);
  }

  bool IsExpensive() const override { return false; }
};

}  // namespace

void RegisterGpuActivationKernels(KernelRegistry* kernels) {
  kernels->Register<GpuL2LossOp<float>>(GpuKernel("L2Loss").TypeConstraint("T", DT_FLOAT));
  kernels->Register<GpuL2LossOp<double>>(GpuKernel("L2Loss").TypeConstraint("T", DT_DOUBLE));
  for (DataType t : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    for (const auto& [op, fn] : gpu::kActivationOps) {
      kernels->Register(GpuKernel(op).TypeConstraint("T", t),
                        [fn = fn] { return std::make_unique<GpuActivationOp>(fn); });
    }
    for (const auto& [op, fn] : gpu::kActivationGradOps) {
      kernels->Register(GpuKernel(op).TypeConstraint("T", t),
                        [fn = fn] { return std::make_unique<GpuActivationGradOp>(fn); });
    }
  }
}

}  // namespace sluice
