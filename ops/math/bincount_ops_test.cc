// Bincount, DenseBincount, SparseBincount and RaggedBincount: the values
// TensorFlow 2.21's kernels give for the same inputs (weights or none,
// binary_output, values past the last bin, every count dtype), the shapes
// their shape functions give, and each bad input's error.
#include "ops/math/bincount_ops.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "builtin_session.h"
#include "graph/gradients.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

// Evaluates y with `x` fed `value` (so the kernel, not the shape function,
// sees it).
absl::StatusOr<Tensor> RunFed(const Scope& s, const Output& x, const Tensor& value, const Output& y) {
  return EvalWithFeeds(s, {x}, {value}, y);
}

absl::StatusOr<Tensor> Eval(const Scope& s, const Output& y) { return EvalWithFeeds(s, {}, {}, y); }

Output NoWeights(const Scope& s, DataType dtype) {
  if (dtype == DT_INT32) return ops::Const(s, std::vector<int32_t>{});
  if (dtype == DT_INT64) return ops::Const(s, std::vector<int64_t>{});
  if (dtype == DT_DOUBLE) return ops::Const(s, std::vector<double>{});
  return ops::Const(s, std::vector<float>{});
}

TEST(BincountTest, CountsAndWeighsValuesDroppingThosePastTheLastBin) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output arr = ops::Const(s, std::vector<int32_t>{1, 1, 2, 5});
  absl::StatusOr<Tensor> counts = Eval(s, ops::Bincount(s, arr, 4, NoWeights(s, DT_FLOAT)));
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(Values<float>(*counts), (std::vector<float>{0, 2, 1, 0}));
  absl::StatusOr<Tensor> weighed =
      Eval(s, ops::Bincount(s, arr, 4, ops::Const(s, std::vector<float>{1, 2, 3, 4})));
  ASSERT_TRUE(weighed.ok()) << weighed.status();
  EXPECT_EQ(Values<float>(*weighed), (std::vector<float>{0, 3, 3, 0}));
  // Any shape is flattened; integer counts.
  Output grid = ops::Const(s, std::vector<int32_t>{1, 1, 2, 3}, TensorShape({2, 2}));
  absl::StatusOr<Tensor> ints = Eval(s, ops::Bincount(s, grid, 3, NoWeights(s, DT_INT64)));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(Values<int64_t>(*ints), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(ops::Bincount(s, arr, 4, NoWeights(s, DT_FLOAT)).shape(), TensorShape({4}));
}

TEST(BincountTest, DenseBincountCountsEachRowOfAMatrix) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output in = ops::Const(s, std::vector<int32_t>{1, 1, 2, 7}, TensorShape({2, 2}));
  Output counts = ops::DenseBincount(s, in, 4, NoWeights(s, DT_FLOAT));
  EXPECT_EQ(counts.shape(), TensorShape({2, 4}));
  absl::StatusOr<Tensor> c = Eval(s, counts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values<float>(*c), (std::vector<float>{0, 2, 0, 0, 0, 0, 1, 0}));

  Output in2 = ops::Const(s, std::vector<int32_t>{1, 1, 2, 3}, TensorShape({2, 2}));
  Output w = ops::Const(s, std::vector<float>{1, 2, 3, 4}, TensorShape({2, 2}));
  absl::StatusOr<Tensor> weighed = Eval(s, ops::DenseBincount(s, in2, 4, w));
  ASSERT_TRUE(weighed.ok()) << weighed.status();
  EXPECT_EQ(Values<float>(*weighed), (std::vector<float>{0, 3, 0, 0, 0, 0, 3, 4}));
  // binary_output: 1 where present, whatever the weights (multi_hot).
  absl::StatusOr<Tensor> multi_hot =
      Eval(s, ops::DenseBincount(s, in2, 4, w, {.binary_output = true}));
  ASSERT_TRUE(multi_hot.ok()) << multi_hot.status();
  EXPECT_EQ(Values<float>(*multi_hot), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 1}));
}

