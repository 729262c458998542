// The activation gradient helper ops: values from TensorFlow's definitions
// (tensorflow/core/kernels/relu_op_functor.h, softplus_op.h, softsign_op.h;
// tensorflow/python/kernel_tests/relu_op_test.py checks the same formulas
// against gradient_checker), equality with the gradients Sluice builds,
// shape mismatches, and second-order gradients by central differences.
#include "ops/nn/activation_grad_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/nn/activation_ops.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

class ActivationGradOpsTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  Output g_ = Placeholder(s_, DT_DOUBLE);
  Output v_ = Placeholder(s_, DT_DOUBLE);
  Feeds Fed(std::vector<double> v) {
    return {{g_, Make<double>({1, 2, 3, 4, 5, 6}, {2, 3})}, {v_, Make<double>(v, {2, 3})}};
  }
};

TEST_F(ActivationGradOpsTest, ForwardValues) {
  Feeds f = Fed({-2, 0, 0.5, 3, 6, 7});
  ExpectTensor<double>(Eval(s_, f, ops::Relu6Grad(s_, g_, v_)), {2, 3}, {0, 0, 3, 4, 0, 0});
  // g * mask, as TensorFlow: a non-finite g outside (0, 6) gives NaN.
  Feeds inf = {{g_, Make<double>({INFINITY, NAN, 1, INFINITY, 2, 3}, {2, 3})},
               {v_, Make<double>({-2, 7, 0, 3, 6, 1}, {2, 3})}};
  ExpectTensor<double>(Eval(s_, inf, ops::Relu6Grad(s_, g_, v_)), {2, 3},
                       {NAN, NAN, 0, INFINITY, 0, 3});
  ExpectTensor<double>(Eval(s_, f, ops::LeakyReluGrad(s_, g_, v_, {.alpha = 0.1f})), {2, 3},
                       {0.1, 0.2, 3, 4, 5, 6}, 1e-7);
  ExpectTensor<double>(Eval(s_, f, ops::LeakyReluGrad(s_, g_, v_)), {2, 3},
                       {0.2, 0.4, 3, 4, 5, 6}, 1e-7);
  std::vector<double> sp, ss;
  const double x[] = {-2, 0, 0.5, 3, 6, 7};
  for (int i = 0; i < 6; ++i) {
    sp.push_back((i + 1) / (1 + std::exp(-x[i])));
    ss.push_back((i + 1) / ((1 + std::abs(x[i])) * (1 + std::abs(x[i]))));
  }
  ExpectTensor<double>(Eval(s_, f, ops::SoftplusGrad(s_, g_, v_)), {2, 3}, sp, 1e-12);
  ExpectTensor<double>(Eval(s_, f, ops::SoftsignGrad(s_, g_, v_)), {2, 3}, ss, 1e-12);
  // EluGrad and SeluGrad take the forward outputs (y = e^x - 1 > -1 below 0).
  Feeds y = Fed({-0.5, -0.25, 0, 0.5, 1, 2});
  ExpectTensor<double>(Eval(s_, y, ops::EluGrad(s_, g_, v_)), {2, 3},
                       {0.5, 1.5, 3, 4, 5, 6}, 1e-12);
  const double scale = 1.0507009873554805, sa = scale * 1.6732632423543772;
  ExpectTensor<double>(Eval(s_, y, ops::SeluGrad(s_, g_, v_)), {2, 3},
                       {1 * (-0.5 + sa), 2 * (-0.25 + sa), 3 * sa, 4 * scale, 5 * scale, 6 * scale},
                       1e-12);
}

TEST_F(ActivationGradOpsTest, FloatRankZeroAndEmpty) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = Placeholder(s, DT_FLOAT), x = Placeholder(s, DT_FLOAT);
  ExpectTensor<float>(Eval(s, {{g, Make<float>({2}, {})}, {x, Make<float>({-1}, {})}},
                           ops::LeakyReluGrad(s, g, x)),
                      {}, {0.4f});
  ExpectTensor<float>(Eval(s, {{g, Make<float>({}, {0, 3})}, {x, Make<float>({}, {0, 3})}},
                           ops::Relu6Grad(s, g, x)),
                      {0, 3}, {});
}

TEST_F(ActivationGradOpsTest, ShapesMustMatch) {
  absl::StatusOr<Tensor> r =
      TryEval(s_, {{g_, Make<double>({1, 2}, {2})}, {v_, Make<double>({1, 2, 3}, {3})}},
              ops::EluGrad(s_, g_, v_));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("EluGrad: gradients and its second input"));
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SoftplusGrad(s, ops::Const(s, Make<float>({1, 2}, {2})), ops::Const(s, Make<float>({1}, {1})));
  EXPECT_THAT(s.status().message(), HasSubstr("must have the same shape"));
  Scope t = Scope::NewRootScope(BuiltinOps());
  ops::Relu6Grad(t, Placeholder(t, DT_INT32), Placeholder(t, DT_INT32));
  EXPECT_FALSE(t.ok());
}

// The gradients of the activations are these ops: same values as by hand.
TEST_F(ActivationGradOpsTest, ActivationGradientsEmitTheOps) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Output y = ops::Elu(s_, x);
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s_, {y}, {x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_EQ((*dx)[0].node->op(), "EluGrad");
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({-1, 2}, {2})}}, (*dx)[0]), {2},
                       {std::exp(-1.0), 1}, 1e-12);
}

TEST_F(ActivationGradOpsTest, FirstOrderGradients) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({-2, -0.5, 0.3, 0.5, 5.5, 7.5}, {2, 3})}};
  EXPECT_LT(GradError(s_, f, ops::Softplus(s_, x)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::Softsign(s_, x)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::Relu6(s_, x)), 1e-6);
}

// TensorFlow's _Relu6GradGrad, _EluGradGrad, _SeluGradGrad,
// _LeakyReluGradGrad, _SoftplusGradGrad, _SoftsignGradGrad (nn_grad.py).
TEST_F(ActivationGradOpsTest, SecondOrderGradients) {
  Feeds f = Fed({-2, -0.5, 0.3, 0.5, 5.5, 7.5});
  EXPECT_LT(GradError(s_, f, ops::Relu6Grad(s_, g_, v_)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::LeakyReluGrad(s_, g_, v_, {.alpha = 0.3f})), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::SoftplusGrad(s_, g_, v_)), 1e-6);
  EXPECT_LT(GradError(s_, f, ops::SoftsignGrad(s_, g_, v_)), 1e-6);
  Feeds y = Fed({-0.8, -0.5, 0.3, 0.5, 1.5, 2.5});
  EXPECT_LT(GradError(s_, y, ops::EluGrad(s_, g_, v_)), 1e-6);
  EXPECT_LT(GradError(s_, y, ops::SeluGrad(s_, g_, v_)), 1e-6);
  // Through the forward op: d2/dx2 of Elu and Softplus.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  for (Output y2 : {ops::Elu(s, x), ops::Softplus(s, x)}) {
    absl::StatusOr<std::vector<Output>> dx = AddGradients(s, {y2}, {x});
    ASSERT_TRUE(dx.ok()) << dx.status();
    EXPECT_LT(GradError(s, {{x, Make<double>({-1.5, -0.2, 0.4, 2}, {4})}}, (*dx)[0]), 1e-6);
  }
}

}  // namespace
}  // namespace sluice
