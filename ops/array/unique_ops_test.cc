// UniqueV2, UniqueWithCounts and UniqueWithCountsV2: the values TensorFlow
// 2.21's kernels give for the same inputs (rows, columns, a middle axis of a
// rank-3 tensor, NaN and -0.0, strings, empty inputs), the gradient against
// central differences, and each bad axis's error.
#include "ops/array/unique_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/gradients.h"
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

// y, idx (and count) of one evaluation.
struct Result {
  Tensor y, idx, count;
};

absl::StatusOr<Result> Eval(const Scope& s, const std::vector<Output>& outs) {
  Result r;
  Tensor* slots[] = {&r.y, &r.idx, &r.count};
  for (size_t i = 0; i < outs.size(); ++i) {
    absl::StatusOr<Tensor> t = EvalWithFeeds(s, {}, {}, outs[i]);
    if (!t.ok()) return t.status();
    *slots[i] = *std::move(t);
  }
  return r;
}

const std::vector<int32_t> kRows = {1, 0, 0, 1, 0, 0, 2, 0, 0};  // [[1,0,0],[1,0,0],[2,0,0]]

TEST(UniqueOpsTest, UniqueV2KeepsDistinctRowsOrColumns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, kRows, TensorShape({3, 3}));
  ops::UniqueOutputs rows = ops::UniqueV2(s, x, ops::Const(s, std::vector<int32_t>{0}));
  absl::StatusOr<Result> r = Eval(s, {rows.y, rows.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{1, 0, 0, 2, 0, 0}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 0, 1}));
  // Columns, by a negative axis; int64 indices.
  ops::UniqueOutputs cols =
      ops::UniqueV2(s, x, ops::Const(s, std::vector<int64_t>{-1}), DT_INT64);
  r = Eval(s, {cols.y, cols.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{1, 0, 1, 0, 2, 0}));
  EXPECT_EQ(Values<int64_t>(r->idx), (std::vector<int64_t>{0, 1, 1}));
  // The middle axis of [[[1,2],[1,2]],[[3,4],[3,5]]]: the two slices differ
  // in their second half only.
  Output cube = ops::Const(s, std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 5}, TensorShape({2, 2, 2}));
  ops::UniqueOutputs mid = ops::UniqueV2(s, cube, ops::Const(s, std::vector<int32_t>{1}));
  r = Eval(s, {mid.y, mid.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({2, 2, 2}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 1}));
  Output same = ops::Const(s, std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}, TensorShape({2, 2, 2}));
  ops::UniqueOutputs merged = ops::UniqueV2(s, same, ops::Const(s, std::vector<int32_t>{1}));
  r = Eval(s, {merged.y, merged.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({2, 1, 2}));
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 0}));
}

TEST(UniqueOpsTest, VectorsWithoutAnAxisNaNAndSignedZeroAndStrings) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::UniqueOutputs v = ops::UniqueV2(s, ops::Const(s, std::vector<int32_t>{3, 1, 3}),
                                       ops::Const(s, std::vector<int64_t>{}));
  absl::StatusOr<Result> r = Eval(s, {v.y, v.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 1, 0}));
  // NaN is never equal to itself; 0.0 equals -0.0 (TensorFlow: [nan, nan, 0]).
  ops::UniqueOutputs f = ops::UniqueV2(
      s, ops::Const(s, std::vector<float>{NAN, NAN, 0.0f, -0.0f}), ops::Const(s, std::vector<int32_t>{0}));
  r = Eval(s, {f.y, f.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->y.NumElements(), 3);
  EXPECT_TRUE(std::isnan(r->y.data<float>()[0]) && std::isnan(r->y.data<float>()[1]));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 1, 2, 2}));
  ops::UniqueWithCountsOutputs words = ops::UniqueWithCountsV2(
      s, ops::Const(s, std::vector<std::string>{"a", "b", "a"}), ops::Const(s, std::vector<int32_t>{0}));
  r = Eval(s, {words.y, words.idx, words.count});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<std::string>(r->y), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(Values<int32_t>(r->count), (std::vector<int32_t>{2, 1}));
}

