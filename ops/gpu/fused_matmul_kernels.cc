// GPU kernels of the fused matrix products (ops/nn/fused_ops.h), for float,
// bfloat16 and half (16-bit operands sum in float):
//
//   _FusedMatMul, fused_ops [BiasAdd] or [BiasAdd, Relu]: one cuBLASLt
//       matmul whose epilogue adds the bias (then the ReLU) as it writes C.
//   _MatMulBiasAddGrad: one cuBLASLt matmul whose BGRADA epilogue writes the
//       column sums of op(b) (the bias gradient) beside the product.
//
// Where cuBLASLt has no kernel for an epilogue at a shape
// (GpuEpilogueGemm::Enqueue answers false), a kernel does what the unfused
// graph would have: cublasGemmEx, then the BiasAdd and Relu kernels, or a
// column reduction of b. Float products honour the node's _gpu_precision
// attr, which the fusion pass copies from the MatMul it replaces. One
// difference between the two ways: cuBLASLt's ReLU may turn a NaN into 0,
// where the Relu kernel (and the CPU) keep it.
#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/float16_type.h"
#include "ops/gpu/internal/gpu_gemm.h"
#include "ops/gpu/nn.cu.h"
#include "ops/gpu/reduction_launch.h"
#include "ops/gpu/reduction_plan.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "ops/nn/internal/fused_matmul_attrs.h"

namespace sluice {
namespace {

// The GEMM of a and b (of type T) into out, with the node's precision.
// CheckMatMulShapes has checked that every dimension fits in an int.
template <typename T>
internal::GpuGemmArgs GemmOf(const Tensor& a, const Tensor& b, bool ta, bool tb,
                             const internal::MatMulDims& d, Tensor* out,
                             std::optional<GpuMatMulPrecision> precision) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  return internal::RowMajorGemm(
      ta, tb, d.m, d.n, d.k, a.raw_data(), a.dim_size(1), b.raw_data(), b.dim_size(1),
      out->raw_data(), *internal::GpuGemmDataType(kType),  // float, bfloat16 or half: one
      internal::GpuGemmComputeType(kType, precision.value_or(GetGpuMatMulPrecision())));
}

using internal::kFloat16Type;
using internal::kSixteen;

std::string Describe(const OpKernelContext& ctx, const internal::MatMulDims& d) {
  return absl::StrCat(ctx.node().op(), " '", ctx.node().name(), "' (", d.m, "x", d.k, " by ",
                      d.k, "x", d.n, ")");
}

template <typename T>
class GpuFusedMatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadFusedMatMulAttrs(ctx, "GPU"));
    ASSIGN_OR_RETURN(precision_, internal::NodeGpuPrecision(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    ASSIGN_OR_RETURN(internal::MatMulDims d,
                     internal::CheckFusedMatMulInputs(*ctx, attrs_, "cuBLAS"));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    if (d.m == 0 || d.n == 0) return absl::OkStatus();
    const std::string what = Describe(*ctx, d);
    if (d.k > 0) {
      const internal::GpuGemmArgs g =
          GemmOf<T>(a, b, attrs_.transpose_a, attrs_.transpose_b, d, out, precision_);
      ASSIGN_OR_RETURN(bool fused,
                       epilogue_.Enqueue(ctx, g,
                                         attrs_.relu ? internal::GemmEpilogue::kBiasRelu
                                               : internal::GemmEpilogue::kBias,
                                         bias.raw_data(), what));
      if (fused) return absl::OkStatus();
      RETURN_IF_ERROR(internal::EnqueueGpuGemm(ctx, g, what));
    } else {
      RETURN_IF_ERROR(FillZeros(ctx, out));  // an empty sum: the bias alone
    }
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    T* y = out->data<T>();
    if constexpr (kSixteen<T>) {
      RETURN_IF_ERROR(LaunchStatus(ctx, gpu::LaunchBiasAdd16(kFloat16Type<T>, y, bias.raw_data(),
                                                             y, d.m, d.n, 1, stream)));
      if (!attrs_.relu) return absl::OkStatus();
      return LaunchStatus(ctx, gpu::LaunchRelu16(kFloat16Type<T>, y, y, d.m * d.n, stream));
    } else {
      RETURN_IF_ERROR(LaunchStatus(
          ctx, gpu::LaunchBiasAdd<float>(y, bias.data<float>(), y, d.m, d.n, 1, stream)));
      if (!attrs_.relu) return absl::OkStatus();
      return LaunchStatus(ctx, gpu::LaunchRelu<float>(y, y, d.m * d.n, stream));
    }
  }

 private:
  internal::FusedMatMulKernelAttrs attrs_;
  std::optional<GpuMatMulPrecision> precision_;
  internal::GpuEpilogueGemm epilogue_;
};

