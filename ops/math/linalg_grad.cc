// Gradients of the linear algebra ops (linalg_ops.h), as TensorFlow's
// linalg_grad.py builds them, for real matrices (adjoint = transpose).
#include <string>
#include <vector>

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

}  // namespace

absl::Status RegisterLinalgGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("MatrixInverse", InverseGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixDeterminant", DeterminantGrad));
  RETURN_IF_ERROR(ops->SetGradient("LogMatrixDeterminant", LogDeterminantGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixSolve", SolveGrad));
  RETURN_IF_ERROR(ops->SetGradient("MatrixTriangularSolve", SolveGrad));
  RETURN_IF_ERROR(ops->SetGradient("Cholesky", CholeskyGrad));
  return absl::OkStatus();
}

}  // namespace sluice