TEST(UniqueOpsTest, CountsOfValuesAndOfSlices) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::UniqueWithCountsOutputs c =
      ops::UniqueWithCounts(s, ops::Const(s, std::vector<int32_t>{4, 1, 4, 4, 2}), DT_INT64);
  absl::StatusOr<Result> r = Eval(s, {c.y, c.idx, c.count});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{4, 1, 2}));
  EXPECT_EQ(Values<int64_t>(r->idx), (std::vector<int64_t>{0, 1, 0, 0, 2}));
  EXPECT_EQ(Values<int64_t>(r->count), (std::vector<int64_t>{3, 1, 1}));
  Output x = ops::Const(s, kRows, TensorShape({3, 3}));
  ops::UniqueWithCountsOutputs cols =
      ops::UniqueWithCountsV2(s, x, ops::Const(s, std::vector<int32_t>{1}));
  r = Eval(s, {cols.y, cols.idx, cols.count});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values<int32_t>(r->y), (std::vector<int32_t>{1, 0, 1, 0, 2, 0}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(Values<int32_t>(r->count), (std::vector<int32_t>{1, 2}));
  // No rows: nothing distinct. Empty columns are all equal: one of them.
  Output empty = ops::Const(s, std::vector<float>{}, TensorShape({0, 3}));
  ops::UniqueWithCountsOutputs none =
      ops::UniqueWithCountsV2(s, empty, ops::Const(s, std::vector<int32_t>{0}));
  r = Eval(s, {none.y, none.idx, none.count});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({0, 3}));
  EXPECT_EQ(r->count.NumElements(), 0);
  ops::UniqueOutputs one = ops::UniqueV2(s, empty, ops::Const(s, std::vector<int32_t>{1}));
  r = Eval(s, {one.y, one.idx});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->y.shape(), TensorShape({0, 1}));
  EXPECT_EQ(Values<int32_t>(r->idx), (std::vector<int32_t>{0, 0, 0}));
}

// Against central differences where the slices are distinct (a nudge
// would split equal slices), and by value where they repeat: every row
// equal to a distinct row gets that row's gradient.
TEST(UniqueOpsTest, GradientGathersAlongTheAxis) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s, DT_DOUBLE);
  ops::UniqueOutputs u = ops::UniqueV2(s, x, ops::Const(s, std::vector<int32_t>{0}));
  Output w = ops::Const(s, std::vector<double>{0.5, -1.5, 2.0, 3.0, 1.0, -2.0}, TensorShape({3, 2}));
  Output loss = ops::Sum(s, ops::Mul(s, ops::Square(s, u.y), w), ops::Const(s, std::vector<int32_t>{0, 1}));
  absl::StatusOr<double> err = MaxGradientError(
      s, {x}, {Tensor::FromVector<double>({1, 2, 0.5, 2, 3, 4}, TensorShape({3, 2}))}, loss);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
  Output xc = ops::Placeholder(s, DT_DOUBLE);
  ops::UniqueWithCountsOutputs uc =
      ops::UniqueWithCountsV2(s, xc, ops::Const(s, std::vector<int64_t>{-1}));
  Output loss_c = ops::Sum(s, ops::Square(s, uc.y), ops::Const(s, std::vector<int32_t>{0, 1}));
  err = MaxGradientError(
      s, {xc}, {Tensor::FromVector<double>({1, 1.5, 2, 2, 2.5, 3}, TensorShape({2, 3}))}, loss_c);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);

  // Rows 0 and 1 are equal: y has two rows and both get w's first row.
  Output linear = ops::Sum(s, ops::Mul(s, u.y, ops::Const(s, std::vector<double>{1, 2, 3, 4},
                                                          TensorShape({2, 2}))),
                           ops::Const(s, std::vector<int32_t>{0, 1}));
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s, {linear}, {x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  absl::StatusOr<Tensor> g = EvalWithFeeds(
      s, {x}, {Tensor::FromVector<double>({1, 2, 1, 2, 3, 4}, TensorShape({3, 2}))}, (*dx)[0]);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Values<double>(*g), (std::vector<double>{1, 2, 1, 2, 3, 4}));
}

TEST(UniqueOpsTest, BadAxesAreClearErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, kRows, TensorShape({3, 3}));
  Output axis = ops::Placeholder(s, DT_INT32);
  ops::UniqueOutputs u = ops::UniqueV2(s, x, axis);
  for (const auto& [value, message] : std::vector<std::pair<Tensor, std::string>>{
           {Tensor::FromVector<int32_t>({2 + 1}), "axis has to be between [0, 2), got 3"},
           {Tensor::FromVector<int32_t>({-3}), "axis has to be between [0, 2), got -3"},
           {Tensor::FromVector<int32_t>({0, 1}), "larger than 1 elements"},
           {Tensor::Scalar<int32_t>(0), "axis expects a 1D vector"},
           {Tensor::FromVector<int32_t>({}), "unique expects a 1D vector"}}) {
    absl::StatusOr<Tensor> r = EvalWithFeeds(s, {axis}, {value}, u.y);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  }
  Output m = ops::Placeholder(s, DT_INT32);
  ops::UniqueWithCountsOutputs c = ops::UniqueWithCounts(s, m);
  absl::StatusOr<Tensor> r =
      EvalWithFeeds(s, {m}, {Tensor::FromVector<int32_t>({1, 2}, TensorShape({1, 2}))}, c.y);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "unique expects a 1D vector")) << r.status();
}

}  // namespace
}  // namespace sluice
