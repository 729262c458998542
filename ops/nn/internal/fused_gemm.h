// A GEMM with a bias-and-activation epilogue, the arithmetic of
// `_FusedMatMul` (ops/nn/fused_ops.h) on the CPU:
//
//   out[m, n] = act(op(a)[m, k] op(b)[k, n] + bias[n])    (row-major, float)
//
//   internal::FusedGemmArgs g{.transpose_a = false, .m = 256, .n = 1024, .k = 784,
//                             .a = x, .lda = 784, .b = w, .ldb = 1024,
//                             .bias = b, .activation = internal::Activation::kRelu,
//                             .out = y};
//   internal::FusedGemm(g, pool, internal::BiasPlacement::kBetaOne);
//
// Two ways to apply the bias, both kept so bench/fused_matmul can compare
// them (bench/RESULTS.md, "Fused MLP step"):
//   kEpilogue  GEMM with beta = 0, then one pass over `out` adding the bias
//              and applying the activation (row blocks on `pool`);
//   kBetaOne   `out` filled with the broadcast bias, GEMM with beta = 1, then
//              the activation in place (a second pass only with one).
// The kernel uses kBetaOne, measured 4-6 % faster here at 256x784x1024 and
// 256x1024x1024 (the bias fill warms `out` for the GEMM's read; the
// epilogue's pass reads the product back after the GEMM has evicted part
// of it).
//
// The GEMM goes through ops/internal/blas.h (split over the running
// kernel's device pool); the passes run on `pool` (null: the calling thread). Thread-safe; borrows
// every buffer; `out` must not alias a, b or bias.
#ifndef SLUICE_OPS_NN_INTERNAL_FUSED_GEMM_H_
#define SLUICE_OPS_NN_INTERNAL_FUSED_GEMM_H_

#include "runtime/thread_pool.h"

namespace sluice {
namespace internal {

enum class Activation { kNone, kRelu };
enum class BiasPlacement { kEpilogue, kBetaOne };

struct FusedGemmArgs {
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0, n = 0, k = 0;  // m, n >= 1; k >= 0
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  const float* bias = nullptr;  // [n]; null: no bias
  Activation activation = Activation::kNone;
  float* out = nullptr;  // [m, n], n elements per row
};

void FusedGemm(const FusedGemmArgs& args, ThreadPool* pool, BiasPlacement placement);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_FUSED_GEMM_H_
