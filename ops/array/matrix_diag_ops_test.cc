// MatrixDiagV2/V3, MatrixDiagPartV2/V3 and MatrixSetDiag (V1-V3): the values
// TensorFlow 2.21's kernels give for the same inputs (each alignment, one
// diagonal and bands, batches, num_rows/num_cols chosen or given),
// gradients against central differences, and each bad input's error.
#include "ops/array/matrix_diag_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

Output K(const Scope& s, std::vector<int32_t> k) { return ops::Const(s, k); }

// [[1..4], [5..8], [9..12]]
Output ThreeByFour(const Scope& s) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i + 1);
  return ops::Const(s, v, TensorShape({3, 4}));
}

TEST(MatrixDiagOpsTest, DiagPartReadsABandInEachAlignment) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ThreeByFour(s);
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"RIGHT_LEFT", {9, 3, 8, 2, 7, 12, 1, 6, 11, 5, 10, 9}},
      {"LEFT_RIGHT", {3, 8, 9, 2, 7, 12, 1, 6, 11, 9, 5, 10}},
      {"LEFT_LEFT", {3, 8, 9, 2, 7, 12, 1, 6, 11, 5, 10, 9}},
      {"RIGHT_RIGHT", {9, 3, 8, 2, 7, 12, 1, 6, 11, 9, 5, 10}},
  };
  for (const auto& [align, want] : cases) {
    Output band = ops::MatrixDiagPartV3(s, x, K(s, {-1, 2}), 9.0f, align);
    EXPECT_EQ(band.shape(), TensorShape({4, 3})) << align;
    absl::StatusOr<Tensor> got = Eval(s, band);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Values<float>(*got), want) << align;
  }
  // One diagonal: no band dimension.
  absl::StatusOr<Tensor> one = Eval(s, ops::MatrixDiagPartV3(s, x, K(s, {1}), 9.0f));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape(), TensorShape({3}));
  EXPECT_EQ(Values<float>(*one), (std::vector<float>{2, 7, 12}));
  // A batch of 2x2 matrices [[0,1],[2,3]], [[4,5],[6,7]].
  std::vector<float> b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<float>(i);
  absl::StatusOr<Tensor> batch = Eval(
      s, ops::MatrixDiagPartV3(s, ops::Const(s, b, TensorShape({2, 2, 2})), K(s, {-1, 1}), 0.0f));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->shape(), TensorShape({2, 3, 2}));
  EXPECT_EQ(Values<float>(*batch), (std::vector<float>{0, 1, 0, 3, 2, 0, 0, 5, 4, 7, 6, 0}));
}

TEST(MatrixDiagOpsTest, DiagBuildsMatricesChoosingOrTakingTheirSize) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output band = ops::Const(s, std::vector<float>{1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  Output m = ops::MatrixDiagV3(s, band, K(s, {-1, 0}), 0.0f);
  EXPECT_EQ(m.shape(), TensorShape({3, 3}));
  absl::StatusOr<Tensor> got = Eval(s, m);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values<float>(*got), (std::vector<float>{1, 0, 0, 4, 2, 0, 0, 5, 3}));
  // A superdiagonal band: its second diagonal (k = 0) is the longer one.
  got = Eval(s, ops::MatrixDiagV3(s, band, K(s, {0, 1}), 0.0f));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values<float>(*got), (std::vector<float>{4, 2, 0, 0, 5, 3, 0, 0, 6}));
  Output d = ops::Const(s, std::vector<float>{1, 2});
  const std::vector<std::tuple<int32_t, ops::MatrixDiagAttrs, TensorShape, std::vector<float>>>
      sized = {
          {1, {}, TensorShape({3, 3}), {7, 1, 7, 7, 7, 2, 7, 7, 7}},
          {1, {.num_rows = 2}, TensorShape({2, 3}), {7, 1, 7, 7, 7, 2}},
          {1, {.num_rows = 4}, TensorShape({4, 3}), {7, 1, 7, 7, 7, 2, 7, 7, 7, 7, 7, 7}},
          {-1, {.num_cols = 4}, TensorShape({3, 4}), {7, 7, 7, 7, 1, 7, 7, 7, 7, 2, 7, 7}},
      };
  for (const auto& [k, attrs, shape, want] : sized) {
    Output y = ops::MatrixDiagV3(s, d, K(s, {k}), 7.0f, attrs);
    EXPECT_EQ(y.shape(), shape);
    absl::StatusOr<Tensor> v = Eval(s, y);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->shape(), shape);
    EXPECT_EQ(Values<float>(*v), want);
  }
}

