// GPU arithmetic of Relu, ReluGrad, BiasAdd, BiasAddGrad, Softmax,
// LogSoftmax, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits for float and double (the types the
// OpDefs allow; CUDA code: nn.cu), and of the first four for half and
// bfloat16 too (float arithmetic, rounded once). The shells of
// ops/nn/nn_kernels.h check the shapes and allocate, as for the CPU. One difference: SparseSoftmaxCrossEntropyWithLogits
// keeps its labels in device memory and cannot check them without a
// synchronization, so a row with an out-of-range label gets a NaN loss and
// NaN backprop where the CPU returns InvalidArgument (TensorFlow does the
// same on GPUs).
#include <cstdint>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/float16_type.h"
#include "ops/gpu/nn.cu.h"
#include "ops/gpu/reduction.cu.h"
#include "ops/gpu/reduction_launch.h"
#include "ops/gpu/reduction_plan.h"
#include "ops/nn/internal/nn_kernel_checks.h"
#include "ops/nn/nn_kernels.h"

namespace sluice {
namespace {

using internal::kFloat16Type;
using internal::kSixteen;

// The GPU's arithmetic for the shells of ops/nn/nn_kernels.h.
struct GpuNnImpl {
  static constexpr bool kLogSoftmaxInPlace = true;

  template <typename T>
  static absl::Status Relu(OpKernelContext* ctx, const T* x, T* y, int64_t n) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    if constexpr (kSixteen<T>) {
      return LaunchStatus(ctx, gpu::LaunchRelu16(kFloat16Type<T>, x, y, n, stream));
    } else {
      return LaunchStatus(ctx, gpu::LaunchRelu(x, y, n, stream));
    }
  }

  template <typename T>
  static absl::Status ReluGrad(OpKernelContext* ctx, const T* g, const T* f, T* y, int64_t n) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    if constexpr (kSixteen<T>) {
      return LaunchStatus(ctx, gpu::LaunchReluGrad16(kFloat16Type<T>, g, f, y, n, stream));
    } else {
      return LaunchStatus(ctx, gpu::LaunchReluGrad(g, f, y, n, stream));
    }
  }

  template <typename T>
  static absl::Status BiasAdd(OpKernelContext* ctx, const T* value, const T* bias, T* out,
                              const internal::ChannelView& v) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    if constexpr (kSixteen<T>) {
      return LaunchStatus(ctx, gpu::LaunchBiasAdd16(kFloat16Type<T>, value, bias, out, v.outer,
                                                    v.channels, v.inner, stream));
    } else {
      return LaunchStatus(
          ctx, gpu::LaunchBiasAdd(value, bias, out, v.outer, v.channels, v.inner, stream));
    }
  }

  // The sum over every axis but the channel axis: a column reduction for
  // NHWC, [batch, C, spatial] -> [C] for NCHW, through the reduction kernels.
  template <typename T>
  static absl::Status BiasAddGrad(OpKernelContext* ctx, const Tensor& g,
                                  const internal::ChannelView& v) {
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

  template <typename T>
  static absl::Status Softmax(OpKernelContext* ctx, const T* x, T* y, int64_t rows,
                              int64_t depth, bool log) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSoftmax(x, y, rows, depth, log,
                                                GpuOf(ctx)->multiprocessor_count(), stream));
  }

  template <typename T>
  static absl::Status SoftmaxXent(OpKernelContext* ctx, const T* features, const T* labels,
                                  T* loss, T* backprop, int64_t batch, int64_t classes) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSoftmaxXent(features, labels, loss, backprop, batch,
                                                    classes, GpuOf(ctx)->multiprocessor_count(),
                                                    stream));
  }

  // The labels are in device memory: checking them would need a sync. Rows
  // with a label outside [0, classes) get NaN (see the file comment).
  template <typename L>
  static absl::Status CheckSparseLabels(const L*, int64_t, int64_t) {
    return absl::OkStatus();
  }

  template <typename T, typename L>
  static absl::Status SparseSoftmaxXent(OpKernelContext* ctx, const T* features, const L* labels,
                                        T* loss, T* backprop, int64_t batch, int64_t classes) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchSparseSoftmaxXent(features, labels, loss, backprop, batch,
                                                          classes,
                                                          GpuOf(ctx)->multiprocessor_count(),
                                                          stream));
  }
};

}  // namespace

void RegisterGpuNnKernels(KernelRegistry* kernels) {
  RegisterNnKernelsFor<GpuNnImpl>(kernels, kDeviceTypeGpu);
  // half and bfloat16 for the ops mixed precision keeps between 16-bit GEMMs.
  const auto sixteen = [kernels](auto type_tag) {
    using T = decltype(type_tag);
    const DataType t = DataTypeToEnum<T>::value;
    kernels->Register<ReluOp<GpuNnImpl, T>>(GpuKernel("Relu").TypeConstraint("T", t));
    kernels->Register<ReluGradOp<GpuNnImpl, T>>(GpuKernel("ReluGrad").TypeConstraint("T", t));
    kernels->Register<BiasAddOp<GpuNnImpl, T>>(GpuKernel("BiasAdd").TypeConstraint("T", t));
    kernels->Register<BiasAddGradOp<GpuNnImpl, T>>(
        GpuKernel("BiasAddGrad").TypeConstraint("T", t));
  };
  sixteen(Half{});
  sixteen(BFloat16{});
}

}  // namespace sluice
