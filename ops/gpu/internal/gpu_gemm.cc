#include "ops/gpu/internal/gpu_gemm.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/internal/blas_layout.h"
#include "runtime/gpu/cublaslt_library.h"

namespace sluice {
namespace internal {
namespace {

// The largest power of two, up to 256, that divides `p`: what cuBLASLt's
// choice of kernel depends on (its preferences assume 256 unless told).
uint32_t AlignmentOf(const void* p) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(p) | 256;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

// Whether cuBLASLt's answer means "not this matmul" (the caller falls back
// to cublasGemmEx and the separate kernels) rather than a failure: it
// refuses shapes, types and layouts it has no kernel for with NOT_SUPPORTED
// or INVALID_VALUE (degenerate operands, odd 16-bit leading dimensions),
// and a refused call has enqueued nothing.
bool Refused(cublasStatus_t s) {
  return s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE;
}

// SLUICE_LOG_FUSED_GEMM=1: say on stderr, once per shape, where a fused
// product falls back (how a GPU run shows whether the epilogues ran).
void LogFallback(absl::string_view what, absl::string_view why) {
  static const bool log = std::getenv("SLUICE_LOG_FUSED_GEMM") != nullptr;
  if (log) {
    std::fprintf(stderr,
                 "sluice: fused GEMM %.*s: no cuBLASLt epilogue (%.*s); the GEMM and separate "
                 "kernels instead\n",
                 static_cast<int>(what.size()), what.data(), static_cast<int>(why.size()),
                 why.data());
  }
}

cublasLtEpilogue_t LtEpilogue(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::kBiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case GemmEpilogue::kBiasGradOfB:
      // B is cuBLAS's first operand (see the header): its gradient is BGRADA.
      return CUBLASLT_EPILOGUE_BGRADA;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

// The descriptors of one cuBLASLt matmul, destroyed with it.
class LtMatmulDescriptors {
 public:
  explicit LtMatmulDescriptors(const CublasLtApi* api) : api_(api) {}
  LtMatmulDescriptors(const LtMatmulDescriptors&) = delete;
  LtMatmulDescriptors& operator=(const LtMatmulDescriptors&) = delete;
  ~LtMatmulDescriptors() {
    if (desc != nullptr) api_->matmul_desc_destroy(desc);
    for (cublasLtMatrixLayout_t l : {first, second, out}) {
      if (l != nullptr) api_->matrix_layout_destroy(l);
    }
  }

  // The operands as blas_layout.h maps them: the row-major B first.
  cublasStatus_t Make(const GpuGemmArgs& g, GemmEpilogue epilogue, void* vector) {
    const ColumnMajorGemm cm = ToColumnMajor(g.transpose_a, g.transpose_b, g.m, g.n, g.k, g.lda,
                                             g.ldb);
    cublasStatus_t s = api_->matmul_desc_create(&desc, g.compute, CUDA_R_32F);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    const cublasOperation_t op_first = cm.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_second = cm.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasLtEpilogue_t lt_epilogue = LtEpilogue(epilogue);
    s = api_->matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_first,
                                        sizeof(op_first));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = api_->matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second,
                                        sizeof(op_second));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = api_->matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt_epilogue,
                                        sizeof(lt_epilogue));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = api_->matmul_desc_set_attribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &vector,
                                        sizeof(vector));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = api_->matrix_layout_create(&first, g.type, cm.first.rows, cm.first.cols, cm.first.ld);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = api_->matrix_layout_create(&second, g.type, cm.second.rows, cm.second.cols,
                                   cm.second.ld);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    return api_->matrix_layout_create(&out, g.type, cm.m, cm.n, cm.ldc);
  }

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr;
  cublasLtMatrixLayout_t second = nullptr;
  cublasLtMatrixLayout_t out = nullptr;

 private:
  const CublasLtApi* api_;
};

// cuBLASLt's best algorithm for the descriptors within the workspace, for
// pointers of the given alignments (A, B, C = D in cuBLAS's order): nullopt
// when it has none or refuses the combination.
cublasStatus_t PickAlgorithm(const GpuContext::BlasLt& lt, const LtMatmulDescriptors& d,
                             const uint32_t (&alignments)[3],
                             std::optional<cublasLtMatmulAlgo_t>* algo) {
  cublasLtMatmulPreference_t preference = nullptr;
  cublasStatus_t s = lt.api->preference_create(&preference);
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  const uint64_t workspace = lt.workspace_bytes;
  s = lt.api->preference_set_attribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof(workspace));
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligned[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignments[0]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignments[1]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignments[2]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignments[2]}};
  for (const auto& [attribute, bytes] : aligned) {
    if (s == CUBLAS_STATUS_SUCCESS) {
      s = lt.api->preference_set_attribute(preference, attribute, &bytes, sizeof(bytes));
    }
  }
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = lt.api->algo_get_heuristic(lt.handle, d.desc, d.first, d.second, d.out, d.out,
                                   preference, 1, &result, &found);
  }
  lt.api->preference_destroy(preference);
  if (Refused(s) || (s == CUBLAS_STATUS_SUCCESS && found == 0)) {
    *algo = std::nullopt;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (s == CUBLAS_STATUS_SUCCESS) *algo = result.algo;
  return s;
}

}  // namespace