TEST(MatrixDiagOpsTest, SetDiagReplacesTheBand) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ThreeByFour(s);
  Output band = ops::Const(s, std::vector<float>{10, 11, 12, 20, 21, 22, 30, 31, 32},
                           TensorShape({3, 3}));
  for (const char* align : {"RIGHT_LEFT", "LEFT_LEFT"}) {
    absl::StatusOr<Tensor> got = Eval(s, ops::MatrixSetDiagV3(s, x, band, K(s, {-1, 1}), align));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Values<float>(*got),
              (std::vector<float>{20, 10, 3, 4, 30, 21, 11, 8, 9, 31, 22, 12}))
        << align;
  }
  // V1: the main diagonal.
  Output main = ops::Const(s, std::vector<float>{10, 11, 12});
  absl::StatusOr<Tensor> v1 =
      Eval(s, s.Op("MatrixSetDiag").Input(x).Input(main).Finalize1());
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_EQ(Values<float>(*v1), (std::vector<float>{10, 2, 3, 4, 5, 11, 7, 8, 9, 10, 12, 12}));
}

TEST(MatrixDiagOpsTest, GradientsMatchCentralDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_DOUBLE);
  const Tensor at = Tensor::FromVector<double>({0.5, -1, 2, 0.25, 1.5, -0.5, 3, 1, -2, 0.75, 1.25, 2.5},
                                               TensorShape({3, 4}));
  for (const char* align : {"RIGHT_LEFT", "LEFT_RIGHT"}) {
    Output part = ops::MatrixDiagPartV3(s, x, K(s, {-1, 2}), 0.0, align);
    absl::StatusOr<double> err = MaxGradientError(s, {x}, {at}, ops::Square(s, part));
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-6) << align;
  }
  Output d = ops::Placeholder(s, DT_DOUBLE);
  const Tensor band = Tensor::FromVector<double>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  absl::StatusOr<double> err = MaxGradientError(
      s, {d}, {band}, ops::Square(s, ops::MatrixDiagV3(s, d, K(s, {-1, 0}), 0.0)));
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
  Output y = ops::Placeholder(s, DT_DOUBLE);
  Output diag = ops::Placeholder(s, DT_DOUBLE);
  err = MaxGradientError(
      s, {y, diag},
      {at, Tensor::FromVector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({3, 3}))},
      ops::Square(s, ops::MatrixSetDiagV3(s, y, diag, K(s, {-1, 1}))));
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(MatrixDiagOpsTest, BadInputsAreClearErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ThreeByFour(s);
  Output k = ops::Placeholder(s, DT_INT32);
  Output part = ops::MatrixDiagPartV3(s, x, k, 9.0f);
  for (const auto& [value, message] : std::vector<std::pair<Tensor, std::string>>{
           {Tensor::FromVector<int32_t>({2, -1}), "must not be larger than upper_diag_index: 2 > -1"},
           {Tensor::FromVector<int32_t>({4, 4}), "is out of bound: 4. It must be between -3 and 4"},
           {Tensor::FromVector<int32_t>({-3, 0}), "is out of bound: -3"},
           {Tensor::FromVector<int32_t>({0, 1, 2}), "only one or two elements, received 3"}}) {
    absl::StatusOr<Tensor> r = EvalWithFeeds(s, {k}, {value}, part);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  }
  Output v = ops::Placeholder(s, DT_FLOAT);
  absl::StatusOr<Tensor> vec = EvalWithFeeds(s, {v}, {Tensor::FromVector<float>({1, 2})},
                                             ops::MatrixDiagPartV3(s, v, K(s, {0}), 9.0f));
  ASSERT_FALSE(vec.ok());
  EXPECT_TRUE(absl::StrContains(vec.status().message(), "at least 2-dim")) << vec.status();

  Output d = ops::Const(s, std::vector<float>{1, 2, 3});
  for (const auto& [attrs, message] : std::vector<std::pair<ops::MatrixDiagAttrs, std::string>>{
           {{.num_rows = 4, .num_cols = 4}, "not consistent"},
           {{.num_rows = 2, .num_cols = 2}, "number of rows is too small"}}) {
    absl::StatusOr<Tensor> r = Eval(s, ops::MatrixDiagV3(s, d, K(s, {0}), 0.0f, attrs));
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  }
  Output band = ops::Placeholder(s, DT_FLOAT);
  absl::StatusOr<Tensor> rows = EvalWithFeeds(
      s, {band}, {Tensor::FromVector<float>(std::vector<float>(9, 1), TensorShape({3, 3}))},
      ops::MatrixDiagV3(s, band, K(s, {-1, 0}), 0.0f));
  ASSERT_FALSE(rows.ok());
  EXPECT_TRUE(absl::StrContains(rows.status().message(), "number of diagonals")) << rows.status();
  absl::StatusOr<Tensor> set = EvalWithFeeds(
      s, {band}, {Tensor::FromVector<float>({10, 11})},
      ops::MatrixSetDiagV3(s, x, band, K(s, {0})));
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(absl::StrContains(set.status().message(), "Expected diagonal of shape [3]"))
      << set.status();
  // Constant k out of bounds, a negative size or a band of the wrong height
  // are refused when the node is built.
  Scope e = Scope::NewRootScope(BuiltinOps());
  ops::MatrixDiagPartV3(e, ThreeByFour(e), K(e, {5}), 9.0f);
  EXPECT_TRUE(absl::StrContains(e.status().message(), "diagonal 5 is out of bound")) << e.status();
  Scope n = Scope::NewRootScope(BuiltinOps());
  ops::MatrixDiagV3(n, ops::Const(n, std::vector<float>{1, 2}), K(n, {0}), 0.0f, {.num_rows = -5});
  EXPECT_TRUE(absl::StrContains(n.status().message(), "-1 or at least 0")) << n.status();
  Scope h = Scope::NewRootScope(BuiltinOps());
  ops::MatrixDiagV3(h, ops::Const(h, std::vector<float>(9, 1), TensorShape({3, 3})), K(h, {-1, 0}),
                    0.0f);
  EXPECT_TRUE(absl::StrContains(h.status().message(), "holds 3 diagonals")) << h.status();
  // A million empty diagonals, far outside each of 1000 1x1 matrices,
  // cost no loop over them (a billion steps before).
  absl::StatusOr<Tensor> far = Eval(
      s, ops::MatrixDiagV3(s, ops::Const(s, std::vector<float>{}, TensorShape({1000, 1000000, 0})),
                           K(s, {1, 1000000}), 7.0f));
  ASSERT_TRUE(far.ok()) << far.status();
  EXPECT_EQ(far->shape(), TensorShape({1000, 1, 1}));
  EXPECT_EQ(Values<float>(*far), std::vector<float>(1000, 7.0f));
  // A bad align is refused when the node is built.
  Scope b = Scope::NewRootScope(BuiltinOps());
  ops::MatrixDiagPartV3(b, ThreeByFour(b), K(b, {0}), 9.0f, "UP");
  EXPECT_FALSE(b.ok());
}

}  // namespace
}  // namespace sluice
