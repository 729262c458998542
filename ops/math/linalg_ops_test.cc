// MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve,
// MatrixTriangularSolve and Cholesky: TensorFlow 2.21's values for the same
// inputs, identities over random batches (A inv(A) = I, L L^T = A, A X = B),
// broadcasting, empty and singular matrices, gradients against central
// differences, and each bad input's error.
#include "ops/math/linalg_ops.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/array/broadcast_ops.h"
#include "ops/array/matrix_diag_ops.h"
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

// The first `cols` columns of the innermost matrices.
Output Columns(const Scope& s, const Output& x, int64_t cols) {
  return ops::Slice(s, x, ops::Const(s, std::vector<int64_t>{0, 0, 0}),
                    ops::Const(s, std::vector<int64_t>{-1, -1, cols}));
}

Output Diag(const Scope& s, const Output& d) { return ops::MatrixDiagV3(s, d, 0, 0.0); }

// The sum of each [rows, cols] matrix of x weighted elementwise by 1, 2,
// 3, ... (a loss whose gradient reaches every element).
Output Weighted(const Scope& s, const Output& x, int64_t rows, int64_t cols) {
  std::vector<double> w(rows * cols);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0 + static_cast<double>(i) / 3;
  return ops::Sum(s, ops::Mul(s, x, ops::Const(s, w, TensorShape({rows, cols}))),
                  ops::Const(s, std::vector<int32_t>{-2, -1}));
}

