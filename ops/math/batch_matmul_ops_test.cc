// BatchMatMul and BatchMatMulV2 against a product written out by hand, with
// every adjoint combination, broadcast batch dimensions (V2), empty and bad
// shapes, and gradients by central differences (also through broadcasting).
#include "ops/math/batch_matmul_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

std::vector<double> Wave(int n, double a) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = std::sin(a * i + 0.3);
  return v;
}

// z[b] = op(x[b]) * op(y[b]) for a batch of `batches` matrices each (no
// broadcasting), m x k times k x n.
std::vector<double> ByHand(const std::vector<double>& x, const std::vector<double>& y, int batches,
                           int m, int k, int n, bool adj_x, bool adj_y) {
  std::vector<double> z(batches * m * n, 0);
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int p = 0; p < k; ++p) {
          const double a = adj_x ? x[b * m * k + p * m + i] : x[b * m * k + i * k + p];
          const double c = adj_y ? y[b * k * n + j * k + p] : y[b * k * n + p * n + j];
          sum += a * c;
        }
        z[(b * m + i) * n + j] = sum;
      }
    }
  }
  return z;
}

TEST(BatchMatMulTest, EveryAdjointAgainstTheProductByHand) {
  const int b = 3, m = 2, k = 4, n = 5;
  const std::vector<double> xv = Wave(b * m * k, 0.7), yv = Wave(b * k * n, 1.3);
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output x = Placeholder(s, DT_DOUBLE);
      Output y = Placeholder(s, DT_DOUBLE);
      const TensorShape xs = adj_x ? TensorShape({b, k, m}) : TensorShape({b, m, k});
      const TensorShape ys = adj_y ? TensorShape({b, n, k}) : TensorShape({b, k, n});
      for (bool v2 : {false, true}) {
        Output z = v2 ? ops::BatchMatMulV2(s, x, y, {.adj_x = adj_x, .adj_y = adj_y})
                      : ops::BatchMatMul(s, x, y, {.adj_x = adj_x, .adj_y = adj_y});
        ExpectTensor<double>(Eval(s, {{x, Make<double>(xv, xs)}, {y, Make<double>(yv, ys)}}, z),
                             {b, m, n}, ByHand(xv, yv, b, m, k, n, adj_x, adj_y), 1e-12);
      }
    }
  }
}

TEST(BatchMatMulTest, V2BroadcastsBatchDimensions) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT, TensorShape({2, 1, 2, 3}));
  Output y = Placeholder(s, DT_FLOAT, TensorShape({4, 3, 2}));
  Output z = ops::BatchMatMulV2(s, x, y);
  EXPECT_EQ(z.node->output_shape(0), TensorShape({2, 4, 2, 2}));
  const std::vector<double> xv = Wave(12, 0.4), yv = Wave(24, 0.9);
  Tensor got = Eval(s, {{x, Make<float>(std::vector<float>(xv.begin(), xv.end()), {2, 1, 2, 3})},
                        {y, Make<float>(std::vector<float>(yv.begin(), yv.end()), {4, 3, 2})}},
                    z);
  ASSERT_EQ(got.shape(), TensorShape({2, 4, 2, 2}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      const std::vector<double> xi(xv.begin() + i * 6, xv.begin() + i * 6 + 6);
      const std::vector<double> yj(yv.begin() + j * 6, yv.begin() + j * 6 + 6);
      const std::vector<double> want = ByHand(xi, yj, 1, 2, 3, 2, false, false);
      for (int e = 0; e < 4; ++e) {
        EXPECT_NEAR(got.flat<float>()[(i * 4 + j) * 4 + e], want[e], 1e-5) << i << j << e;
      }
    }
  }
  // A matrix times a batch: rank 2 broadcasts too.
  Output w = Placeholder(s, DT_FLOAT);
  ExpectTensor<float>(Eval(s, {{w, Make<float>({1, 0, 0, 1, 1, 1}, {2, 3})},
                               {y, Make<float>(std::vector<float>(24, 1.0f), {4, 3, 2})}},
                           ops::BatchMatMulV2(s, w, y)),
                      {4, 2, 2}, std::vector<float>({1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 3, 3}));
}

TEST(BatchMatMulTest, EmptyAndBadShapes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  Output y = Placeholder(s, DT_FLOAT);
  ExpectTensor<float>(Eval(s, {{x, Make<float>({}, {2, 3, 0})}, {y, Make<float>({}, {2, 0, 4})}},
                           ops::BatchMatMul(s, x, y)),
                      {2, 3, 4}, std::vector<float>(24, 0.0f));
  ExpectTensor<float>(Eval(s, {{x, Make<float>({}, {0, 3, 2})}, {y, Make<float>({}, {0, 2, 4})}},
                           ops::BatchMatMul(s, x, y)),
                      {0, 3, 4}, {});
  absl::Status st = TryEval(s, {{x, Make<float>({1, 2, 3, 4}, {1, 2, 2})},
                                {y, Make<float>(std::vector<float>(6, 1.0f), {1, 3, 2})}},
                            ops::BatchMatMul(s, x, y))
                        .status();
  EXPECT_NE(st.message().find("inner dimensions"), std::string::npos) << st;
  st = TryEval(s, {{x, Make<float>(std::vector<float>(8, 1.0f), {2, 2, 2})},
                   {y, Make<float>(std::vector<float>(12, 1.0f), {3, 2, 2})}},
               ops::BatchMatMulV2(s, x, y))
           .status();
  EXPECT_NE(st.message().find("do not broadcast"), std::string::npos) << st;
  st = TryEval(s, {{x, Make<float>(std::vector<float>(8, 1.0f), {2, 2, 2})},
                   {y, Make<float>(std::vector<float>(4, 1.0f), {1, 2, 2})}},
               ops::BatchMatMul(s, x, y))
           .status();
  EXPECT_NE(st.message().find("must be equal"), std::string::npos) << st;
}

TEST(BatchMatMulTest, Gradients) {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output x = Placeholder(s, DT_DOUBLE);
      Output y = Placeholder(s, DT_DOUBLE);
      const TensorShape xs = adj_x ? TensorShape({2, 3, 2}) : TensorShape({2, 2, 3});
      const TensorShape ys = adj_y ? TensorShape({2, 4, 3}) : TensorShape({2, 3, 4});
      testing_util::Feeds f = {{x, Make<double>(Wave(12, 0.5), xs)}, {y, Make<double>(Wave(24, 1.1), ys)}};
      EXPECT_LT(GradError(s, f, ops::BatchMatMul(s, x, y, {.adj_x = adj_x, .adj_y = adj_y})), 1e-6)
          << adj_x << adj_y;
      EXPECT_LT(GradError(s, f, ops::BatchMatMulV2(s, x, y, {.adj_x = adj_x, .adj_y = adj_y})), 1e-6)
          << adj_x << adj_y;
    }
  }
  // Through broadcasting: x [3, 1, 2, 3] (static), y [4, 3, 2] (unknown shape).
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({3, 1, 2, 3}));
  Output y = Placeholder(s, DT_DOUBLE);
  EXPECT_LT(GradError(s, {{x, Make<double>(Wave(18, 0.5), {3, 1, 2, 3})}, {y, Make<double>(Wave(24, 0.8), {4, 3, 2})}},
                      ops::BatchMatMulV2(s, x, y)),
            1e-6);
}

}  // namespace
}  // namespace sluice
