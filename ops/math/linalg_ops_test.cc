// MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve,
// MatrixTriangularSolve and Cholesky: TensorFlow 2.21's values for the same
// inputs, identities over random batches (A inv(A) = I, L L^T = A, A X = B),
// broadcasting, empty and singular matrices, gradients against central
// differences, and each bad input's error.
#include "ops/math/linalg_ops.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/array/broadcast_ops.h"
#include "ops/builtins.h"
#include "ops/math/batch_matmul_ops.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v.push_back(t.dtype() == DT_FLOAT ? t.data<float>()[i] : t.data<double>()[i]);
  }
  return v;
}

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// Needs pivoting (a zero in the corner); det -4.
Tensor Pivoting() { return Tensor::FromVector<double>({0, 2, 1, 3, 1, 0, 1, 1, 1}, TensorShape({3, 3})); }
// Symmetric positive definite; det 70.
Tensor Spd() { return Tensor::FromVector<double>({4, 1, 2, 1, 5, 3, 2, 3, 6}, TensorShape({3, 3})); }
Tensor Rhs() { return Tensor::FromVector<double>({1, 2, 0, 1, 3, -1}, TensorShape({3, 2})); }
Tensor Lower() { return Tensor::FromVector<double>({2, 0, 0, 1, 3, 0, 4, -1, 5}, TensorShape({3, 3})); }

// Random well-conditioned matrices: the identity times n plus noise.
Tensor RandomMatrices(TensorShape shape, uint32_t seed, bool spd) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t n = shape.dim(shape.rank() - 1);
  Tensor t(DT_DOUBLE, shape);
  double* v = t.data<double>();
  for (int64_t b = 0; b < t.NumElements() / (n * n); ++b) {
    double* m = v + b * n * n;
    for (int64_t i = 0; i < n * n; ++i) m[i] = u(rng);
    for (int64_t i = 0; i < n; ++i) m[i * n + i] += n;
    if (spd) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < i; ++j) m[j * n + i] = m[i * n + j];
      }
    }
  }
  return t;
}