Output MatrixTransposeForTest(const Scope& s, const Output& x) {
  return ops::Transpose(s, x, ops::Const(s, std::vector<int32_t>{0, 2, 1}));
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

// A 4 x 3 matrix: Householder QR as TensorFlow's (R's diagonal may be
// negative); eigenvalues and singular values as TensorFlow's; vectors equal
// up to a sign per vector.
TEST(LinalgOpsTest, FactorizationsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Const(s, Tensor::FromVector<double>({1, 2, 3, 4, 5, 6, 7, 8, 10, 1, 0, 1},
                                                      TensorShape({4, 3})));
  ops::QrOutputs qr = ops::Qr(s, a);
  ops::SelfAdjointEigOutputs eig = ops::SelfAdjointEigV2(s, ops::Const(s, Spd()));
  ops::SvdOutputs svd = ops::Svd(s, a);
  const std::vector<std::pair<Output, std::vector<double>>> exact = {
      {qr.q,
       {-0.12216944435630528, 0.5642764926868793, 0.8122914203647437, -0.48867777742522095,
        0.23175641663925375, -0.15017152309264203, -0.8551861104941366, -0.10076365940837129,
        -0.10921565315828474, -0.12216944435630524, -0.7859565433852947, 0.552904244113818}},
      {qr.r,
       {-8.18535277187245, -9.529216659791809, -11.972605546917912, 0, 1.481225793303057,
        1.2897748404271518, 0, 0, 0.9965928350693491}},
      {eig.e, {2.1943971674224088, 3.3867701566075468, 9.41883267597004}},
      {svd.s, {17.45089558463664, 0.9869391657365879, 0.7015656613921307}},
  };
  for (size_t i = 0; i < exact.size(); ++i) {
    absl::StatusOr<Tensor> got = Eval(s, exact[i].first);
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    ExpectNear(Values(*got), exact[i].second, 1e-12, "factor " + std::to_string(i));
  }
  auto abs = [](std::vector<double> v) {
    for (double& x : v) x = std::fabs(x);
    return v;
  };
  const std::vector<std::pair<Output, std::vector<double>>> up_to_sign = {
      {eig.v,
       {0.4412246968734647, -0.8155834192895002, 0.3743587224160359, 0.5773502691896256,
        0.5773502691896263, 0.5773502691896257, -0.6870134158337711, -0.038605088352623225,
        0.7256185041863942}},
      {svd.u,
       {0.2088293975651838, -0.723187842845512, -0.6531005371338507, 0.5027074321838487,
        -0.13767965376374183, 0.20832197127836088, 0.8362242314927112, 0.21236852664821085,
        0.09514883650333782, 0.06636682156098839, 0.6426066182270609, -0.7218090769658098}},
      {svd.v,
       {0.46642852963239645, 0.8665983442107424, 0.1773463745221782, 0.5513178255711642,
        -0.4415933184683912, 0.7078446130977886, 0.6917319437126235, -0.2323847045209174,
        -0.6837428370025398}},
  };
  for (size_t i = 0; i < up_to_sign.size(); ++i) {
    absl::StatusOr<Tensor> got = Eval(s, up_to_sign[i].first);
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    ExpectNear(abs(Values(*got)), abs(up_to_sign[i].second), 1e-12, "vectors " + std::to_string(i));
  }
}

// Over batches of tall, square and wide matrices, reduced and full: Q^T Q =
// I and Q R = A; V diag(e) V^T = A; U diag(s) V^T = A; the shapes; empty
// matrices (full factors of an empty side are identities).
TEST(LinalgOpsTest, FactorizationIdentities) {
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {4, 4}, {2, 5}}) {
    for (bool full : {false, true}) {
      SCOPED_TRACE(absl::StrCat(m, "x", n, full ? " full" : ""));
      Scope s = Scope::NewRootScope(BuiltinOps());
      Tensor at(DT_DOUBLE, TensorShape({3, m, n}));
      std::mt19937 rng(static_cast<uint32_t>(m * 10 + n));
      std::uniform_real_distribution<double> u(-1, 1);
      for (int64_t i = 0; i < at.NumElements(); ++i) at.data<double>()[i] = u(rng);
      Output a = ops::Const(s, at);
      const int64_t k = std::min(m, n);
      ops::QrOutputs qr = ops::Qr(s, a, full);
      EXPECT_EQ(qr.q.shape(), TensorShape({3, m, full ? m : k}));
      EXPECT_EQ(qr.r.shape(), TensorShape({3, full ? m : k, n}));
      absl::StatusOr<Tensor> qtq = Eval(s, ops::BatchMatMulV2(s, qr.q, qr.q, {.adj_x = true}));
      absl::StatusOr<Tensor> prod = Eval(s, ops::BatchMatMulV2(s, qr.q, qr.r));
      ASSERT_TRUE(qtq.ok() && prod.ok()) << qtq.status() << prod.status();
      const int64_t qc = full ? m : k;
      std::vector<double> eye;
      for (int b = 0; b < 3; ++b) {
        for (int64_t i = 0; i < qc; ++i) {
          for (int64_t j = 0; j < qc; ++j) eye.push_back(i == j);
        }
      }
      ExpectNear(Values(*qtq), eye, 1e-12, "Q^T Q");
      ExpectNear(Values(*prod), Values(at), 1e-12, "Q R");
      ops::SvdOutputs svd = ops::Svd(s, a, {.full_matrices = full});
      const Output us = ops::BatchMatMulV2(s, Columns(s, svd.u, k), Diag(s, svd.s));
      absl::StatusOr<Tensor> usv =
          Eval(s, ops::BatchMatMulV2(s, us, Columns(s, svd.v, k), {.adj_y = true}));
      ASSERT_TRUE(usv.ok()) << usv.status();
      ExpectNear(Values(*usv), Values(at), 1e-12, "U S V^T");
    }
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  const Tensor spd = RandomMatrices(TensorShape({2, 5, 5}), 9, true);
  ops::SelfAdjointEigOutputs eig = ops::SelfAdjointEigV2(s, ops::Const(s, spd));
  absl::StatusOr<Tensor> vev = Eval(
      s, ops::BatchMatMulV2(s, ops::BatchMatMulV2(s, eig.v, Diag(s, eig.e)), eig.v, {.adj_y = true}));
  ASSERT_TRUE(vev.ok()) << vev.status();
  ExpectNear(Values(*vev), Values(spd), 1e-12, "V diag(e) V^T");
  // Empty sides: a full Q and full singular vectors of an empty side are
  // identities; no values.
  ops::QrOutputs qr = ops::Qr(s, ops::Const(s, Tensor(DT_DOUBLE, TensorShape({2, 3, 0}))), true);
  absl::StatusOr<Tensor> q = Eval(s, qr.q);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->shape(), TensorShape({2, 3, 3}));
  EXPECT_EQ(Values(*q), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  ops::SvdOutputs svd =
      ops::Svd(s, ops::Const(s, Tensor(DT_DOUBLE, TensorShape({0, 2}))), {.full_matrices = true});
  absl::StatusOr<Tensor> v = Eval(s, svd.v), sv = Eval(s, svd.s);
  ASSERT_TRUE(v.ok() && sv.ok()) << v.status();
  EXPECT_EQ(Values(*v), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(sv->NumElements(), 0);
  // Without vectors: the values, and vectors of shape [0].
  ops::SvdOutputs values_only = ops::Svd(s, ops::Const(s, spd), {.compute_uv = false});
  EXPECT_EQ(values_only.u.shape(), TensorShape({0}));
  absl::StatusOr<Tensor> ev = Eval(s, ops::SelfAdjointEigV2(s, ops::Const(s, spd), false).e);
  absl::StatusOr<Tensor> svals = Eval(s, values_only.s);
  ASSERT_TRUE(ev.ok() && svals.ok()) << ev.status() << svals.status();
  // An SPD matrix's singular values are its eigenvalues, reversed.
  std::vector<double> e = Values(*ev);
  for (int b = 0; b < 2; ++b) std::reverse(e.begin() + b * 5, e.begin() + b * 5 + 5);
  ExpectNear(Values(*svals), e, 1e-12, "svd vs eigh");
  absl::Status st = Eval(s, ops::SelfAdjointEigV2(s, ops::Const(s, Tensor::FromVector<double>(
                                                                     {NAN, 0, 0, 1},
                                                                     TensorShape({2, 2}))))
                                .e)
                        .status();
  EXPECT_TRUE(absl::StrContains(st.message(), "eigen decomposition was not successful")) << st;
}

// Gradients of the factorizations through losses that do not depend on the
// vectors' signs (squares of their elements).
TEST(LinalgOpsTest, FactorizationGradientsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{4, 3}, {3, 3}, {2, 4}}) {
    Output x = ops::Placeholder(s, DT_DOUBLE, {.shape = TensorShape({2, m, n})});
    Tensor at(DT_DOUBLE, TensorShape({2, m, n}));
    std::mt19937 rng(static_cast<uint32_t>(m + 7 * n));
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < at.NumElements(); ++i) at.data<double>()[i] = u(rng);
    ops::QrOutputs qr = ops::Qr(s, x);
    ops::SvdOutputs svd = ops::Svd(s, x);
    const int64_t k = std::min(m, n);
    const std::vector<std::pair<std::string, Output>> losses = {
        {"qr", ops::Add(s, Weighted(s, ops::Square(s, qr.q), m, k), Weighted(s, qr.r, k, n))},
        {"svd values", ops::Svd(s, x, {.compute_uv = false}).s},
        {"svd", ops::Add(s, ops::Add(s, Weighted(s, ops::Square(s, svd.u), m, k),
                                     ops::Sum(s, svd.s, ops::Const(s, std::vector<int32_t>{-1}))),
                         Weighted(s, ops::Square(s, svd.v), n, k))},
    };
    for (const auto& [name, y] : losses) {
      absl::StatusOr<double> err = MaxGradientError(s, {x}, {at}, y);
      ASSERT_TRUE(err.ok()) << name << " " << m << "x" << n << ": " << err.status();
      EXPECT_LT(*err, 1e-6) << name << " " << m << "x" << n;
    }
  }
  // eigh: a symmetric input from x (only its lower triangle is read).
  Output x = ops::Placeholder(s, DT_DOUBLE, {.shape = TensorShape({2, 4, 4})});
  Output sym = ops::Add(s, x, MatrixTransposeForTest(s, x));
  ops::SelfAdjointEigOutputs eig = ops::SelfAdjointEigV2(s, sym);
  Output y = ops::Add(s, ops::Sum(s, ops::Mul(s, eig.e, 2.0), ops::Const(s, std::vector<int32_t>{-1})),
                     Weighted(s, ops::Square(s, eig.v), 4, 4));
  absl::StatusOr<double> err =
      MaxGradientError(s, {x}, {RandomMatrices(TensorShape({2, 4, 4}), 11, false)}, y);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6) << "eigh";
  err = MaxGradientError(s, {x}, {RandomMatrices(TensorShape({2, 4, 4}), 12, false)},
                         ops::SelfAdjointEigV2(s, sym, false).e);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6) << "eigvalsh";
}

