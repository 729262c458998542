// GPU kernel of MatMul: one cublasGemmEx on the device's compute stream, for
// float, double, half and bfloat16 (16-bit types accumulate in float32).
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
#include "ops/internal/math_kernel_checks.h"

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

template <typename T>
class MatMulGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(ta_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(tb_, ctx.GetAttr<bool>("transpose_b"));
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

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(internal::MatMulDims d, internal::CheckMatMulShapes(a, b, ta_, tb_, "cuBLAS"));
    const int64_t m = d.m, k = d.k, n = d.n;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    if (m == 0 || n == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    if (k == 0) {
      // An empty sum: zeros (all-zero bits are 0 in every float type).
      const cudaError_t e = cudaMemsetAsync(out->raw_data(), 0, out->TotalBytes(), stream);
      if (e != cudaSuccess) (void)cudaGetLastError();  // not left for the next launch to find
      return LaunchStatus(ctx, e);
    }

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
    const int im = static_cast<int>(m);
    const int in = static_cast<int>(n);
    const int ik = static_cast<int>(k);
    const int lda = static_cast<int>(a.dim_size(1));
    const int ldb = static_cast<int>(b.dim_size(1));
    const cublasOperation_t op_a = ta_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = tb_ ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void* a_data = a.raw_data();
    const void* b_data = b.raw_data();
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
          s = cublasGemmEx(handle, op_b, op_a, in, im, ik, &one, b_data, kType, ldb, a_data, kType,
                           lda, &zero, c_data, kType, in, compute, CUBLAS_GEMM_DEFAULT);
          if (mode != CUBLAS_DEFAULT_MATH) {
            const cublasStatus_t restored = cublasSetMathMode(handle, mode);
            if (s == CUBLAS_STATUS_SUCCESS) s = restored;
          }
          return s;
        },
        absl::StrCat("MatMul '", ctx->node().name(), "' (", m, "x", k, " by ", k, "x", n, ")"));
  }

 private:
  bool ta_ = false;
  bool tb_ = false;
  // The node's own precision (float only); unset: the process-wide one.
  std::optional<GpuMatMulPrecision> precision_;
};

}  // namespace

void RegisterGpuMatMulKernels(KernelRegistry* kernels) {
  kernels->Register<MatMulGpuOp<float>>(GpuKernel("MatMul").TypeConstraint("T", DT_FLOAT));
  kernels->Register<MatMulGpuOp<double>>(GpuKernel("MatMul").TypeConstraint("T", DT_DOUBLE));
  kernels->Register<MatMulGpuOp<Half>>(GpuKernel("MatMul").TypeConstraint("T", DT_HALF));
  kernels->Register<MatMulGpuOp<BFloat16>>(GpuKernel("MatMul").TypeConstraint("T", DT_BFLOAT16));
}

}  // namespace sluice