TEST(LinalgOpsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output n = ops::Const(s, Pivoting());
  Output a = ops::Const(s, Spd());
  Output b = ops::Const(s, Rhs());
  Output l = ops::Const(s, Lower());
  ops::LogMatrixDeterminantOutputs ld = ops::LogMatrixDeterminant(s, n);
  const std::vector<std::pair<Output, std::vector<double>>> cases = {
      {ops::MatrixInverse(s, n), {-0.25, 0.25, 0.25, 0.75, 0.25, -0.75, -0.5, -0.5, 1.5}},
      {ops::MatrixInverse(s, n, true), {-0.25, 0.75, -0.5, 0.25, 0.25, -0.5, 0.25, -0.75, 1.5}},
      {ops::MatrixDeterminant(s, n), {-4}},
      {ld.sign, {-1}},
      {ld.log_abs_determinant, {1.3862943611198906}},
      {ops::MatrixDeterminant(s, a), {70}},
      {ops::MatrixSolve(s, n, b), {0.5, -0.5, -1.5, 2.5, 4.0, -3.0}},
      {ops::MatrixSolve(s, n, b, true), {-1.75, 0.75, -1.25, 1.25, 4.75, -1.75}},
      {ops::Cholesky(s, a),
       {2, 0, 0, 0.5, 2.179449471770337, 0, 1, 1.1470786693528088, 1.9194297398747862}},
      {ops::MatrixTriangularSolve(s, l, b), {0.5, 1, -1.0 / 6, 0, 1.0 / 6, -1}},
      // The upper triangle of Lᵀ, transposed back: the same system.
      {ops::MatrixTriangularSolve(s, ops::Const(s, Tensor::FromVector<double>(
                                                       {2, 1, 4, 0, 3, -1, 0, 0, 5},
                                                       TensorShape({3, 3}))),
                                  b, {.lower = false, .adjoint = true}),
       {0.5, 1, -1.0 / 6, 0, 1.0 / 6, -1}},
      // The other triangle is not read.
      {ops::MatrixTriangularSolve(
           s, ops::Add(s, l, ops::Const(s, Tensor::FromVector<double>({0, 9, 9, 0, 0, 9, 0, 0, 0},
                                                                       TensorShape({3, 3})))),
           b),
       {0.5, 1, -1.0 / 6, 0, 1.0 / 6, -1}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    absl::StatusOr<Tensor> got = Eval(s, cases[i].first);
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    ExpectNear(Values(*got), cases[i].second, 1e-12, "case " + std::to_string(i));
  }
}

// Identities over a batch of random matrices, in float and double: products
// with the inverse, the solve and the Cholesky factor give back what went in.
TEST(LinalgOpsTest, IdentitiesOverBatches) {
  for (DataType t : {DT_DOUBLE, DT_FLOAT}) {
    SCOPED_TRACE(DataTypeName(t));
    const double tol = t == DT_DOUBLE ? 1e-12 : 2e-5;
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output a = ops::Cast(s, ops::Const(s, RandomMatrices(TensorShape({2, 3, 5, 5}), 1, false)), t);
    Output spd = ops::Cast(s, ops::Const(s, RandomMatrices(TensorShape({4, 6, 6}), 2, true)), t);
    Output b = ops::Cast(s, ops::Const(s, RandomMatrices(TensorShape({2, 3, 5, 5}), 3, false)), t);
    Output eye5 = ops::Cast(s, ops::Const(s, RandomMatrices(TensorShape({5, 5}), 4, false)), t);
    absl::StatusOr<Tensor> ainv =
        Eval(s, ops::BatchMatMulV2(s, a, ops::MatrixInverse(s, a)));
    ASSERT_TRUE(ainv.ok()) << ainv.status();
    std::vector<double> want;
    for (int m = 0; m < 6; ++m) {
      for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 5; ++j) want.push_back(i == j);
      }
    }
    ExpectNear(Values(*ainv), want, tol, "A inv(A)");
    absl::StatusOr<Tensor> ax = Eval(s, ops::BatchMatMulV2(s, a, ops::MatrixSolve(s, a, b)));
    absl::StatusOr<Tensor> bv = Eval(s, b);
    ASSERT_TRUE(ax.ok() && bv.ok()) << ax.status();
    ExpectNear(Values(*ax), Values(*bv), tol * 10, "A solve(A, B)");
    absl::StatusOr<Tensor> atx =
        Eval(s, ops::BatchMatMulV2(s, a, ops::MatrixSolve(s, a, b, true), {.adj_x = true}));
    ASSERT_TRUE(atx.ok()) << atx.status();
    ExpectNear(Values(*atx), Values(*bv), tol * 10, "A^T solve(A, B, adjoint)");
    Output chol = ops::Cholesky(s, spd);
    absl::StatusOr<Tensor> llt = Eval(s, ops::BatchMatMulV2(s, chol, chol, {.adj_y = true}));
    absl::StatusOr<Tensor> spdv = Eval(s, spd);
    ASSERT_TRUE(llt.ok() && spdv.ok()) << llt.status();
    ExpectNear(Values(*llt), Values(*spdv), tol * 10, "L L^T");
    // log|det| of the SPD batch is twice the sum of log diag(L).
    ops::LogMatrixDeterminantOutputs ld = ops::LogMatrixDeterminant(s, spd);
    absl::StatusOr<Tensor> logdet = Eval(s, ld.log_abs_determinant);
    absl::StatusOr<Tensor> lv = Eval(s, chol);
    ASSERT_TRUE(logdet.ok() && lv.ok()) << logdet.status();
    const std::vector<double> lvals = Values(*lv);
    for (int m = 0; m < 4; ++m) {
      double sum = 0;
      for (int i = 0; i < 6; ++i) sum += 2 * std::log(lvals[m * 36 + i * 6 + i]);
      EXPECT_NEAR(Values(*logdet)[m], sum, tol * 10) << m;
    }
    // A triangular solve broadcasts one [5, 5] matrix over the batch of rhs.
    Output low = ops::MatrixBandPart(s, eye5, int64_t{-1}, int64_t{0});
    absl::StatusOr<Tensor> lx = Eval(s, ops::BatchMatMulV2(s, low, ops::MatrixTriangularSolve(s, eye5, b)));
    ASSERT_TRUE(lx.ok()) << lx.status();
    ExpectNear(Values(*lx), Values(*bv), tol * 10, "L triangular_solve(L, B)");
  }
}

