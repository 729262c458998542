// Dense linear algebra on the innermost matrices, as tf.linalg writes it:
// MatrixInverse (tf.linalg.inv), MatrixDeterminant (det),
// LogMatrixDeterminant (slogdet), MatrixSolve (solve),
// MatrixTriangularSolve (triangular_solve, and cholesky_solve through it),
// Cholesky, and the factorizations Qr (qr, and Keras' Orthogonal
// initializer), SelfAdjointEigV2 (eigh, eigvalsh) and Svd (svd, norm's
// "2"). CPU kernels for float and double through LAPACK
// (ops/internal/lapack.h), one matrix after another over the device's
// threads.
//
//   Output l = ops::Cholesky(s, k);                                  // K = L L^T
//   Output alpha = ops::MatrixTriangularSolve(s, l, y);              // L^-1 y
//   ops::LogMatrixDeterminantOutputs ld = ops::LogMatrixDeterminant(s, k);
//
// Semantics are TensorFlow's: an LU factorization with partial pivoting
// for inverse, determinant and solve (a zero pivot makes the inverse and the
// solve fail; the determinant of an empty matrix is 1; a log determinant
// that is not finite has sign 0); Cholesky reads the lower triangle only,
// writes zeros above the diagonal, and gives NaN in the lower triangle of a
// matrix that is not positive definite; the triangular solve reads one
// triangle and broadcasts batch dimensions (NumPy's rules), the others
// require them equal; `adjoint` solves with the (conjugate) transpose.
// QR, eigenvectors and singular vectors are unique only up to signs:
// LAPACK's and TensorFlow's (Eigen's) Householder QR agree, eigenvectors
// and singular vectors may differ from TensorFlow's by a sign per vector.
// A symmetric eigenproblem that fails (NaN input) is an error, an SVD that
// fails gives NaN, as in TensorFlow.
//
// Gradients as TensorFlow's linalg_grad.py (Cholesky's from the inverse of
// L by a triangular solve; the triangular solve's summed over broadcast
// batch dimensions; slogdet's through log_abs_determinant only; Qr's for
// matrices of known size, except the full factors of a tall one;
// SelfAdjointEigV2's; Svd's through the values alone, or with the vectors
// for matrices of known size, full factors only when the sides differ by at
// most one).
//
// Errors, InvalidArgument: an input of rank < 2, matrices that are not
// square, a right-hand side whose rows or batch dimensions do not match,
// "Input is not invertible." (TensorFlow's words where its kernels have
// them), a matrix of more than INT_MAX elements (LAPACK's indices).
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_LINALG_OPS_H_
#define SLUICE_OPS_MATH_LINALG_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterLinalgOps(OpRegistry* ops);
absl::Status RegisterLinalgGradients(OpRegistry* ops);
void RegisterLinalgKernels(KernelRegistry* kernels);

namespace ops {

// x: [..., M, M]; the same shape.
Output MatrixInverse(const Scope& scope, Input x, bool adjoint = false,
                     std::source_location loc = std::source_location::current());
// x: [..., M, M]; [...].
Output MatrixDeterminant(const Scope& scope, Input x,
                         std::source_location loc = std::source_location::current());
struct LogMatrixDeterminantOutputs {
  Output sign;                 // [...]: -1, 0 or 1
  Output log_abs_determinant;  // [...]
};
LogMatrixDeterminantOutputs LogMatrixDeterminant(
    const Scope& scope, Input x, std::source_location loc = std::source_location::current());
// matrix: [..., M, M], rhs: [..., M, K] (equal batch dimensions); [..., M, K].
Output MatrixSolve(const Scope& scope, Input matrix, Input rhs, bool adjoint = false,
                   std::source_location loc = std::source_location::current());
struct TriangularSolveAttrs {
  bool lower = true;     // read the lower triangle (else the upper)
  bool adjoint = false;  // solve with the transpose
};
// matrix: [..., M, M], rhs: [..., M, K] (batch dimensions broadcast).
Output MatrixTriangularSolve(const Scope& scope, Input matrix, Input rhs,
                             const TriangularSolveAttrs& attrs = {},
                             std::source_location loc = std::source_location::current());
// x: [..., M, M] (its lower triangle); L, lower triangular.
Output Cholesky(const Scope& scope, Input x,
                std::source_location loc = std::source_location::current());

// x: [..., M, N] = Q R; with K = min(M, N), q [..., M, K] and r [..., K, N]
// (full_matrices: [..., M, M] and [..., M, N]).
struct QrOutputs {
  Output q, r;
};
QrOutputs Qr(const Scope& scope, Input x, bool full_matrices = false,
             std::source_location loc = std::source_location::current());

// x: [..., N, N] (its lower triangle) = V diag(e) V^T; e [..., N] ascending,
// v [..., N, N] (shape [0] without compute_v).
struct SelfAdjointEigOutputs {
  Output e, v;
};
SelfAdjointEigOutputs SelfAdjointEigV2(const Scope& scope, Input x, bool compute_v = true,
                                       std::source_location loc = std::source_location::current());

// x: [..., M, N] = U diag(s) V^T; s [..., K] descending, u [..., M, K], v
// [..., N, K] (full_matrices: [..., M, M], [..., N, N]; shape [0] without
// compute_uv).
struct SvdAttrs {
  bool compute_uv = true;
  bool full_matrices = false;
};
struct SvdOutputs {
  Output s, u, v;
};
SvdOutputs Svd(const Scope& scope, Input x, const SvdAttrs& attrs = {},
               std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_LINALG_OPS_H_
