// FusedBatchNormGrad, V2 and V3: values by hand from the batch-norm backward
// formulas (tensorflow/python/ops/nn_grad.py's _BatchNormGrad, which
// tensorflow/python/kernel_tests/nn_fused_batchnorm_test.py compares the
// kernels against), equality with the gradient Sluice builds for
// FusedBatchNormV3 (training and inference), and bad shapes.
#include "ops/nn/batch_norm_grad_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/nn/batch_norm_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

std::vector<float> Floats(const Tensor& t) {
  absl::Span<const float> v = t.flat<float>();
  return std::vector<float>(v.begin(), v.end());
}

// x: [1, 1, 2, 1] = {1, 3}: mean 2, variance 1 (epsilon 0), xhat = {-1, 1}.
TEST(FusedBatchNormGradTest, ValuesByHand) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output dy = ops::Const(s, Make<float>({1, 5}, {1, 1, 2, 1}));
  Output x = ops::Const(s, Make<float>({1, 3}, {1, 1, 2, 1}));
  auto train = ops::FusedBatchNormGradV3(s, dy, x, {2.0f}, {2.0f}, {1.0f}, {0.0f},
                                         {.epsilon = 0});
  // dy - mean(dy) = {-2, 2}; mean(dy * xhat) = 2; minus xhat * 2 = {0, 0}.
  ExpectTensor<float>(Eval(s, {}, train.x_backprop), {1, 1, 2, 1}, {0, 0});
  ExpectTensor<float>(Eval(s, {}, train.scale_backprop), {1}, {4});
  ExpectTensor<float>(Eval(s, {}, train.offset_backprop), {1}, {6});
  auto infer = ops::FusedBatchNormGradV3(s, dy, x, {2.0f}, {2.0f}, {4.0f}, {0.0f},
                                         {.epsilon = 0, .is_training = false});
  // r = 1/2: x_backprop = scale * r * dy; xhat = {-0.5, 0.5}.
  ExpectTensor<float>(Eval(s, {}, infer.x_backprop), {1, 1, 2, 1}, {1, 5});
  ExpectTensor<float>(Eval(s, {}, infer.scale_backprop), {1}, {2});
  // V1 and V2 forms: same arithmetic, five outputs, the last two empty.
  Output two = ops::Const(s, Make<float>({2}, {1}));
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2"}) {
    std::vector<Output> out = s.Op(op)
                                  .Input(dy)
                                  .Input(x)
                                  .Input(two)
                                  .Input(two)
                                  .Input(ops::Const(s, Make<float>({1}, {1})))
                                  .Attr("epsilon", 0.0f)
                                  .FinalizeAll();
    ASSERT_EQ(out.size(), 5u) << s.status();
    ExpectTensor<float>(Eval(s, {}, out[1]), {1}, {4});
    ExpectTensor<float>(Eval(s, {}, out[3]), {0}, {});
  }
}

TEST(FusedBatchNormGradTest, MatchesTheGradientOfFusedBatchNormV3) {
  for (bool training : {true, false}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<float> xv, dyv;
    for (int i = 0; i < 24; ++i) {
      xv.push_back(std::sin(0.7f * i + 0.3f));
      dyv.push_back(std::cos(1.3f * i));
    }
    Output x = ops::Const(s, Make<float>(xv, {2, 2, 2, 3}));
    Output dy = ops::Const(s, Make<float>(dyv, {2, 2, 2, 3}));
    Output scale = ops::Const(s, Make<float>({0.8f, 1.2f, -0.6f}, {3}));
    Output mean = ops::Const(s, Make<float>({0.5f, -0.2f, 0.1f}, {3}));
    Output var = ops::Const(s, Make<float>({1.5f, 0.7f, 2.0f}, {3}));
    ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
        s, x, scale, {0.1f, 0.0f, -0.3f}, mean, var, {.is_training = training});
    absl::StatusOr<std::vector<Output>> want = AddGradients(s, {bn.y}, {x, scale}, {dy});
    ASSERT_TRUE(want.ok()) << want.status();
    Output rs1 = training ? bn.reserve_space_1 : mean;
    Output rs2 = training ? bn.reserve_space_2 : var;
    auto got = ops::FusedBatchNormGradV3(s, dy, x, scale, rs1, rs2, ops::Const(s, Make<float>({}, {0})),
                                         {.is_training = training});
    const Output pairs[2][2] = {{got.x_backprop, (*want)[0]}, {got.scale_backprop, (*want)[1]}};
    for (const auto& [a, b] : pairs) {
      Tensor ta = Eval(s, {}, a), tb = Eval(s, {}, b);
      ExpectTensor<float>(ta, tb.shape(), Floats(tb), 1e-5);
    }
  }
}

TEST(FusedBatchNormGradTest, EmptyBatchAndBadShapes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output e = ops::Const(s, Make<float>({}, {0, 1, 1, 2}));
  auto empty = ops::FusedBatchNormGradV3(s, e, e, {1.0f, 1.0f}, {0.0f, 0.0f}, {1.0f, 1.0f},
                                         {0.0f});
  ExpectTensor<float>(Eval(s, {}, empty.x_backprop), {0, 1, 1, 2}, {});
  ExpectTensor<float>(Eval(s, {}, empty.offset_backprop), {2}, {0, 0});

  Output x = Placeholder(s, DT_FLOAT);
  auto bad = ops::FusedBatchNormGradV3(s, x, x, {1.0f, 1.0f, 1.0f}, {0.0f, 0.0f}, {1.0f, 1.0f},
                                       {0.0f});
  absl::Status st = TryEval(s, {{x, Make<float>({1, 2}, {1, 1, 1, 2})}}, bad.x_backprop).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("scale must be [2]"));
  st = TryEval(s, {{x, Make<float>({1, 2}, {2})}}, bad.x_backprop).status();
  EXPECT_THAT(st.message(), HasSubstr("4-D"));
  Output nchw = ops::FusedBatchNormGradV3(s, x, x, {1.0f}, {0.0f}, {1.0f}, {0.0f},
                                          {.data_format = "NCHW"}).x_backprop;
  st = TryEval(s, {{x, Make<float>({1, 2}, {1, 1, 1, 2})}}, nchw).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
}

}  // namespace
}  // namespace sluice
