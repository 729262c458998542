// EuclideanNorm and CumulativeLogsumexp against TensorFlow's values
// (tf.math.reduce_euclidean_norm, cumulative_logsumexp with exclusive and
// reverse), and their gradients through the lowering by central
// differences.
#include "ops/math/composite_ops.h"

#include <limits>
#include <vector>

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

TEST(CompositeOpsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x =
      ops::Const(s, Tensor::FromVector<float>({1, -2, 2, 0.5f, 3, -1.5f}, TensorShape({2, 3})));
  ExpectTensor<float>(Eval(s, {}, ops::EuclideanNorm(s, x, ops::Const(s, 1))), TensorShape({2}),
                      {3.0f, 3.391165f}, 1e-6);
  ExpectTensor<float>(
      Eval(s, {},
           ops::EuclideanNorm(s, x, ops::Const(s, Tensor::FromVector<int32_t>({0, 1})),
                              /*keep_dims=*/true)),
      TensorShape({1, 1}), {4.5276928f}, 1e-6);
  Output y = ops::Const(s, Tensor::FromVector<float>({0.5f, 2, -1, 3}, TensorShape({1, 4})));
  const float inf = std::numeric_limits<float>::infinity();
  ExpectTensor<float>(Eval(s, {}, ops::CumulativeLogsumexp(s, y, ops::Const(s, 1))),
                      TensorShape({1, 4}), {0.5f, 2.2014134f, 2.2413113f, 3.3840916f}, 1e-6);
  ExpectTensor<float>(Eval(s, {}, ops::CumulativeLogsumexp(s, y, ops::Const(s, 1), {true, false})),
                      TensorShape({1, 4}), {-inf, 0.5f, 2.2014134f, 2.2413113f}, 1e-6);
  ExpectTensor<float>(Eval(s, {}, ops::CumulativeLogsumexp(s, y, ops::Const(s, 1), {false, true})),
                      TensorShape({1, 4}), {3.3840916f, 3.3265626f, 3.01815f, 3.0f}, 1e-6);
}

TEST(CompositeOpsTest, GradientsByFiniteDifferences) {
  const Tensor at = Tensor::FromVector<double>({1, -2, 2, 0.5, 3, -1.5}, TensorShape({2, 3}));
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({2, 3}));
  EXPECT_LT(GradError(s, {{x, at}}, ops::EuclideanNorm(s, x, ops::Const(s, 1))), 1e-8);
  Scope c = Scope::NewRootScope(BuiltinOps());
  Output z = Placeholder(c, DT_DOUBLE, TensorShape({2, 3}));
  EXPECT_LT(
      GradError(c, {{z, at}}, ops::CumulativeLogsumexp(c, z, ops::Const(c, 1), {false, true})),
      1e-8);
}

}  // namespace
}  // namespace sluice