// An incoming gradient of unknown rank (from a function, a placeholder) is
// sliced with the op's own rank: the wide Qr's and the Svd's gradients build
// and equal those of a known-rank gradient.
TEST(LinalgOpsTest, FactorGradientsTakeIncomingGradientsOfUnknownRank) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor at(DT_DOUBLE, TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) at.data<double>()[i] = std::cos(i * 1.3);
  Output x = ops::Const(s, at);
  ops::QrOutputs qr = ops::Qr(s, x);
  ops::SvdOutputs svd = ops::Svd(s, x);
  for (const Output& y : {qr.r, svd.v}) {
    Output ones = ops::OnesLike(s, y);
    Output unknown = ops::PlaceholderWithDefault(s, ones, TensorShape::Unknown());
    absl::StatusOr<std::vector<Output>> known = AddGradients(s, {y}, {x}, {ones});
    absl::StatusOr<std::vector<Output>> blind = AddGradients(s, {y}, {x}, {unknown});
    ASSERT_TRUE(known.ok()) << known.status();
    ASSERT_TRUE(blind.ok()) << blind.status();
    absl::StatusOr<Tensor> a = Eval(s, (*known)[0]), b = Eval(s, (*blind)[0]);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    ExpectNear(Values(*b), Values(*a), 1e-12, y.node->op());
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