TEST(BincountTest, DenseBincountOfVectorsAndScalarsAndInt64) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> binary =
      Eval(s, ops::DenseBincount(s, ops::Const(s, std::vector<int32_t>{1, 1, 3}), 4,
                                 NoWeights(s, DT_INT32), {.binary_output = true}));
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_EQ(Values<int32_t>(*binary), (std::vector<int32_t>{0, 1, 0, 1}));
  absl::StatusOr<Tensor> scalar =
      Eval(s, ops::DenseBincount(s, ops::Const(s, 3), 4, NoWeights(s, DT_FLOAT)));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(Values<float>(*scalar), (std::vector<float>{0, 0, 0, 1}));
  absl::StatusOr<Tensor> wide = Eval(
      s, ops::DenseBincount(s, ops::Const(s, std::vector<int64_t>{1, 3}), ops::Const(s, int64_t{5}),
                            ops::Const(s, std::vector<int64_t>{2, 3})));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(Values<int64_t>(*wide), (std::vector<int64_t>{0, 2, 0, 3, 0}));
  absl::StatusOr<Tensor> doubles =
      Eval(s, ops::DenseBincount(s, ops::Const(s, std::vector<int32_t>{0, 0}), 2,
                                 ops::Const(s, std::vector<double>{0.25, 0.5})));
  ASSERT_TRUE(doubles.ok()) << doubles.status();
  EXPECT_EQ(Values<double>(*doubles), (std::vector<double>{0.75, 0}));
}

TEST(BincountTest, SparseBincountCountsByRowOfTheIndices) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output indices =
      ops::Const(s, std::vector<int64_t>{0, 0, 0, 2, 1, 1}, TensorShape({3, 2}));
  Output counts = ops::SparseBincount(s, indices, ops::Const(s, std::vector<int32_t>{1, 1, 3}),
                                      ops::Const(s, std::vector<int64_t>{2, 3}), 4,
                                      NoWeights(s, DT_FLOAT));
  EXPECT_EQ(counts.shape(), TensorShape({2, 4}));
  absl::StatusOr<Tensor> c = Eval(s, counts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values<float>(*c), (std::vector<float>{0, 2, 0, 0, 0, 0, 0, 1}));
  // A sparse vector with weights.
  absl::StatusOr<Tensor> v = Eval(
      s, ops::SparseBincount(s, ops::Const(s, std::vector<int64_t>{0, 2}, TensorShape({2, 1})),
                             ops::Const(s, std::vector<int32_t>{1, 3}),
                             ops::Const(s, std::vector<int64_t>{5}), 4,
                             ops::Const(s, std::vector<float>{2, 5})));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(Values<float>(*v), (std::vector<float>{0, 2, 0, 5}));
}

TEST(BincountTest, RaggedBincountCountsEachRowBetweenSplits) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output counts = ops::RaggedBincount(s, ops::Const(s, std::vector<int64_t>{0, 2, 2, 5}),
                                      ops::Const(s, std::vector<int32_t>{1, 1, 3, 0, 9}), 4,
                                      NoWeights(s, DT_FLOAT));
  EXPECT_EQ(counts.shape(), TensorShape({3, 4}));
  absl::StatusOr<Tensor> c = Eval(s, counts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values<float>(*c), (std::vector<float>{0, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}));
}

