// LowerBound and UpperBound against tf.searchsorted's values, and their
// shape errors.
#include "ops/array/sorted_search_ops.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Placeholder;
using testing_util::TryEval;

TEST(SortedSearchOpsTest, LeftAndRightSides) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output sorted =
      ops::Const(s, Tensor::FromVector<float>({1, 3, 3, 7, 0, 0, 1, 2}, TensorShape({2, 4})));
  Output values =
      ops::Const(s, Tensor::FromVector<float>({3, 0, 9, 0, 1.5f, -1}, TensorShape({2, 3})));
  ExpectTensor<int32_t>(Eval(s, {}, ops::LowerBound(s, sorted, values)), TensorShape({2, 3}),
                        {1, 0, 4, 0, 3, 0});
  ExpectTensor<int64_t>(Eval(s, {}, ops::UpperBound(s, sorted, values, DT_INT64)),
                        TensorShape({2, 3}), {3, 0, 4, 2, 3, 0});
}

TEST(SortedSearchOpsTest, RowsMustMatch) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::LowerBound(s, ops::Const(s, Tensor(DT_INT32, TensorShape({2, 4}))),
                  ops::Const(s, Tensor(DT_INT32, TensorShape({3, 1}))));
  EXPECT_THAT(s.status().message(), HasSubstr("Leading dim_size of both tensors must match"));
  Scope r = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(r, DT_INT32);
  Output y = ops::UpperBound(r, a, ops::Const(r, Tensor(DT_INT32, TensorShape({2, 1}))));
  absl::StatusOr<Tensor> got = TryEval(r, {{a, Tensor(DT_INT32, TensorShape({4}))}}, y);
  EXPECT_THAT(got.status().message(), HasSubstr("rank 2"));
}

}  // namespace
}  // namespace sluice