template <typename T>
class GpuMatMulBiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(transpose_a_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(transpose_b_, ctx.GetAttr<bool>("transpose_b"));
    ASSIGN_OR_RETURN(precision_, internal::NodeGpuPrecision(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(internal::MatMulDims d,
                     internal::CheckMatMulShapes(a, b, transpose_a_, transpose_b_, "cuBLAS"));
    ASSIGN_OR_RETURN(Tensor * product, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    ASSIGN_OR_RETURN(Tensor * bias_grad, ctx->allocate_output(1, TensorShape({d.n})));
    if (d.n == 0) return absl::OkStatus();
    if (d.k == 0) {  // empty sums
      if (d.m > 0) RETURN_IF_ERROR(FillZeros(ctx, product));
      return FillZeros(ctx, bias_grad);
    }
    if (d.m > 0) {
      const std::string what = Describe(*ctx, d);
      const internal::GpuGemmArgs g =
          GemmOf<T>(a, b, transpose_a_, transpose_b_, d, product, precision_);
      ASSIGN_OR_RETURN(bool fused, epilogue_.Enqueue(ctx, g, internal::GemmEpilogue::kBiasGradOfB,
                                                     bias_grad->raw_data(), what));
      if (fused) return absl::OkStatus();
      RETURN_IF_ERROR(internal::EnqueueGpuGemm(ctx, g, what));
    }
    // op(b) is [k, n]: b summed over its rows, or over its columns when
    // transposed.
    ASSIGN_OR_RETURN(internal::GpuReducePlan plan,
                     internal::MakeGpuReducePlan(b.shape(), {transpose_b_ ? 1 : 0},
                                                 /*keep_dims=*/false));
    if (plan.kind == internal::GpuReducePlan::Kind::kIdentity) {  // k == 1: b is the sum
      ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
      return LaunchStatus(ctx, cudaMemcpyAsync(bias_grad->raw_data(), b.raw_data(),
                                               bias_grad->TotalBytes(), cudaMemcpyDeviceToDevice,
                                               stream));
    }
    return internal::EnqueueGpuReduction(ctx, gpu::ReduceOp::kSum,
                                         internal::GpuReduceTypeOf<T>::value, b, plan, bias_grad);
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  std::optional<GpuMatMulPrecision> precision_;
  internal::GpuEpilogueGemm epilogue_;
};

}  // namespace

void RegisterGpuFusedKernels(KernelRegistry* kernels) {
  const auto each_type = [kernels](auto type_tag) {
    using T = decltype(type_tag);
    const DataType t = DataTypeToEnum<T>::value;
    kernels->Register<GpuFusedMatMulOp<T>>(GpuKernel("_FusedMatMul").TypeConstraint("T", t));
    kernels->Register<GpuMatMulBiasAddGradOp<T>>(
        GpuKernel("_MatMulBiasAddGrad").TypeConstraint("T", t));
  };
  each_type(float{});
  each_type(BFloat16{});
  each_type(Half{});
}

}  // namespace sluice
