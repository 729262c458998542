// TopK and InTopK (TF1's forms): values as TopKV2/InTopKV2 give, the
// lowering, and TopK's gradient through it by central differences.
#include "ops/array/legacy_top_k_ops.h"

#include <vector>

#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Placeholder;

TEST(LegacyTopKOpsTest, TopKAndInTopK) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Const(s, Tensor::FromVector<float>({1, 5, 3, 5, 2, 0}, TensorShape({2, 3})));
  ops::TopKOutputs top = ops::TopKV1(s, x, 2);
  EXPECT_EQ(top.values.shape(), TensorShape({2, 2}));
  ExpectTensor<float>(Eval(s, {}, top.values), TensorShape({2, 2}), {5, 3, 5, 2});
  ExpectTensor<int32_t>(Eval(s, {}, top.indices), TensorShape({2, 2}), {1, 2, 0, 1});
  Output hit = ops::InTopK(s, x, ops::Const(s, Tensor::FromVector<int64_t>({2, 2})), 2);
  ExpectTensor<bool>(Eval(s, {}, hit), TensorShape({2}), {true, false});

  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::TopKV1(bad, ops::Const(bad, Tensor(DT_FLOAT, TensorShape({2, 3}))), 4);
  EXPECT_FALSE(bad.ok());
}

TEST(LegacyTopKOpsTest, TopKGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({2, 4}));
  Output y = ops::TopKV1(s, x, 2).values;
  EXPECT_LT(
      GradError(
          s,
          {{x, Tensor::FromVector<double>({0.5, -1, 2, 1.5, 3, 0.25, -2, 1}, TensorShape({2, 4}))}},
          y),
      1e-8);
}

}  // namespace
}  // namespace sluice
