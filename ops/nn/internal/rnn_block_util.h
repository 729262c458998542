// Helpers shared by the block RNN kernels (ops/nn/lstm_block_kernels.cc,
// ops/nn/gru_block_kernels.cc): shape checks that name the input, a GEMM that
// accepts empty operands, and the two activations.
//
//   RETURN_IF_ERROR(internal::ExpectShape(ctx, 1, "cs_prev", {batch, cell}));
//   internal::RnnGemm(false, true, m, n, k, a, b, c);   // c = a * b^T
//
// Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_NN_INTERNAL_RNN_BLOCK_UTIL_H_
#define SLUICE_OPS_NN_INTERNAL_RNN_BLOCK_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/internal/blas.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

// InvalidArgument unless input `i` (called `name`) has rank `rank`.
inline absl::Status ExpectRank(const OpKernelContext* ctx, int i, const char* name, int rank) {
  const Tensor& t = ctx->input(i);
  if (t.dims() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " must be rank ", rank, " but has shape ",
                                                 t.shape().DebugString()));
}

// InvalidArgument unless input `i` (called `name`) has exactly `dims`.
inline absl::Status ExpectShape(const OpKernelContext* ctx, int i, const char* name,
                                std::initializer_list<int64_t> dims) {
  const TensorShape want(dims);
  const Tensor& t = ctx->input(i);
  if (t.shape() == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " must have shape ", want.DebugString(),
                                                 " but has shape ", t.shape().DebugString()));
}

// Row-major, densely stored c[m, n] = op(a)[m, k] op(b)[k, n] (+ c when
// `accumulate`); nothing to do when m or n is 0, zeros when k is 0.
inline void RnnGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                    const float* b, float* c, bool accumulate = false) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0f);
    return;
  }
  Gemm(trans_a, trans_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), a,
       static_cast<int>(trans_a ? m : k), b, static_cast<int>(trans_b ? k : n), c,
       static_cast<int>(n), accumulate ? 1.0f : 0.0f);
}

inline float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// out[r, :] = [a[r, :a_cols], b[r, :b_cols]] for each of `rows` rows.
inline void ConcatColumns(int64_t rows, const float* a, int64_t a_cols, const float* b,
                          int64_t b_cols, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(a + r * a_cols, a + (r + 1) * a_cols, out + r * (a_cols + b_cols));
    std::copy(b + r * b_cols, b + (r + 1) * b_cols, out + r * (a_cols + b_cols) + a_cols);
  }
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_NN_INTERNAL_RNN_BLOCK_UTIL_H_
