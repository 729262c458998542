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
  absl::Status Zero(OpKernelContext* ctx, Tensor* out) const { return FillZeros(ctx, out); }

  absl::Status Gemm(OpKernelContext* ctx, const MatMulArgs& p, Tensor* out) const {
    constexpr DataType kType = DataTypeToEnum<T>::value;
    ASSIGN_OR_RETURN(cudaDataType_t type, internal::GpuGemmDataType(kType));
    const internal::GpuGemmArgs g = internal::RowMajorGemm(
        p.transpose_a, p.transpose_b, p.m, p.n, p.k, p.a.raw_data(), p.lda, p.b.raw_data(), p.ldb,
        out->raw_data(), type,
        internal::GpuGemmComputeType(kType, precision_.value_or(GetGpuMatMulPrecision())));
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
