// Gradients of the linear algebra ops (linalg_ops.h), as TensorFlow's
// linalg_grad.py builds them, for real matrices (adjoint = transpose).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/broadcast_ops.h"
#include "ops/array/matrix_diag_ops.h"
#include "ops/internal/grad_util.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/math/internal/batch_grad.h"
#include "ops/math/linalg_ops.h"
#include "ops/math/math_ops.h"

namespace sluice {
namespace {

using GradResult = absl::StatusOr<std::vector<Output>>;
using internal::InputOf;
using internal::OutputOf;

Output Scalar(const Scope& s, double v, DataType dtype) {
  return ops::Cast(s, ops::Const(s, v), dtype);
}

// The transpose of the innermost matrices: [..., M, N] -> [..., N, M]
// (the perm built at run time when the rank is unknown).
Output MatrixTranspose(const Scope& s, const Output& x) {
  const int rank = x.shape().rank();
  if (rank >= 2) {
    std::vector<int32_t> perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    std::swap(perm[rank - 1], perm[rank - 2]);
    return ops::Transpose(s, x, ops::Const(s, perm));
  }
  const Output r = ops::Rank(s, x);
  const Output lead = ops::Range(s, 0, ops::Sub(s, r, 2), 1);
  return ops::Transpose(
      s, x, ops::ConcatV2(s, {lead, ops::Pack(s, {ops::Sub(s, r, 1), ops::Sub(s, r, 2)})}, 0));
}

// A diagonal matrix per vector of the batch.
Output Diag(const Scope& s, const Output& d) {
  return ops::MatrixDiagV3(s, d, 0, Scalar(s, 0, d.dtype()));
}

// TensorFlow's _SafeReciprocal: x / (x^2 + 1e-20), no inf where x is 0.
Output SafeReciprocal(const Scope& s, const Output& x) {
  return ops::Mul(s, x, ops::Reciprocal(s, ops::Add(s, ops::Square(s, x),
                                                    Scalar(s, 1e-20, x.dtype()))));
}

// f(i, j) = 1 / (d_j - d_i) off the diagonal, 0 on it (safely).
Output InverseDifferences(const Scope& s, const Output& d) {
  return ops::MatrixSetDiagV3(
      s, SafeReciprocal(s, ops::Sub(s, ops::ExpandDims(s, d, -2), ops::ExpandDims(s, d, -1))),
      ops::ZerosLike(s, d), 0);
}

// The columns [begin, begin + size) of the innermost matrices (size -1: to
// the end) of x of rank `rank` (the op's own known rank: an incoming
// gradient's may be unknown).
Output Columns(const Scope& s, const Output& x, int rank, int64_t begin, int64_t size) {
  std::vector<int64_t> b(rank, 0), n(rank, -1);
  b[rank - 1] = begin;
  n[rank - 1] = size;
  return ops::Slice(s, x, ops::Const(s, b), ops::Const(s, n));
}

// The incoming gradient of output i, or zeros where none flows.
Output GradOrZeros(const Scope& s, const Node& node, absl::Span<const Output> g, int i) {
  return g[i].valid() ? g[i] : ops::ZerosLike(s, OutputOf(node, i));
}

// g: [...] -> [..., 1, 1], to scale whole matrices.
Output PerMatrix(const Scope& s, const Output& g) {
  return ops::ExpandDims(s, ops::ExpandDims(s, g, -1), -1);
}

// d inv(A) = -inv(A) dA inv(A): with C = inv(A) (or inv(A)^T under
// adjoint), dA = -C^T G C^T (-C G^T C, transposed back, under adjoint).
GradResult InverseGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool adjoint, node.GetAttr<bool>("adjoint"));
  const Output c = OutputOf(node);
  Output inner = ops::BatchMatMulV2(s, g[0], c, {.adj_x = adjoint, .adj_y = !adjoint});
  std::vector<Output> grads = {ops::Neg(s, ops::BatchMatMulV2(s, c, inner, {.adj_x = !adjoint}))};
  RETURN_IF_ERROR(s.status());
  return grads;
}

