// The GPU's part of MatMul (the shell: ops/math/matmul_kernels.h): one
// cublasGemmEx on the device's compute stream, for float, double, half and
// bfloat16 (16-bit types accumulate in float32).
// float32 honours GpuMatMulPrecision (ops/gpu/matmul_precision.h): the
// process-wide setting, or the node's `_gpu_precision` attr.
//
// Sluice's matrices are row-major and cuBLAS's column-major. A row-major
// matrix read as column-major is its transpose, so the row-major product
// C[m,n] = op(A) op(B) is computed as the column-major C^T[n,m] =
// op(B)^T op(A)^T: cuBLAS gets B first, then A, with m and n swapped and each
// operand's own transpose flag; leading dimensions are the stored rows'
// lengths (the second dimension of each tensor).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/matmul_precision.h"
#include "ops/math/matmul_kernels.h"

namespace sluice {
namespace {

template <typename T>
struct BlasTypes;
template <>
struct BlasTypes<float> {
  static constexpr cudaDataType_t kData = CUDA_R_32F;
  using Scale = float;  // alpha and beta for CUBLAS_COMPUTE_32F*
};
template <>
struct BlasTypes<double> {
  static constexpr cudaDataType_t kData = CUDA_R_64F;
  using Scale = double;
};
template <>
struct BlasTypes<Half> {
  static constexpr cudaDataType_t kData = CUDA_R_16F;
  using Scale = float;
};
template <>
struct BlasTypes<BFloat16> {
  static constexpr cudaDataType_t kData = CUDA_R_16BF;
  using Scale = float;
};

cublasComputeType_t FloatComputeType(GpuMatMulPrecision precision) {
  switch (precision) {
    case GpuMatMulPrecision::kFloat32:
      return CUBLAS_COMPUTE_32F;
    case GpuMatMulPrecision::kTF32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GpuMatMulPrecision::kBF16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
  }
  return CUBLAS_COMPUTE_32F;
}

// The GPU's part of MatMulOp (ops/math/matmul_kernels.h).
template <typename T>
class GpuMatMulImpl {
 public:
  static constexpr const char* kLibrary = "cuBLAS";

  absl::Status Init(const OpKernelConstruction& ctx) {
    if (ctx.node().attrs().count(kGpuPrecisionAttr) == 0) return absl::OkStatus();
    absl::StatusOr<std::string> name = ctx.GetAttr<std::string>(kGpuPrecisionAttr);
    absl::StatusOr<GpuMatMulPrecision> p =
        name.ok() ? ParseGpuMatMulPrecision(*name) : absl::StatusOr<GpuMatMulPrecision>(name.status());
    if (!p.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("MatMul '", ctx.node().name(), "': attr ",
                                                     kGpuPrecisionAttr, ": ", p.status().message()));
    }
    precision_ = *p;
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
    // Makes the GPU current; WithBlas puts the handle on its compute stream.
    RETURN_IF_ERROR(BeginLaunch(ctx).status());
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    if constexpr (std::is_same_v<T, float>) {
      compute = FloatComputeType(precision_.value_or(GetGpuMatMulPrecision()));
    } else if constexpr (std::is_same_v<T, double>) {
      compute = CUBLAS_COMPUTE_64F;
    }
    using Scale = typename BlasTypes<T>::Scale;
    const Scale one(1);
    const Scale zero(0);
    constexpr cudaDataType_t kType = BlasTypes<T>::kData;
    const cublasOperation_t op_a = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void* a_data = p.a.raw_data();
    const void* b_data = p.b.raw_data();
    void* c_data = out->raw_data();
    return GpuOf(ctx)->WithBlas(
        [&](cublasHandle_t handle) -> cublasStatus_t {
          // alpha and beta are host values; the default math mode keeps
          // CUBLAS_COMPUTE_32F exact (the handle is shared: restore it).
          cublasStatus_t s = cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
          if (s != CUBLAS_STATUS_SUCCESS) return s;
          cublasMath_t mode = CUBLAS_DEFAULT_MATH;
          s = cublasGetMathMode(handle, &mode);
          if (s != CUBLAS_STATUS_SUCCESS) return s;
          if (mode != CUBLAS_DEFAULT_MATH) {
            s = cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
            if (s != CUBLAS_STATUS_SUCCESS) return s;
          }
          s = cublasGemmEx(handle, op_b, op_a, p.n, p.m, p.k, &one, b_data, kType, p.ldb, a_data,
                           kType, p.lda, &zero, c_data, kType, p.n, compute, CUBLAS_GEMM_DEFAULT);
          if (mode != CUBLAS_DEFAULT_MATH) {
            const cublasStatus_t restored = cublasSetMathMode(handle, mode);
            if (s == CUBLAS_STATUS_SUCCESS) s = restored;
          }
          return s;
        },
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
