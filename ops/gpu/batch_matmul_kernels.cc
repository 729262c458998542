// BatchMatMul and BatchMatMulV2 on the GPU for float, double, half and
// bfloat16: the shapes as the CPU kernel works them out
// (ops/math/internal/batch_matmul_plan.h), then one strided batched cuBLAS
// GEMM when every batch is a stride apart in both inputs (equal batch
// dimensions, or one input without batch: attention's products, a batch of
// rows times one weight), else one GEMM per output matrix (cross
// broadcasting). float honours GpuMatMulPrecision as MatMul does.
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/gpu_gemm.h"
#include "ops/gpu/matmul_precision.h"
#include "ops/math/internal/batch_matmul_plan.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

template <typename T>
class GpuBatchMatMulOp : public OpKernel {
 public:
  explicit GpuBatchMatMulOp(bool broadcast) : broadcast_(broadcast) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(adj_x_, ctx.GetAttr<bool>("adj_x"));
    ASSIGN_OR_RETURN(adj_y_, ctx.GetAttr<bool>("adj_y"));
    ASSIGN_OR_RETURN(precision_, internal::NodeGpuPrecision(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const char* op = broadcast_ ? "BatchMatMulV2" : "BatchMatMul";
    ASSIGN_OR_RETURN(internal::BatchMatMulPlan p,
                     internal::PlanBatchMatMul(op, x.shape(), y.shape(), adj_x_, adj_y_,
                                               broadcast_));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    if (p.k == 0) return FillZeros(ctx, out);  // an empty sum
    if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX || p.batches > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": ", x.shape().DebugString(), " by ", y.shape().DebugString(),
                       " has a dimension beyond cuBLAS's int"));
    }
    constexpr DataType kType = DataTypeToEnum<T>::value;
    ASSIGN_OR_RETURN(cudaDataType_t type, internal::GpuGemmDataType(kType));
    const cublasComputeType_t compute =
        internal::GpuGemmComputeType(kType, precision_.value_or(GetGpuMatMulPrecision()));
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    T* os = out->data<T>();
    const int64_t x_size = p.m * p.k, y_size = p.k * p.n, o_size = p.m * p.n;
    const std::string what = absl::StrCat(op, " '", ctx->node().name(), "' (", p.batches, " of ",
                                          p.m, "x", p.k, " by ", p.k, "x", p.n, ")");
    internal::GpuGemmArgs g = internal::RowMajorGemm(
        adj_x_, adj_y_, p.m, p.n, p.k, xs, adj_x_ ? p.m : p.k, ys, adj_y_ ? p.k : p.n, os, type,
        compute);
    if (p.strided) {
      g.batch_count = static_cast<int>(p.batches);
      g.stride_a = p.x_stride * x_size;
      g.stride_b = p.y_stride * y_size;
      g.stride_c = o_size;
      return internal::EnqueueGpuGemm(ctx, g, what);
    }
    for (int64_t i = 0; i < p.batches; ++i) {
      g.a = xs + p.x_index[i] * x_size;
      g.b = ys + p.y_index[i] * y_size;
      g.c = os + i * o_size;
      RETURN_IF_ERROR(internal::EnqueueGpuGemm(ctx, g, what));
    }
    return absl::OkStatus();
  }

 private:
  const bool broadcast_;
  bool adj_x_ = false;
  bool adj_y_ = false;
  std::optional<GpuMatMulPrecision> precision_;
};

template <typename T>
void RegisterFor(KernelRegistry* kernels, DataType dtype) {
  for (bool broadcast : {false, true}) {
    kernels->Register(
        GpuKernel(broadcast ? "BatchMatMulV2" : "BatchMatMul").TypeConstraint("T", dtype),
        [broadcast] { return std::make_unique<GpuBatchMatMulOp<T>>(broadcast); });
  }
}

}  // namespace

void RegisterGpuBatchMatMulKernels(KernelRegistry* kernels) {
  RegisterFor<float>(kernels, DT_FLOAT);
  RegisterFor<double>(kernels, DT_DOUBLE);
  RegisterFor<Half>(kernels, DT_HALF);
  RegisterFor<BFloat16>(kernels, DT_BFLOAT16);
}

}  // namespace sluice
