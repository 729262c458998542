// FusedBatchNorm(V2, V3): training and inference values from the batch-norm
// definition (tf.compat.v1.nn.fused_batch_norm's documentation: batch
// statistics over N, H, W, a Bessel-corrected batch_variance), the moving
// average factor, bad shapes, and gradients by central differences (float
// only, as TensorFlow's op, so with a wide step and tolerance).
#include "ops/nn/batch_norm_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

// x: [N=2, H=1, W=2, C=2]; channel 0 holds 1, 2, 3, 4; channel 1 holds
// 10, 10, 20, 20.
Tensor X() { return Make<float>({1, 10, 2, 10, 3, 20, 4, 20}, {2, 1, 2, 2}); }

TEST(FusedBatchNormTest, Training) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
      s, x, {2.0f, 1.0f}, {0.5f, 0.0f}, ops::Const(s, Make<float>({}, {0})),
      ops::Const(s, Make<float>({}, {0})), {.epsilon = 0.0f});
  Feeds f = {{x, X()}};
  // Channel 0: mean 2.5, variance 1.25; channel 1: mean 15, variance 25.
  const float r0 = 1 / std::sqrt(1.25f);
  ExpectTensor<float>(Eval(s, f, bn.y), {2, 1, 2, 2},
                      {2 * -1.5f * r0 + 0.5f, -1, 2 * -0.5f * r0 + 0.5f, -1, 2 * 0.5f * r0 + 0.5f,
                       1, 2 * 1.5f * r0 + 0.5f, 1},
                      1e-5);
  ExpectTensor<float>(Eval(s, f, bn.batch_mean), {2}, {2.5f, 15});
  ExpectTensor<float>(Eval(s, f, bn.batch_variance), {2}, {1.25f * 4 / 3, 25.0f * 4 / 3}, 1e-4);
  ExpectTensor<float>(Eval(s, f, bn.reserve_space_1), {2}, {2.5f, 15});
  ExpectTensor<float>(Eval(s, f, bn.reserve_space_2), {2}, {1.25f, 25}, 1e-5);
}

TEST(FusedBatchNormTest, InferenceAndMovingAverages) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  ops::FusedBatchNormOutputs inf = ops::FusedBatchNormV3(s, x, {1.0f, 2.0f}, {0.0f, 1.0f},
                                                         {1.0f, 10.0f}, {4.0f, 1.0f},
                                                         {.epsilon = 0.0f, .is_training = false});
  Feeds f = {{x, X()}};
  ExpectTensor<float>(Eval(s, f, inf.y), {2, 1, 2, 2}, {0, 1, 0.5f, 1, 1, 21, 1.5f, 21}, 1e-6);
  ExpectTensor<float>(Eval(s, f, inf.batch_mean), {2}, {1, 10});
  ops::FusedBatchNormOutputs avg = ops::FusedBatchNormV3(
      s, x, {1.0f, 1.0f}, {0.0f, 0.0f}, {0.0f, 0.0f}, {1.0f, 1.0f},
      {.exponential_avg_factor = 0.1f, .is_training = true});
  ExpectTensor<float>(Eval(s, f, avg.batch_mean), {2}, {0.25f, 1.5f}, 1e-6);
  ExpectTensor<float>(Eval(s, f, avg.batch_variance), {2},
                      {0.9f + 0.1f * 1.25f * 4 / 3, 0.9f + 0.1f * 25 * 4 / 3}, 1e-5);
}

TEST(FusedBatchNormTest, BadInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  Output scale = Placeholder(s, DT_FLOAT);
  ops::FusedBatchNormOutputs bn =
      ops::FusedBatchNormV3(s, x, scale, {0.0f, 0.0f}, {0.0f, 0.0f}, {1.0f, 1.0f});
  absl::Status st = TryEval(s, {{x, X()}, {scale, Make<float>({1, 1, 1}, {3})}}, bn.y).status();
  EXPECT_NE(st.message().find("scale must be [2]"), std::string::npos) << st;
  st = TryEval(s, {{x, Make<float>({1, 2}, {2})}, {scale, Make<float>({1, 1}, {2})}}, bn.y).status();
  EXPECT_NE(st.message().find("4-D"), std::string::npos) << st;
  Output nchw = ops::FusedBatchNormV3(s, x, {1.0f}, {0.0f}, {0.0f}, {1.0f},
                                      {.data_format = "NCHW"}).y;
  st = TryEval(s, {{x, Make<float>({1, 2}, {1, 1, 1, 2})}}, nchw).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
}

TEST(FusedBatchNormTest, Gradients) {
  for (bool training : {true, false}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_FLOAT);
    Output scale = Placeholder(s, DT_FLOAT);
    Output offset = Placeholder(s, DT_FLOAT);
    ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(
        s, x, scale, offset, {0.5f, -0.2f, 0.1f}, {1.5f, 0.7f, 2.0f}, {.is_training = training});
    std::vector<float> xv;
    for (int i = 0; i < 24; ++i) xv.push_back(std::sin(0.7f * i + 0.3f));
    absl::StatusOr<double> err = MaxGradientError(
        s, {x, scale, offset},
        {Make<float>(xv, {2, 2, 2, 3}), Make<float>({0.8f, 1.2f, -0.6f}, {3}),
         Make<float>({0.1f, 0.0f, -0.3f}, {3})},
        bn.y, /*delta=*/1e-2);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 5e-3) << (training ? "training" : "inference");
  }
}

}  // namespace
}  // namespace sluice
