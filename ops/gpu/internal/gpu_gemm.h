// The GPU's matrix products, shared by MatMul and the fused ops: a plain
// cuBLAS GEMM, and a cuBLASLt GEMM whose epilogue adds a bias (then a ReLU)
// or computes a bias gradient in the same kernel.
//
//   internal::GpuGemmArgs g = ...;   // row-major C[m,n] = op(A) op(B)
//   RETURN_IF_ERROR(internal::EnqueueGpuGemm(ctx, g, "MatMul 'dense/mm'"));
//
//   ASSIGN_OR_RETURN(bool fused, epilogue_gemm_.Enqueue(ctx, g, GemmEpilogue::kBiasRelu,
//                                                       bias_ptr, what));
//   if (!fused) { ...the GEMM, then the bias and the ReLU as kernels of their own... }
//
// Sluice's matrices are row-major and cuBLAS's column-major:
// internal/blas_layout.h maps one onto the other (B first, m and n swapped),
// and says why a bias is cuBLASLt's BIAS epilogue and the column sums of
// op(B) its BGRADA.
//
// SLUICE_LOG_FUSED_GEMM=1 in the environment prints on stderr each shape
// whose fused product falls back, and why.
//
// Everything is only enqueued on the kernel's compute stream.
// Thread-safety: EnqueueGpuGemm is thread-safe; a GpuEpilogueGemm may be
// shared by the threads running one kernel (its cache is locked).
#ifndef SLUICE_OPS_GPU_INTERNAL_GPU_GEMM_H_
#define SLUICE_OPS_GPU_INTERNAL_GPU_GEMM_H_

#include <cublasLt.h>
#include <cublas_v2.h>
#include <library_types.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/types.h"
#include "ops/gpu/matmul_precision.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

// One row-major product C[m,n] = op(A) op(B), all in device memory; C's
// rows are n long.
struct GpuGemmArgs {
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int lda = 0;  // A's stored row length
  const void* b = nullptr;
  int ldb = 0;
  void* c = nullptr;
  cudaDataType_t type = CUDA_R_32F;      // of A and B (and C unless c_type)
  std::optional<cudaDataType_t> c_type;  // C's, when not `type` (bfloat16 A, B into float C)
  float beta = 0;                        // C = op(A) op(B) + beta C
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  // batch_count products at once (EnqueueGpuGemm only): product i reads A
  // and B at i * stride_a and i * stride_b elements (0: the same matrix
  // each time) and writes C at i * stride_c.
  int batch_count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

// The args of C = op(A) op(B) over row-major operands of `type` (rows of
// lda and ldb elements; C's of n), summing in `compute`. Every size must fit
// in an int (the kernels' shape checks say so first).
GpuGemmArgs RowMajorGemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                         const void* a, int64_t lda, const void* b, int64_t ldb, void* c,
                         cudaDataType_t type, cublasComputeType_t compute);

// The cuBLAS element type of `dtype` (float, double, half, bfloat16);
// InvalidArgument otherwise.
absl::StatusOr<cudaDataType_t> GpuGemmDataType(DataType dtype);

// How a GEMM of `dtype` accumulates: float as `float_precision` says (exact,
// TF32 or bf16 tensor cores), double in double, 16-bit types in float.
cublasComputeType_t GpuGemmComputeType(DataType dtype, GpuMatMulPrecision float_precision);

// A node's own float precision (attr _gpu_precision, matmul_precision.h):
// unset when it has none; InvalidArgument naming the node when the value is
// not one of the spellings.
absl::StatusOr<std::optional<GpuMatMulPrecision>> NodeGpuPrecision(
    const OpKernelConstruction& ctx);

// Enqueues the product with cublasGemmEx (alpha 1, g.beta), or the
// batch_count products with cublasGemmStridedBatchedEx. k == 0 is the
// caller's (an empty sum). `what` names the caller in errors.
absl::Status EnqueueGpuGemm(OpKernelContext* ctx, const GpuGemmArgs& g, absl::string_view what);

enum class GemmEpilogue {
  kBias,         // C = op(A) op(B) + bias (the vector: n elements, read)
  kBiasRelu,     // C = max(op(A) op(B) + bias, 0)
  kBiasGradOfB,  // C = op(A) op(B); vector[j] = sum over k of op(B)[k, j] (written)
};

// The cuBLASLt products with an epilogue, with the algorithm cuBLASLt's
// heuristic picks remembered per shape (asked once, not every step).
class GpuEpilogueGemm {
 public:
  GpuEpilogueGemm() = default;
  GpuEpilogueGemm(const GpuEpilogueGemm&) = delete;
  GpuEpilogueGemm& operator=(const GpuEpilogueGemm&) = delete;

  // Enqueues `g` (C of g.type, beta 0) with `epilogue` over `vector` (device
  // memory, n elements of g.type) as one cuBLASLt matmul: true. False, with
  // nothing enqueued, when cuBLASLt cannot be opened, or has no kernel for
  // (or refuses) this epilogue, shape, type and alignment (then again for
  // this key without asking): the caller computes it another way. An error
  // when a call fails otherwise.
  absl::StatusOr<bool> Enqueue(OpKernelContext* ctx, const GpuGemmArgs& g, GemmEpilogue epilogue,
                               void* vector, absl::string_view what);

 private:
  struct Key {
    bool transpose_a, transpose_b;
    int m, n, k, lda, ldb;
    cudaDataType_t type;
    cublasComputeType_t compute;
    GemmEpilogue epilogue;
    uint32_t alignments[4];  // of cuBLAS's A, B, C and the vector, up to 256 bytes
    template <typename H>
    friend H AbslHashValue(H h, const Key& key) {
      return H::combine(std::move(h), key.transpose_a, key.transpose_b, key.m, key.n, key.k,
                        key.lda, key.ldb, static_cast<int>(key.type),
                        static_cast<int>(key.compute), static_cast<int>(key.epilogue),
                        key.alignments[0], key.alignments[1], key.alignments[2],
                        key.alignments[3]);
    }
    bool operator==(const Key& o) const {
      return transpose_a == o.transpose_a && transpose_b == o.transpose_b && m == o.m &&
             n == o.n && k == o.k && lda == o.lda && ldb == o.ldb && type == o.type &&
             compute == o.compute && epilogue == o.epilogue &&
             std::equal(alignments, alignments + 4, o.alignments);
    }
  };

  absl::Mutex mu_;
  // nullopt: cuBLASLt has no algorithm for the key.
  absl::flat_hash_map<Key, std::optional<cublasLtMatmulAlgo_t>> algos_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_GPU_GEMM_H_
