// bfloat16 GEMM on the CPU, for the kernels that automatic mixed precision
// (placement/auto_mixed_precision.h) turns to bfloat16: row-major
// C[m,n] = op(A)[m,k] * op(B)[k,n] + beta * C with A and B in bfloat16 and
// C in float (products exact, sums in float, as every bf16 GEMM unit does).
//
//   internal::Bf16Gemm(false, true, m, n, k, a, lda, b, ldb, /*beta=*/0.0f, c, ldc);
//   internal::FloatToBf16(c, out, m * n);   // round to nearest even
//
// oneDNN's matmul primitive runs it (AMX or AVX512-BF16 where the CPU has
// them, oneDNN's own emulation otherwise), on the calling thread. Whether
// this CPU multiplies bf16 natively decides whether mixed precision pays
// here: CpuHasNativeBf16Gemm.
//
// Thread-safe.
#ifndef SLUICE_OPS_INTERNAL_BF16_GEMM_H_
#define SLUICE_OPS_INTERNAL_BF16_GEMM_H_

#include <cstdint>

#include "graph/types.h"

namespace sluice {
namespace internal {

void Bf16Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const BFloat16* a,
              int64_t lda, const BFloat16* b, int64_t ldb, float beta, float* c, int64_t ldc);

// AVX512-BF16 or AMX, as oneDNN sees the CPU.
bool CpuHasNativeBf16Gemm();

void FloatToBf16(const float* in, BFloat16* out, int64_t n);
void Bf16ToFloat(const BFloat16* in, float* out, int64_t n);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_BF16_GEMM_H_