// d det(A) = det(A) tr(inv(A) dA): dA = g det inv(A)^T.
GradResult DeterminantGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output a_adj_inv = ops::MatrixInverse(s, InputOf(node, 0), /*adjoint=*/true);
  std::vector<Output> grads = {
      ops::Mul(s, PerMatrix(s, ops::Mul(s, g[0], OutputOf(node))), a_adj_inv)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

// Through log|det| only (the sign is piecewise constant): dA = g inv(A)^T.
GradResult LogDeterminantGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  std::vector<Output> grads(1);
  if (!g[1].valid()) return grads;
  grads[0] = ops::Mul(s, PerMatrix(s, g[1]), ops::MatrixInverse(s, InputOf(node, 0), true));
  RETURN_IF_ERROR(s.status());
  return grads;
}

// X = op(A)^-1 B: dB = op(A)^-T G; dA = -dB X^T (-X dB^T under adjoint).
GradResult SolveGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool adjoint, node.GetAttr<bool>("adjoint"));
  const Output a = InputOf(node, 0), b = InputOf(node, 1), x = OutputOf(node);
  std::vector<Output> grads(2);
  if (node.op() == "MatrixSolve") {
    grads[1] = ops::MatrixSolve(s, a, g[0], !adjoint);
  } else {
    ASSIGN_OR_RETURN(bool lower, node.GetAttr<bool>("lower"));
    grads[1] = ops::MatrixTriangularSolve(s, a, g[0], {.lower = lower, .adjoint = !adjoint});
  }
  grads[0] = adjoint ? ops::Neg(s, ops::BatchMatMulV2(s, x, grads[1], {.adj_y = true}))
                     : ops::Neg(s, ops::BatchMatMulV2(s, grads[1], x, {.adj_y = true}));
  if (node.op() == "MatrixTriangularSolve") {
    ASSIGN_OR_RETURN(bool lower, node.GetAttr<bool>("lower"));
    // Only the triangle the solve read has a gradient.
    grads[0] = ops::MatrixBandPart(s, grads[0], int64_t{lower ? -1 : 0}, int64_t{lower ? 0 : -1});
    internal::SumOverBroadcastBatch(s, a, b, &grads[0], &grads[1]);
  }
  RETURN_IF_ERROR(s.status());
  return grads;
}

// A = L L^T (TensorFlow's _CholeskyGrad, Murray 2016): with P = L^T G, its
// diagonal halved and its strict upper triangle dropped, and L^-1 from a
// triangular solve against the identity,
// dA = (L^-T (P + P^T) L^-1) / 2, symmetric.
GradResult CholeskyGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output l = OutputOf(node);
  const DataType t = l.dtype();
  const Output zero = Scalar(s, 0, t);
  const Output eye = ops::MatrixSetDiagV3(
      s, ops::ZerosLike(s, l), ops::OnesLike(s, ops::MatrixDiagPartV3(s, l, 0, zero)), 0);
  const Output l_inv = ops::MatrixTriangularSolve(s, l, eye);
  Output p = ops::BatchMatMulV2(s, l, g[0], {.adj_x = true});
  p = ops::MatrixSetDiagV3(s, p, ops::Mul(s, Scalar(s, 0.5, t), ops::MatrixDiagPartV3(s, p, 0, zero)),
                           0);
  p = ops::MatrixBandPart(s, p, int64_t{-1}, int64_t{0});
  // L^-T P + L^-T P^T, as two products (no transpose of a rank-unknown P).
  const Output left = ops::Add(s, ops::BatchMatMulV2(s, l_inv, p, {.adj_x = true}),
                               ops::BatchMatMulV2(s, l_inv, p, {.adj_x = true, .adj_y = true}));
  std::vector<Output> grads = {
      ops::Mul(s, Scalar(s, 0.5, t), ops::BatchMatMulV2(s, left, l_inv))};
  RETURN_IF_ERROR(s.status());
  return grads;
}

// x r^-T for an upper triangular r (TensorFlow's _TriangularSolve in
// _QrGrad).
Output TimesInverseTranspose(const Scope& s, const Output& x, const Output& r) {
  return MatrixTranspose(
      s, ops::MatrixTriangularSolve(s, r, MatrixTranspose(s, x), {.lower = false}));
}