// An empty matrix: inverse and factor empty, determinant 1, log 0; a
// singular one: inverse and solve refuse, the determinant is 0 with sign 0
// and log -inf; Cholesky of a matrix that is not positive definite is NaN
// in its lower triangle.
TEST(LinalgOpsTest, EmptySingularAndIndefiniteMatrices) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output empty = ops::Const(s, Tensor(DT_DOUBLE, TensorShape({2, 0, 0})));
  absl::StatusOr<Tensor> det = Eval(s, ops::MatrixDeterminant(s, empty));
  ASSERT_TRUE(det.ok()) << det.status();
  EXPECT_EQ(Values(*det), (std::vector<double>{1, 1}));
  absl::StatusOr<Tensor> inv = Eval(s, ops::MatrixInverse(s, empty));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ(inv->shape(), TensorShape({2, 0, 0}));
  Output singular =
      ops::Const(s, Tensor::FromVector<double>({1, 2, 2, 4}, TensorShape({2, 2})));
  ops::LogMatrixDeterminantOutputs ld = ops::LogMatrixDeterminant(s, singular);
  absl::StatusOr<Tensor> sign = Eval(s, ld.sign), logabs = Eval(s, ld.log_abs_determinant);
  det = Eval(s, ops::MatrixDeterminant(s, singular));
  ASSERT_TRUE(sign.ok() && logabs.ok() && det.ok());
  EXPECT_EQ(Values(*sign)[0], 0);
  EXPECT_EQ(Values(*logabs)[0], -INFINITY);
  EXPECT_EQ(Values(*det)[0], 0);
  absl::Status st = Eval(s, ops::MatrixInverse(s, singular)).status();
  EXPECT_TRUE(absl::StrContains(st.message(), "Input is not invertible.")) << st;
  st = Eval(s, ops::MatrixSolve(s, singular, ops::Const(s, Tensor::FromVector<double>(
                                                               {1, 1}, TensorShape({2, 1})))))
           .status();
  EXPECT_TRUE(absl::StrContains(st.message(), "Input matrix is not invertible.")) << st;
  absl::StatusOr<Tensor> chol = Eval(
      s, ops::Cholesky(s, ops::Const(s, Tensor::FromVector<double>({4, 0, 0, 1, -1, 0, 0, 0, 1},
                                                                  TensorShape({1, 3, 3})))));
  ASSERT_TRUE(chol.ok()) << chol.status();
  const std::vector<double> c = Values(*chol);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (j > i) {
        EXPECT_EQ(c[i * 3 + j], 0) << i << "," << j;
      } else {
        EXPECT_TRUE(std::isnan(c[i * 3 + j])) << i << "," << j;
      }
    }
  }
}

