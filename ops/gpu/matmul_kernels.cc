// The GPU's part of MatMul (the shell: ops/math/matmul_kernels.h): one
// cublasGemmEx on the device's compute stream (internal::EnqueueGpuGemm, which
// says how row-major products map onto cuBLAS), for float, double, half and
// bfloat16 (16-bit types accumulate in float32).
// float32 honours GpuMatMulPrecision (ops/gpu/matmul_precision.h): the
// process-wide setting, or the node's `_gpu_precision` attr.
#include <cuda_runtime_api.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/internal/gpu_gemm.h"
#include "ops/gpu/matmul_precision.h"
#include "ops/math/matmul_kernels.h"

namespace sluice {
namespace {

// The GPU's part of MatMulOp (ops/math/matmul_kernels.h).
template <typename T>
class GpuMatMulImpl {
 public:
  static constexpr const char* kLibrary = "cuBLAS";

  absl::Status Init(const OpKernelConstruction& ctx) {
    ASSIGN_OR_RETURN(precision_, internal::NodeGpuPrecision(ctx));
    return absl::OkStatus();
  }

  // k == 0: an empty sum, zeros (all-zero bits are 0 in every float type).
  absl::Status Zero(OpKernelContext* ctx, Tensor* out) const {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    const cudaError_t e = cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream);
    if (e != cudaSuccess) (void)cudaGetLastError();  // not left for the next launch to find
    return LaunchStatus(ctx, e);
  }

  absl::Status Gemm(OpKernelContext* ctx, const MatMulArgs& p, Tensor* out) const {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    internal::GpuGemmArgs g;
    g.transpose_a = p.transpose_a;
    g.transpose_b = p.transpose_b;
    g.m = p.m;
    g.n = p.n;
    g.k = p.k;
    g.a = p.a.raw_data();
    g.lda = p.lda;
    g.b = p.b.raw_data();
    g.ldb = p.ldb;
    g.c = out->raw_data();
    ASSIGN_OR_RETURN(g.type, internal::GpuGemmDataType(kType));
    g.compute = internal::GpuGemmComputeType(kType, precision_.value_or(GetGpuMatMulPrecision()));
    return internal::EnqueueGpuGemm(
        ctx, g,
        absl::StrCat("MatMul '", ctx->node().name(), "' (", p.m, "x", p.k, " by ", p.k, "x", p.n,
                     ")"));
  }

 private:
  // The node's own precision (float only); unset: the process-wide one.
  std::optional<GpuMatMulPrecision> precision_;
};

}  // namespace

void RegisterGpuMatMulKernels(KernelRegistry* kernels) {
  kernels->Register<MatMulOp<GpuMatMulImpl<float>>>(GpuKernel("MatMul").TypeConstraint("T", DT_FLOAT));
  kernels->Register<MatMulOp<GpuMatMulImpl<double>>>(GpuKernel("MatMul").TypeConstraint("T", DT_DOUBLE));
  kernels->Register<MatMulOp<GpuMatMulImpl<Half>>>(GpuKernel("MatMul").TypeConstraint("T", DT_HALF));
  kernels->Register<MatMulOp<GpuMatMulImpl<BFloat16>>>(GpuKernel("MatMul").TypeConstraint("T", DT_BFLOAT16));
}

}  // namespace sluice