// TensorFlow's _QrGradSquareAndDeepMatrices: A = Q R with M >= N, reduced.
Output QrGradDeep(const Scope& s, const Output& q, const Output& r, const Output& dq,
                  const Output& dr) {
  const Output qdq = ops::BatchMatMulV2(s, q, dq, {.adj_x = true});
  const Output rdr = ops::BatchMatMulV2(s, r, dr, {.adj_y = true});
  const Output tril = ops::MatrixBandPart(
      s,
      ops::Add(s, ops::Sub(s, qdq, MatrixTranspose(s, qdq)),
               ops::Sub(s, rdr, MatrixTranspose(s, rdr))),
      int64_t{-1}, int64_t{0});
  const Output grad_a =
      ops::BatchMatMulV2(s, q, ops::Add(s, dr, TimesInverseTranspose(s, tril, r)));
  const Output grad_b =
      TimesInverseTranspose(s, ops::Sub(s, dq, ops::BatchMatMulV2(s, q, qdq)), r);
  return ops::Add(s, grad_a, grad_b);
}

// Defined, as in TensorFlow, for matrices of known size and reduced factors
// (or a full Q of a wide matrix); a wide matrix A = [X, Y] with R = [U, V]
// reduces to the square case.
GradResult QrGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  const Output q = OutputOf(node, 0), r = OutputOf(node, 1);
  const TensorShape& qs = q.shape();
  const TensorShape& rs = r.shape();
  if (qs.rank() < 2 || rs.rank() < 2 || qs.dim(qs.rank() - 2) < 0 || rs.dim(rs.rank() - 1) < 0 ||
      rs.dim(rs.rank() - 2) < 0) {
    return absl::UnimplementedError(
        absl::StrCat("Qr's gradient needs the matrices' shapes (node '", node.name(), "')"));
  }
  const int64_t m = qs.dim(qs.rank() - 2), n = rs.dim(rs.rank() - 1);
  if (rs.dim(rs.rank() - 2) > n && qs.dim(qs.rank() - 1) == m) {
    return absl::UnimplementedError(absl::StrCat(
        "Qr's gradient of a tall matrix with full_matrices (node '", node.name(), "')"));
  }
  const Output dq = GradOrZeros(s, node, g, 0), dr = GradOrZeros(s, node, g, 1);
  std::vector<Output> grads(1);
  if (m >= n) {
    grads[0] = QrGradDeep(s, q, r, dq, dr);
  } else {
    const int rank = rs.rank();
    const Output y = Columns(s, InputOf(node, 0), rank, m, -1);
    const Output dv = Columns(s, dr, rank, m, -1);
    const Output dx = QrGradDeep(s, q, Columns(s, r, rank, 0, m),
                                 ops::Add(s, dq, ops::BatchMatMulV2(s, y, dv, {.adj_y = true})),
                                 Columns(s, dr, rank, 0, m));
    grads[0] = ops::ConcatV2(s, {dx, ops::BatchMatMulV2(s, q, dv)}, -1);
  }
  RETURN_IF_ERROR(s.status());
  return grads;
}

// A = V diag(e) V^T from A's lower triangle: dA = V (diag(de) + F o V^T dV)
// V^T with F = 1 / (e_j - e_i), symmetrized into the lower triangle.
GradResult SelfAdjointEigGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool vectors, node.GetAttr<bool>("compute_v"));
  const Output ge = GradOrZeros(s, node, g, 0);
  Output inner = Diag(s, ge);
  Output v;
  if (vectors) {
    v = OutputOf(node, 1);
    const Output e = OutputOf(node, 0);
    inner = ops::Add(s, inner, ops::Mul(s, InverseDifferences(s, e),
                                        ops::BatchMatMulV2(s, v, GradOrZeros(s, node, g, 1),
                                                           {.adj_x = true})));
  } else {
    v = ops::SelfAdjointEigV2(s, InputOf(node, 0)).v;
  }
  Output grad = ops::BatchMatMulV2(s, v, ops::BatchMatMulV2(s, inner, v, {.adj_y = true}));
  grad = ops::MatrixBandPart(s, ops::Add(s, grad, MatrixTranspose(s, grad)), int64_t{-1},
                             int64_t{0});
  const Output half = Scalar(s, 0.5, grad.dtype());
  std::vector<Output> grads = {ops::MatrixSetDiagV3(
      s, grad, ops::Mul(s, half, ops::MatrixDiagPartV3(s, grad, 0, Scalar(s, 0, grad.dtype()))),
      0)};
  RETURN_IF_ERROR(s.status());
  return grads;
}

