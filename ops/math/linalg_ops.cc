// Linear algebra op definitions, shape functions and wrappers (kernels:
// linalg_kernels.cc; gradients: linalg_grad.cc).
#include "ops/math/linalg_ops.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/math/internal/batch_matmul_plan.h"

namespace sluice {
namespace {

constexpr char kTypes[] = "T: {double, float, half, complex64, complex128}";

// The batch dimensions and the matrix size of input i, a stack of square
// matrices (rank >= 2); the size is -1 when unknown. Refuses known sides
// that differ.
absl::Status SquareInput(InferenceContext* c, int i, std::vector<int64_t>* batch, int64_t* n) {
  RETURN_IF_ERROR(c->WithRankAtLeast(i, 2));
  const TensorShape& x = c->input(i);
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  if (rows >= 0 && cols >= 0 && rows != cols) {
    return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": input ", i,
                                                   " must hold square matrices, got shape ",
                                                   x.DebugString()));
  }
  batch->assign(x.dims().begin(), x.dims().end() - 2);
  *n = rows >= 0 ? rows : cols;
  return absl::OkStatus();
}

// MatrixInverse and Cholesky: the input's shape.
absl::Status SquareShape(InferenceContext* c) {
  if (c->input(0).unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> batch;
  int64_t n;
  RETURN_IF_ERROR(SquareInput(c, 0, &batch, &n));
  batch.push_back(n);
  batch.push_back(n);
  c->set_output(0, TensorShape(batch));
  return absl::OkStatus();
}

// MatrixDeterminant and LogMatrixDeterminant: the batch dimensions.
absl::Status DeterminantShape(InferenceContext* c) {
  TensorShape out = TensorShape::Unknown();
  if (!c->input(0).unknown_rank()) {
    std::vector<int64_t> batch;
    int64_t n;
    RETURN_IF_ERROR(SquareInput(c, 0, &batch, &n));
    out = TensorShape(batch);
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

// MatrixSolve (equal batch dimensions) and MatrixTriangularSolve (broadcast
// ones): the batch, then the rhs's rows and columns.
absl::Status SolveShape(InferenceContext* c, bool broadcast) {
  const TensorShape& a = c->input(0);
  const TensorShape& b = c->input(1);
  if (a.unknown_rank() || b.unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> unused;
  int64_t n;
  RETURN_IF_ERROR(SquareInput(c, 0, &unused, &n));
  RETURN_IF_ERROR(c->WithRankAtLeast(1, 2));
  const int64_t rows = b.dim(b.rank() - 2);
  if (n >= 0 && rows >= 0 && n != rows) {
    return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": the matrix ",
                                                   a.DebugString(), " and the right-hand side ",
                                                   b.DebugString(), " have other row counts"));
  }
  absl::StatusOr<std::vector<int64_t>> batch = internal::BatchMatMulBatchDims(a, b, broadcast);
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", batch.status().message()));
  }
  TensorShape out(*batch);
  out.AddDim(rows >= 0 ? rows : n);
  out.AddDim(b.dim(b.rank() - 1));
  c->set_output(0, out);
  return absl::OkStatus();
}

// Qr and Svd: the batch, then their factors' sides from M, N and K =
// min(M, N) (unknown when M or N is).
absl::Status FactorShapes(InferenceContext* c) {
  const TensorShape& x = c->input(0);
  if (x.unknown_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, TensorShape::Unknown());
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  const int64_t m = x.dim(x.rank() - 2), n = x.dim(x.rank() - 1);
  const int64_t k = m < 0 || n < 0 ? TensorShape::kUnknownDim : std::min(m, n);
  ASSIGN_OR_RETURN(bool full, c->GetAttr<bool>("full_matrices"));
  const std::vector<int64_t> batch(x.dims().begin(), x.dims().end() - 2);
  auto with = [&](std::initializer_list<int64_t> inner) {
    std::vector<int64_t> d = batch;
    d.insert(d.end(), inner);
    return TensorShape(d);
  };
  if (c->node().op() == "Qr") {
    c->set_output(0, with({m, full ? m : k}));
    c->set_output(1, with({full ? m : k, n}));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(bool uv, c->GetAttr<bool>("compute_uv"));
  c->set_output(0, with({k}));
  c->set_output(1, uv ? with({m, full ? m : k}) : TensorShape({0}));
  c->set_output(2, uv ? with({n, full ? n : k}) : TensorShape({0}));
  return absl::OkStatus();
}

// SelfAdjointEigV2: e [..., N], v as the input (or [0] without vectors).
absl::Status EigShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(bool vectors, c->GetAttr<bool>("compute_v"));
  c->set_output(1, vectors ? c->input(0) : TensorShape({0}));
  if (c->input(0).unknown_rank()) {
    c->set_output(0, TensorShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> batch;
  int64_t n;
  RETURN_IF_ERROR(SquareInput(c, 0, &batch, &n));
  batch.push_back(n);
  c->set_output(0, TensorShape(batch));
  if (vectors) {
    batch.push_back(n);
    c->set_output(1, TensorShape(batch));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterLinalgOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Qr")
                                    .Input("input: T")
                                    .Output("q: T")
                                    .Output("r: T")
                                    .Attr("full_matrices: bool = false")
                                    .Attr(kTypes)
                                    .SetShapeFn(FactorShapes)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Svd")
                                    .Input("input: T")
                                    .Output("s: T")
                                    .Output("u: T")
                                    .Output("v: T")
                                    .Attr("compute_uv: bool = true")
                                    .Attr("full_matrices: bool = false")
                                    .Attr(kTypes)
                                    .SetShapeFn(FactorShapes)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("SelfAdjointEigV2")
                                    .Input("input: T")
                                    .Output("e: T")
                                    .Output("v: T")
                                    .Attr("compute_v: bool = true")
                                    .Attr(kTypes)
                                    .SetShapeFn(EigShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixInverse")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr("adjoint: bool = false")
                                    .Attr(kTypes)
                                    .SetShapeFn(SquareShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("Cholesky")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr(kTypes)
                                    .SetShapeFn(SquareShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixDeterminant")
                                    .Input("input: T")
                                    .Output("output: T")
                                    .Attr(kTypes)
                                    .SetShapeFn(DeterminantShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("LogMatrixDeterminant")
                                    .Input("input: T")
                                    .Output("sign: T")
                                    .Output("log_abs_determinant: T")
                                    .Attr(kTypes)
                                    .SetShapeFn(DeterminantShape)));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixSolve")
                                    .Input("matrix: T")
                                    .Input("rhs: T")
                                    .Output("output: T")
                                    .Attr("adjoint: bool = false")
                                    .Attr(kTypes)
                                    .SetShapeFn([](InferenceContext* c) {
                                      return SolveShape(c, /*broadcast=*/false);
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("MatrixTriangularSolve")
                                    .Input("matrix: T")
                                    .Input("rhs: T")
                                    .Output("output: T")
                                    .Attr("lower: bool = true")
                                    .Attr("adjoint: bool = false")
                                    .Attr("T: {bfloat16, double, float, half, complex64, "
                                          "complex128}")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return SolveShape(c, /*broadcast=*/true);
                                    })));
  return absl::OkStatus();
}

namespace ops {

Output MatrixInverse(const Scope& s, Input x, bool adjoint, std::source_location loc) {
  return s.Op("MatrixInverse", loc).Input(x).Attr("adjoint", adjoint).Finalize1();
}

Output MatrixDeterminant(const Scope& s, Input x, std::source_location loc) {
  return s.Op("MatrixDeterminant", loc).Input(x).Finalize1();
}

LogMatrixDeterminantOutputs LogMatrixDeterminant(const Scope& s, Input x,
                                                 std::source_location loc) {
  std::vector<Output> out = s.Op("LogMatrixDeterminant", loc).Input(x).FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

Output MatrixSolve(const Scope& s, Input matrix, Input rhs, bool adjoint,
                   std::source_location loc) {
  return s.Op("MatrixSolve", loc).Input(matrix).Input(rhs).Attr("adjoint", adjoint).Finalize1();
}

Output MatrixTriangularSolve(const Scope& s, Input matrix, Input rhs,
                             const TriangularSolveAttrs& attrs, std::source_location loc) {
  return s.Op("MatrixTriangularSolve", loc)
      .Input(matrix)
      .Input(rhs)
      .Attr("lower", attrs.lower)
      .Attr("adjoint", attrs.adjoint)
      .Finalize1();
}

Output Cholesky(const Scope& s, Input x, std::source_location loc) {
  return s.Op("Cholesky", loc).Input(x).Finalize1();
}

QrOutputs Qr(const Scope& s, Input x, bool full_matrices, std::source_location loc) {
  std::vector<Output> out =
      s.Op("Qr", loc).Input(x).Attr("full_matrices", full_matrices).FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

SelfAdjointEigOutputs SelfAdjointEigV2(const Scope& s, Input x, bool compute_v,
                                       std::source_location loc) {
  std::vector<Output> out =
      s.Op("SelfAdjointEigV2", loc).Input(x).Attr("compute_v", compute_v).FinalizeAll();
  if (out.size() != 2) return {};
  return {out[0], out[1]};
}

SvdOutputs Svd(const Scope& s, Input x, const SvdAttrs& attrs, std::source_location loc) {
  std::vector<Output> out = s.Op("Svd", loc)
                                .Input(x)
                                .Attr("compute_uv", attrs.compute_uv)
                                .Attr("full_matrices", attrs.full_matrices)
                                .FinalizeAll();
  if (out.size() != 3) return {};
  return {out[0], out[1], out[2]};
}

}  // namespace ops
}  // namespace sluice