TEST(BincountTest, BadInputsAreClearErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output ids = ops::Placeholder(s, DT_INT32);
  Output no_w = NoWeights(s, DT_FLOAT);
  auto expect_error = [&](const Output& y, const Tensor& fed, const std::string& message) {
    absl::StatusOr<Tensor> r = RunFed(s, ids, fed, y);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  };
  const Tensor negative = Tensor::FromVector<int32_t>({1, -1, 2});
  expect_error(ops::Bincount(s, ids, 4, no_w), negative, "must be non-negative");
  expect_error(ops::DenseBincount(s, ids, 4, no_w), negative, "value found: -1");
  expect_error(ops::DenseBincount(s, ids, 4, no_w),
               Tensor::FromVector<int32_t>({1, 1}, TensorShape({1, 1, 2})),
               "at most rank 2 but is rank 3");
  expect_error(ops::DenseBincount(s, ids, 4, ops::Const(s, std::vector<float>{1, 2})),
               Tensor::FromVector<int32_t>({1, 2, 3}), "must be the same shape");
  expect_error(ops::Bincount(s, ids, 4, ops::Const(s, std::vector<float>{1, 2})),
               Tensor::FromVector<int32_t>({1, 2, 3}), "must have the same size");
  Output size = ops::Placeholder(s, DT_INT32);
  absl::StatusOr<Tensor> neg_size = EvalWithFeeds(
      s, {ids, size}, {Tensor::FromVector<int32_t>({1}), Tensor::Scalar<int32_t>(-2)},
      ops::DenseBincount(s, ids, size, no_w));
  ASSERT_FALSE(neg_size.ok());
  EXPECT_TRUE(absl::StrContains(neg_size.status().message(), "size (-2) must be non-negative"))
      << neg_size.status();
  absl::StatusOr<Tensor> vec_size = EvalWithFeeds(
      s, {ids, size}, {Tensor::FromVector<int32_t>({1}), Tensor::FromVector<int32_t>({2})},
      ops::Bincount(s, ids, size, no_w));
  ASSERT_FALSE(vec_size.ok());
  EXPECT_TRUE(absl::StrContains(vec_size.status().message(), "rank 0 but is rank 1"))
      << vec_size.status();
  // A constant negative size or a rank-3 input fail when the node is built.
  Scope b = Scope::NewRootScope(BuiltinOps());
  ops::DenseBincount(b, ops::Const(b, std::vector<int32_t>{1}), -1, NoWeights(b, DT_FLOAT));
  EXPECT_FALSE(b.ok());
  EXPECT_TRUE(absl::StrContains(b.status().message(), "must be non-negative")) << b.status();

  // Sparse and ragged structure.
  Output indices = ops::Placeholder(s, DT_INT64);
  absl::StatusOr<Tensor> out_of_bounds = EvalWithFeeds(
      s, {indices}, {Tensor::FromVector<int64_t>({0, 0, 3, 2}, TensorShape({2, 2}))},
      ops::SparseBincount(s, indices, ops::Const(s, std::vector<int32_t>{1, 2}),
                          ops::Const(s, std::vector<int64_t>{2, 3}), 4, no_w));
  ASSERT_FALSE(out_of_bounds.ok());
  EXPECT_TRUE(absl::StrContains(out_of_bounds.status().message(),
                                "indices[1, :] = [3, 2] is out of bounds"))
      << out_of_bounds.status();
  Output splits = ops::Placeholder(s, DT_INT64);
  Output ragged =
      ops::RaggedBincount(s, splits, ops::Const(s, std::vector<int32_t>{1, 1, 3}), 4, no_w);
  for (const auto& [bad, message] :
       std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{1, 3}, "must start with 0"}, {{0, 2, 1, 3}, "must not decrease"},
           {{0, 2}, "must end with the number of values 3"}}) {
    absl::StatusOr<Tensor> r =
        EvalWithFeeds(s, {splits}, {Tensor::FromVector<int64_t>(bad)}, ragged);
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_TRUE(absl::StrContains(r.status().message(), message)) << r.status();
  }
}

// TensorFlow defines no gradient: a loss reaching the weights is an error
// naming the node, not a silent zero.
TEST(BincountTest, GradientThroughCountingWeightsIsUnimplemented) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Placeholder(s, DT_FLOAT);
  Output counts = ops::DenseBincount(s.WithOpName("counts"),
                                     ops::Const(s, std::vector<int32_t>{0, 2}), 3, w);
  absl::StatusOr<std::vector<Output>> dw = AddGradients(s, {counts}, {w});
  ASSERT_FALSE(dw.ok());
  EXPECT_EQ(dw.status().code(), absl::StatusCode::kUnimplemented) << dw.status();
  EXPECT_TRUE(absl::StrContains(dw.status().message(), "DenseBincount 'counts'")) << dw.status();
  // With binary_output the weights do not count: no gradient, no error.
  Output multi_hot = ops::DenseBincount(s, ops::Const(s, std::vector<int32_t>{0, 2}), 3, w,
                                        {.binary_output = true});
  absl::StatusOr<std::vector<Output>> none = AddGradients(s, {multi_hot}, {w});
  EXPECT_TRUE(none.ok()) << none.status();
}

}  // namespace
}  // namespace sluice