// TensorFlow's _SvdGrad: through the singular values alone, dA = U
// diag(ds) V^T; with the vectors, for matrices of known size (a tall one
// through its transpose), and full factors only when M and N differ by at
// most one.
GradResult SvdGrad(const Scope& s, const Node& node, absl::Span<const Output> g) {
  ASSIGN_OR_RETURN(bool uv, node.GetAttr<bool>("compute_uv"));
  ASSIGN_OR_RETURN(bool full, node.GetAttr<bool>("full_matrices"));
  const Output a = InputOf(node, 0);
  const Output gs_mat = Diag(s, GradOrZeros(s, node, g, 0));
  std::vector<Output> grads(1);
  if (!uv) {
    ops::SvdOutputs f = ops::Svd(s, a);
    grads[0] = ops::BatchMatMulV2(s, f.u, ops::BatchMatMulV2(s, gs_mat, f.v, {.adj_y = true}));
    RETURN_IF_ERROR(s.status());
    return grads;
  }
  const TensorShape& as = a.shape();
  if (as.rank() < 2 || as.dim(as.rank() - 2) < 0 || as.dim(as.rank() - 1) < 0) {
    return absl::UnimplementedError(
        absl::StrCat("Svd's gradient needs the matrix's size (node '", node.name(), "')"));
  }
  int64_t m = as.dim(as.rank() - 2), n = as.dim(as.rank() - 1);
  if (full && std::abs(m - n) > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "Svd's gradient with full_matrices for sides that differ by more than one (node '",
        node.name(), "')"));
  }
  Output sv = OutputOf(node, 0), u = OutputOf(node, 1), v = OutputOf(node, 2);
  Output gu = GradOrZeros(s, node, g, 1), gv = GradOrZeros(s, node, g, 2);
  const bool tall = m > n;  // then the gradient of A^T = V S U^T, transposed
  if (tall) {
    std::swap(m, n);
    std::swap(u, v);
    std::swap(gu, gv);
  }
  const Output s_mat = Diag(s, sv);
  const Output f = InverseDifferences(s, ops::Square(s, sv));
  const int rank = as.rank();
  const Output v1 = Columns(s, v, rank, 0, m), gv1 = Columns(s, gv, rank, 0, m);
  const Output f_u = ops::Mul(s, f, ops::BatchMatMulV2(s, u, gu, {.adj_x = true}));
  const Output f_v = ops::Mul(s, f, ops::BatchMatMulV2(s, v1, gv1, {.adj_x = true}));
  const Output term1_inner = ops::Add(
      s, ops::Add(s, gs_mat, ops::BatchMatMulV2(s, ops::Add(s, f_u, MatrixTranspose(s, f_u)), s_mat)),
      ops::BatchMatMulV2(s, s_mat, ops::Add(s, f_v, MatrixTranspose(s, f_v))));
  Output grad =
      ops::BatchMatMulV2(s, u, ops::BatchMatMulV2(s, term1_inner, v1, {.adj_y = true}));
  if (m != n) {
    const Output gv1t = MatrixTranspose(s, gv1);
    Output term2 = ops::Sub(
        s, gv1t, ops::BatchMatMulV2(s, ops::BatchMatMulV2(s, gv1t, v1), v1, {.adj_y = true}));
    if (full) {
      const Output v2 = Columns(s, v, rank, m, n - m), gv2 = Columns(s, gv, rank, m, n - m);
      term2 = ops::Sub(s, term2,
                       ops::BatchMatMulV2(s, ops::BatchMatMulV2(s, v1, gv2, {.adj_x = true}), v2,
                                          {.adj_y = true}));
    }
    const Output u_s_inv = ops::BatchMatMulV2(s, u, Diag(s, SafeReciprocal(s, sv)));
    grad = ops::Add(s, grad, ops::BatchMatMulV2(s, u_s_inv, term2));
  }
  grads[0] = tall ? MatrixTranspose(s, grad) : grad;
  RETURN_IF_ERROR(s.status());
  return grads;
}

}  // namespace

absl::Status RegisterLinalgGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("MatrixInverse", InverseGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixDeterminant", DeterminantGrad));
  RETURN_IF_ERROR(ops->SetGradient("LogMatrixDeterminant", LogDeterminantGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixSolve", SolveGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixTriangularSolve", SolveGrad));
  RETURN_IF_ERROR(ops->SetGradient("Cholesky", CholeskyGrad));
  RETURN_IF_ERROR(ops->SetGradient("Qr", QrGrad));
  RETURN_IF_ERROR(ops->SetGradient("SelfAdjointEigV2", SelfAdjointEigGrad));
  RETURN_IF_ERROR(ops->SetGradient("Svd", SvdGrad));
  return absl::OkStatus();
}

}  // namespace sluice
