// GPU kernels of Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax, LogSoftmax,
// SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits for
// float and double (the types the OpDefs allow; CUDA code: nn.cu). Shapes
// are checked by the CPU kernels' code (ops/internal/nn_kernel_checks.h),
// with the same messages. One difference: SparseSoftmaxCrossEntropyWithLogits
// keeps its labels in device memory and cannot check them without a
// synchronization, so a row with an out-of-range label gets a NaN loss and
// NaN backprop where the CPU returns InvalidArgument (TensorFlow does the
// same on GPUs).
#include <cstdint>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/nn.cu.h"
#include "ops/gpu/reduction.cu.h"
#include "ops/gpu/reduction_launch.h"
#include "ops/gpu/reduction_plan.h"
#include "ops/internal/nn_kernel_checks.h"

namespace sluice {
namespace {

using internal::ChannelView;
using internal::ReadNchw;
using internal::ViewChannels;

// ---------------------------------------------------------------------------
// Relu, ReluGrad.

template <typename T>
class ReluGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    if (x.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchRelu(x.data<T>(), y->data<T>(), x.NumElements(), stream));
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
class ReluGradGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& f = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckReluGradShapes(g, f));
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, g.shape()));
    if (g.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchReluGrad(g.data<T>(), f.data<T>(), y->data<T>(), g.NumElements(), stream));
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// BiasAdd, BiasAddGrad.

template <typename T>
class BiasAddGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nchw_, ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    ASSIGN_OR_RETURN(ChannelView v, ViewChannels("BiasAdd", value, nchw_));
    RETURN_IF_ERROR(internal::CheckBiasShape(value, bias, v));
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, value.shape()));
    if (value.NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchBiasAdd(value.data<T>(), bias.data<T>(), out->data<T>(),
                                                v.outer, v.channels, v.inner, stream));
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

// The sum over every axis but the channel axis: a column reduction for NHWC,
// [batch, C, spatial] -> [C] for NCHW, through the reduction kernels.
template <typename T>
class BiasAddGradGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nchw_, ReadNchw(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    ASSIGN_OR_RETURN(ChannelView v, ViewChannels("BiasAddGrad", g, nchw_));
    ASSIGN_OR_RETURN(internal::GpuReducePlan plan,
                     internal::MakeGpuReducePlan(TensorShape({v.outer, v.channels, v.inner}),
                                                 {0, 2}, /*keep_dims=*/false));
    if (plan.kind == internal::GpuReducePlan::Kind::kIdentity) {
      // Every non-channel dimension has size 1: the gradient is the bias's.
      ASSIGN_OR_RETURN(Tensor same, g.Reshaped(TensorShape({v.channels})));
      ctx->set_output(0, std::move(same));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({v.channels})));
    return internal::EnqueueGpuReduction(ctx, gpu::ReduceOp::kSum,
                                         internal::GpuReduceTypeOf<T>::value, g, plan, out);
  }
  bool IsExpensive() const override { return false; }

 private:
  bool nchw_ = false;
};

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax (along the last dimension).

template <typename T, bool kLog>
class SoftmaxGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    RETURN_IF_ERROR(internal::CheckLogits(kLog ? "LogSoftmax" : "Softmax", x));
    ASSIGN_OR_RETURN(Tensor * y, ctx->forward_input_or_allocate_output(0, 0, x.shape()));
    const int64_t depth = x.dim_size(x.dims() - 1);
    if (depth == 0 || x.NumElements() == 0) return absl::OkStatus();
    const int64_t rows = x.NumElements() / depth;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSoftmax(x.data<T>(), y->data<T>(), rows, depth, kLog,
                                                GpuOf(ctx)->multiprocessor_count(), stream));
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// Cross entropies.

template <typename T>
class SoftmaxXentGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckSoftmaxXentShapes(features, labels));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    if (batch == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchSoftmaxXent(features.data<T>(), labels.data<T>(), loss->data<T>(),
                                    backprop->data<T>(), batch, classes,
                                    GpuOf(ctx)->multiprocessor_count(), stream));
  }
  bool IsExpensive() const override { return false; }
};

template <typename T, typename L>
class SparseSoftmaxXentGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    RETURN_IF_ERROR(internal::CheckSparseSoftmaxXentShapes(features, labels));
    const int64_t batch = features.dim_size(0), classes = features.dim_size(1);
    ASSIGN_OR_RETURN(Tensor * loss, ctx->allocate_output(0, TensorShape({batch})));
    ASSIGN_OR_RETURN(Tensor * backprop,
                     ctx->forward_input_or_allocate_output(0, 1, features.shape()));
    if (batch == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    // Labels outside [0, classes) give NaN rows (see the file comment).
    return LaunchStatus(
        ctx, gpu::LaunchSparseSoftmaxXent(features.data<T>(), labels.data<L>(), loss->data<T>(),
                                          backprop->data<T>(), batch, classes,
                                          GpuOf(ctx)->multiprocessor_count(), stream));
  }
  bool IsExpensive() const override { return false; }
};

// ---------------------------------------------------------------------------
// Registration.

template <typename T>
using SoftmaxGpuKernel = SoftmaxGpuOp<T, false>;
template <typename T>
using LogSoftmaxGpuKernel = SoftmaxGpuOp<T, true>;

template <template <typename> class K>
void RegisterFloatDouble(KernelRegistry* kernels, const char* op) {
  kernels->Register<K<float>>(GpuKernel(op).TypeConstraint("T", DT_FLOAT));
  kernels->Register<K<double>>(GpuKernel(op).TypeConstraint("T", DT_DOUBLE));
}

template <typename T>
void RegisterSparseXent(KernelRegistry* kernels) {
  constexpr char kOp[] = "SparseSoftmaxCrossEntropyWithLogits";
  const DataType t = DataTypeToEnum<T>::value;
  kernels->Register<SparseSoftmaxXentGpuOp<T, int32_t>>(
      GpuKernel(kOp).TypeConstraint("T", t).TypeConstraint("Tlabels", DT_INT32));
  kernels->Register<SparseSoftmaxXentGpuOp<T, int64_t>>(
      GpuKernel(kOp).TypeConstraint("T", t).TypeConstraint("Tlabels", DT_INT64));
}

}  // namespace

void RegisterGpuNnKernels(KernelRegistry* kernels) {
  RegisterFloatDouble<ReluGpuOp>(kernels, "Relu");
  RegisterFloatDouble<ReluGradGpuOp>(kernels, "ReluGrad");
  RegisterFloatDouble<BiasAddGpuOp>(kernels, "BiasAdd");
  RegisterFloatDouble<BiasAddGradGpuOp>(kernels, "BiasAddGrad");
  RegisterFloatDouble<SoftmaxGpuKernel>(kernels, "Softmax");
  RegisterFloatDouble<LogSoftmaxGpuKernel>(kernels, "LogSoftmax");
  RegisterFloatDouble<SoftmaxXentGpuOp>(kernels, "SoftmaxCrossEntropyWithLogits");
  RegisterSparseXent<float>(kernels);
  RegisterSparseXent<double>(kernels);
}

}  // namespace sluice