GpuGemmArgs RowMajorGemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                         const void* a, int64_t lda, const void* b, int64_t ldb, void* c,
                         cudaDataType_t type, cublasComputeType_t compute) {
  GpuGemmArgs g;
  g.transpose_a = transpose_a;
  g.transpose_b = transpose_b;
  g.m = static_cast<int>(m);
  g.n = static_cast<int>(n);
  g.k = static_cast<int>(k);
  g.a = a;
  g.lda = static_cast<int>(lda);
  g.b = b;
  g.ldb = static_cast<int>(ldb);
  g.c = c;
  g.type = type;
  g.compute = compute;
  return g;
}

absl::StatusOr<cudaDataType_t> GpuGemmDataType(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
      return CUDA_R_32F;
    case DT_DOUBLE:
      return CUDA_R_64F;
    case DT_HALF:
      return CUDA_R_16F;
    case DT_BFLOAT16:
      return CUDA_R_16BF;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no GPU matrix product of ", DataTypeName(dtype)));
  }
}

cublasComputeType_t GpuGemmComputeType(DataType dtype, GpuMatMulPrecision float_precision) {
  if (dtype == DT_DOUBLE) return CUBLAS_COMPUTE_64F;
  if (dtype != DT_FLOAT) return CUBLAS_COMPUTE_32F;
  switch (float_precision) {
    case GpuMatMulPrecision::kFloat32:
      return CUBLAS_COMPUTE_32F;
    case GpuMatMulPrecision::kTF32:
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GpuMatMulPrecision::kBF16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
  }
  return CUBLAS_COMPUTE_32F;
}

absl::StatusOr<std::optional<GpuMatMulPrecision>> NodeGpuPrecision(
    const OpKernelConstruction& ctx) {
  if (ctx.node().attrs().count(kGpuPrecisionAttr) == 0) return std::nullopt;
  absl::StatusOr<std::string> name = ctx.GetAttr<std::string>(kGpuPrecisionAttr);
  absl::StatusOr<GpuMatMulPrecision> p =
      name.ok() ? ParseGpuMatMulPrecision(*name) : absl::StatusOr<GpuMatMulPrecision>(name.status());
  if (!p.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().op(), " '", ctx.node().name(),
                                                   "': attr ", kGpuPrecisionAttr, ": ",
                                                   p.status().message()));
  }
  return *p;
}

absl::Status EnqueueGpuGemm(OpKernelContext* ctx, const GpuGemmArgs& g, absl::string_view what) {
  // WithBlas makes the GPU current and puts the handle on its compute stream.
  // alpha and beta are host values of the compute type's scale type.
  const double one_d = 1, beta_d = g.beta;
  const float one_f = 1, beta_f = g.beta;
  const bool wide = g.compute == CUBLAS_COMPUTE_64F;
  const void* one = wide ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = wide ? static_cast<const void*>(&beta_d) : &beta_f;
  const cudaDataType_t c_type = g.c_type.value_or(g.type);
  const ColumnMajorGemm cm = ToColumnMajor(g.transpose_a, g.transpose_b, g.m, g.n, g.k, g.lda,
                                           g.ldb);
  const cublasOperation_t op_first = cm.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = cm.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  return GpuOf(ctx)->WithBlas(
      [&](cublasHandle_t handle) -> cublasStatus_t {
        // The default math mode keeps CUBLAS_COMPUTE_32F exact (the handle
        // is shared: restore it).
        cublasStatus_t s = cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
        cublasMath_t mode = CUBLAS_DEFAULT_MATH;
        s = cublasGetMathMode(handle, &mode);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
        if (mode != CUBLAS_DEFAULT_MATH) {
          s = cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
          if (s != CUBLAS_STATUS_SUCCESS) return s;
        }
        // Column-major, the product is B's then A's (blas_layout.h).
        if (g.batch_count > 1) {
          s = cublasGemmStridedBatchedEx(
              handle, op_first, op_second, static_cast<int>(cm.m), static_cast<int>(cm.n),
              static_cast<int>(cm.k), one, g.b, g.type, static_cast<int>(cm.first.ld),
              g.stride_b, g.a, g.type, static_cast<int>(cm.second.ld), g.stride_a, beta, g.c,
              c_type, static_cast<int>(cm.ldc), g.stride_c, g.batch_count, g.compute,
              CUBLAS_GEMM_DEFAULT);
        } else {
          s = cublasGemmEx(handle, op_first, op_second, static_cast<int>(cm.m),
                           static_cast<int>(cm.n), static_cast<int>(cm.k), one, g.b, g.type,
                           static_cast<int>(cm.first.ld), g.a, g.type,
                           static_cast<int>(cm.second.ld), beta, g.c, c_type,
                           static_cast<int>(cm.ldc), g.compute, CUBLAS_GEMM_DEFAULT);
        }
        if (mode != CUBLAS_DEFAULT_MATH) {
          const cublasStatus_t restored = cublasSetMathMode(handle, mode);
          if (s == CUBLAS_STATUS_SUCCESS) s = restored;
        }
        return s;
      },
      what);
}