TEST(LinalgOpsTest, GradientsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_DOUBLE);
  Output y = ops::Placeholder(s, DT_DOUBLE);
  const Tensor a = RandomMatrices(TensorShape({2, 3, 3}), 5, false);
  const Tensor spd = RandomMatrices(TensorShape({2, 3, 3}), 6, true);
  const Tensor rhs = RandomMatrices(TensorShape({2, 3, 3}), 7, false);
  const Tensor one_lower = RandomMatrices(TensorShape({3, 3}), 8, false);
  struct Case {
    std::string name;
    Output out;
    std::vector<Output> xs;
    std::vector<Tensor> at;
  };
  // Cholesky reads the lower triangle only: its gradient is checked through
  // a symmetric input built from x (x + x^T), as TensorFlow's test does.
  Output sym = ops::Add(s, x, ops::BatchMatMulV2(s, ops::MatrixInverse(s, ops::MatrixInverse(s, x)),
                                                 ops::Const(s, Tensor::FromVector<double>(
                                                                   {1, 0, 0, 0, 1, 0, 0, 0, 1},
                                                                   TensorShape({3, 3}))),
                                                 {.adj_x = true}));
  const std::vector<Case> cases = {
      {"inverse", ops::MatrixInverse(s, x), {x}, {a}},
      {"inverse adjoint", ops::MatrixInverse(s, x, true), {x}, {a}},
      {"determinant", ops::MatrixDeterminant(s, x), {x}, {a}},
      {"log determinant", ops::LogMatrixDeterminant(s, x).log_abs_determinant, {x}, {a}},
      {"solve", ops::MatrixSolve(s, x, y), {x, y}, {a, rhs}},
      {"solve adjoint", ops::MatrixSolve(s, x, y, true), {x, y}, {a, rhs}},
      {"triangular solve", ops::MatrixTriangularSolve(s, x, y), {x, y}, {a, rhs}},
      {"triangular solve upper adjoint",
       ops::MatrixTriangularSolve(s, x, y, {.lower = false, .adjoint = true}), {x, y}, {a, rhs}},
      {"triangular solve broadcast", ops::MatrixTriangularSolve(s, x, y), {x, y}, {one_lower, rhs}},
      {"cholesky", ops::Cholesky(s, sym), {x}, {spd}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<double> err = MaxGradientError(s, c.xs, c.at, ops::Square(s, c.out));
    ASSERT_TRUE(err.ok()) << c.name << ": " << err.status();
    EXPECT_LT(*err, 1e-6) << c.name;
  }
}

TEST(LinalgOpsTest, BadInputsAreClearErrors) {
  auto error = [](const std::function<Output(const Scope&)>& build) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output out = build(s);
    if (!s.ok()) return s.status();
    return Eval(s, out).status();
  };
  const Tensor vec = Tensor::FromVector<double>({1, 2, 3});
  const Tensor wide = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  absl::Status st = error([&](const Scope& s) { return ops::MatrixInverse(s, ops::Const(s, vec)); });
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(st.message(), "rank")) << st;
  for (const char* op : {"MatrixInverse", "Cholesky", "MatrixDeterminant"}) {
    st = error([&](const Scope& s) { return s.Op(op).Input(ops::Const(s, wide)).Finalize1(); });
    EXPECT_TRUE(absl::StrContains(st.message(), "square")) << op << ": " << st;
  }
  // Unknown shapes at build time: the kernels' own checks.
  st = error([&](const Scope& s) {
    return ops::Cholesky(s, ops::PlaceholderWithDefault(s, ops::Const(s, wide), TensorShape::Unknown()));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "Input matrix must be square")) << st;
  st = error([&](const Scope& s) {
    return ops::MatrixSolve(s, ops::Const(s, Spd()), ops::Const(s, wide));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "row counts")) << st;
  st = error([&](const Scope& s) {
    return ops::MatrixSolve(
        s, ops::PlaceholderWithDefault(s, ops::Const(s, Spd()), TensorShape::Unknown()),
        ops::PlaceholderWithDefault(s, ops::Const(s, wide), TensorShape::Unknown()));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "Input matrix and rhs are incompatible")) << st;
  st = error([&](const Scope& s) {
    return ops::MatrixSolve(s, ops::Const(s, RandomMatrices(TensorShape({2, 3, 3}), 1, false)),
                            ops::Const(s, RandomMatrices(TensorShape({3, 3, 3}), 1, false)));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "differ")) << st;
  st = error([&](const Scope& s) {
    return ops::MatrixTriangularSolve(
        s, ops::Const(s, RandomMatrices(TensorShape({3, 2, 2}), 1, false)),
        ops::Const(s, RandomMatrices(TensorShape({4, 2, 2}), 1, false)));
  });
  EXPECT_TRUE(absl::StrContains(st.message(), "do not broadcast")) << st;
}

}  // namespace
}  // namespace sluice
