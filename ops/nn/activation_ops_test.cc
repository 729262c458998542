// Activations and L2Loss: forward values from TensorFlow's definitions
// (tf.nn.relu6, elu, selu, leaky_relu, l2_loss; SELU's constants from its
// paper), rank 0 and empty inputs, and gradients by central differences
// away from the kinks.
#include "ops/nn/activation_ops.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;

class ActivationOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(ActivationOpsTest, ForwardValues) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({-2, -0.5, 0, 0.5, 6, 7.5}, {2, 3})}};
  ExpectTensor<double>(Eval(s_, f, ops::Relu6(s_, x)), {2, 3}, {0, 0, 0, 0.5, 6, 6});
  ExpectTensor<double>(Eval(s_, f, ops::Elu(s_, x)), {2, 3},
                       {std::expm1(-2.0), std::expm1(-0.5), 0, 0.5, 6, 7.5}, 1e-15);
  ExpectTensor<double>(Eval(s_, f, ops::LeakyRelu(s_, x)), {2, 3}, {-0.4, -0.1, 0, 0.5, 6, 7.5},
                       1e-7);
  ExpectTensor<double>(Eval(s_, f, ops::LeakyRelu(s_, x, {.alpha = 0.01f})), {2, 3},
                       {-0.02, -0.005, 0, 0.5, 6, 7.5}, 1e-9);
  const double scale = 1.0507009873554805, alpha = 1.6732632423543772;
  ExpectTensor<double>(Eval(s_, f, ops::Selu(s_, x)), {2, 3},
                       {scale * alpha * std::expm1(-2.0), scale * alpha * std::expm1(-0.5), 0,
                        scale * 0.5, scale * 6, scale * 7.5},
                       1e-14);
  ExpectTensor<double>(Eval(s_, f, ops::L2Loss(s_, x)), {},
                       {(4 + 0.25 + 0 + 0.25 + 36 + 56.25) / 2});
  // float, rank 0 and empty.
  Output y = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{y, Make<float>({-3}, {})}}, ops::Elu(s_, y)), {},
                      {std::expm1(-3.0f)});
  ExpectTensor<float>(Eval(s_, {{y, Make<float>({}, {0, 2})}}, ops::Relu6(s_, y)), {0, 2}, {});
  ExpectTensor<float>(Eval(s_, {{y, Make<float>({}, {0})}}, ops::L2Loss(s_, y)), {}, {0});
}

TEST_F(ActivationOpsTest, IntegersAreRefused) {
  ops::Elu(s_, Placeholder(s_, DT_INT32));
  EXPECT_FALSE(s_.ok());
}

TEST_F(ActivationOpsTest, Gradients) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({-2, -0.5, 0.3, 0.5, 5.5, 7.5}, {2, 3})}};
  EXPECT_LT(GradError(s_, f, ops::Relu6(s_, x)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::Elu(s_, x)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::Selu(s_, x)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::LeakyRelu(s_, x, {.alpha = 0.3f})), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::L2Loss(s_, x)), 1e-6);
}

}  // namespace
}  // namespace sluice