absl::StatusOr<bool> GpuEpilogueGemm::Enqueue(OpKernelContext* ctx, const GpuGemmArgs& g,
                                              GemmEpilogue epilogue, void* vector,
                                              absl::string_view what) {
  // Float scales, C of the operands' type, nothing accumulated: as below.
  if (g.compute == CUBLAS_COMPUTE_64F || g.beta != 0 || g.c_type.value_or(g.type) != g.type) {
    return false;
  }
  // Without cuBLASLt (a library folder missing it) every product falls
  // back: the pass has already fused, so failing would stop the graph.
  if (absl::StatusOr<const CublasLtApi*> lt = LoadCublasLt(); !lt.ok()) {
    static absl::once_flag once;
    absl::call_once(once, [&] { LogFallback(what, lt.status().message()); });
    return false;
  }
  // cuBLAS's A is the row-major B, its B the row-major A (blas_layout.h).
  const uint32_t alignments[3] = {AlignmentOf(g.b), AlignmentOf(g.a), AlignmentOf(g.c)};
  const Key key{g.transpose_a, g.transpose_b, g.m, g.n, g.k, g.lda, g.ldb, g.type, g.compute,
                epilogue, {alignments[0], alignments[1], alignments[2], AlignmentOf(vector)}};
  std::optional<std::optional<cublasLtMatmulAlgo_t>> known;
  {
    absl::MutexLock lock(&mu_);
    auto it = algos_.find(key);
    if (it != algos_.end()) {
      if (!it->second.has_value()) return false;
      known = it->second;
    }
  }
  bool enqueued = false;  // WithBlasLt makes the GPU current
  RETURN_IF_ERROR(GpuOf(ctx)->WithBlasLt(
      [&](const GpuContext::BlasLt& lt) -> cublasStatus_t {
        LtMatmulDescriptors d(lt.api);
        cublasStatus_t s = d.Make(g, epilogue, vector);
        if (Refused(s)) {  // not enqueued, nor tried again for this key
          LogFallback(what, "the descriptors were refused");
          absl::MutexLock lock(&mu_);
          algos_[key] = std::nullopt;
          return CUBLAS_STATUS_SUCCESS;
        }
        if (s != CUBLAS_STATUS_SUCCESS) return s;
        std::optional<cublasLtMatmulAlgo_t> algo;
        if (known.has_value()) {
          algo = *known;
        } else {
          s = PickAlgorithm(lt, d, alignments, &algo);
          if (s != CUBLAS_STATUS_SUCCESS) return s;
          if (!algo.has_value()) LogFallback(what, "the heuristic has no algorithm");
          absl::MutexLock lock(&mu_);
          algos_[key] = algo;
        }
        if (!algo.has_value()) return CUBLAS_STATUS_SUCCESS;
        const float one = 1, zero = 0;
        s = lt.api->matmul(lt.handle, d.desc, &one, g.b, d.first, g.a, d.second, &zero, g.c,
                           d.out, g.c, d.out, &*algo, lt.workspace, lt.workspace_bytes,
                           lt.stream);
        if (Refused(s)) {
          LogFallback(what, "the matmul was refused");
          absl::MutexLock lock(&mu_);
          algos_[key] = std::nullopt;  // the caller's way from now on
          return CUBLAS_STATUS_SUCCESS;
        }
        enqueued = s == CUBLAS_STATUS_SUCCESS;
        return s;
      },
      what));
  return enqueued;
}

}  // namespace internal
}  // namespace sluice
