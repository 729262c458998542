// The 3-D window ops: values from TensorFlow's kernel tests
// (tensorflow/python/kernel_tests/conv_ops_3d_test.py testConv3D1x1x1Filter;
// pooling_ops_3d_test.py testAvgPool3dValidPadding and
// testMaxPool3dValidPadding: inputs 1..n, scaled by 1/n for the
// convolution), SAME padding by hand, bad inputs, and gradients by central
// differences (pooling is float-only, as in TensorFlow: wider step and
// tolerance).
#include "ops/nn/nn3d_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Doubles;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

template <typename T>
std::vector<T> Ramp(int n, double scale) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<T>((i + 1) * scale);
  return v;
}

class Nn3dTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(Nn3dTest, Conv3DTensorFlowValues) {
  Output x = Placeholder(s_, DT_DOUBLE), w = Placeholder(s_, DT_DOUBLE);
  Output y = ops::Conv3D(s_, x, w, {1, 1, 1, 1, 1}, "VALID");
  ExpectTensor<double>(
      Eval(s_, {{x, Make<double>(Ramp<double>(18, 1.0 / 18), {1, 2, 3, 1, 3})},
                {w, Make<double>(Ramp<double>(9, 1.0 / 9), {1, 1, 1, 3, 3})}},
           y),
      {1, 2, 3, 1, 3},
      {0.18518519, 0.22222222, 0.25925926, 0.40740741, 0.5, 0.59259259, 0.62962963, 0.77777778,
       0.92592593, 0.85185185, 1.05555556, 1.25925926, 1.07407407, 1.33333333, 1.59259259,
       1.2962963, 1.61111111, 1.92592593},
      1e-7);
}

// A 2x2x2 box filter over 1..8 in a [1, 2, 2, 2, 1] volume, SAME: each
// output sums the input elements at or after it along every axis.
TEST_F(Nn3dTest, Conv3DSamePaddingByHand) {
  Output y = ops::Conv3D(s_, ops::Const(s_, Make<float>(Ramp<float>(8, 1), {1, 2, 2, 2, 1})),
                         ops::Const(s_, Make<float>(std::vector<float>(8, 1), {2, 2, 2, 1, 1})),
                         {1, 1, 1, 1, 1}, "SAME");
  ExpectTensor<float>(Eval(s_, {}, y), {1, 2, 2, 2, 1}, {36, 20, 22, 12, 26, 14, 15, 8});
}

TEST_F(Nn3dTest, PoolingTensorFlowValues) {
  Output x = Placeholder(s_, DT_FLOAT);
  testing_util::Feeds f = {{x, Make<float>(Ramp<float>(81, 1), {1, 3, 3, 3, 3})}};
  ExpectTensor<float>(
      Eval(s_, f, ops::AvgPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "VALID")),
      {1, 1, 1, 1, 3}, {20.5f, 21.5f, 22.5f});
  ExpectTensor<float>(
      Eval(s_, f, ops::MaxPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "VALID")),
      {1, 1, 1, 1, 3}, {40, 41, 42});
  // SAME over 3: windows [0, 2) and [2, 3) per axis; the last one averages
  // only the one corner element (81 - 2 = 79 for channel 0).
  Tensor same = Eval(s_, f, ops::AvgPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "SAME"));
  ASSERT_EQ(same.shape(), TensorShape({1, 2, 2, 2, 3}));
  EXPECT_FLOAT_EQ(same.flat<float>()[21], 79);
  EXPECT_FLOAT_EQ(same.flat<float>()[0], 20.5f);
  Tensor max_same = Eval(s_, f, ops::MaxPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "SAME"));
  EXPECT_FLOAT_EQ(max_same.flat<float>()[23], 81);
}

TEST_F(Nn3dTest, ConvGradients) {
  Output x = Placeholder(s_, DT_DOUBLE), w = Placeholder(s_, DT_DOUBLE);
  testing_util::Feeds f = {{x, Doubles({2, 3, 4, 3, 2}, 1)}, {w, Doubles({2, 2, 3, 2, 3}, 2)}};
  EXPECT_LT(GradError(s_, f, ops::Conv3D(s_, x, w, {1, 1, 1, 1, 1}, "SAME")), 1e-8);
  EXPECT_LT(GradError(s_, f, ops::Conv3D(s_, x, w, {1, 2, 1, 2, 1}, "VALID")), 1e-8);
  EXPECT_LT(GradError(s_, f, ops::Conv3D(s_, x, w, {1, 1, 1, 1, 1}, "SAME",
                                         {.dilations = {1, 1, 2, 1, 1}})),
            1e-8);
}

TEST_F(Nn3dTest, PoolGradients) {
  // Distinct values at least 0.1 apart, so a 1e-2 step never moves a max.
  std::vector<float> v(2 * 3 * 4 * 3 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>((i * 37) % v.size());
  Output x = Placeholder(s_, DT_FLOAT);
  for (const char* padding : {"VALID", "SAME"}) {
    for (Output y : {ops::MaxPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 1, 2, 2, 1}, padding),
                     ops::AvgPool3D(s_, x, {1, 2, 2, 2, 1}, {1, 1, 2, 2, 1}, padding)}) {
      absl::StatusOr<double> err =
          MaxGradientError(s_, {x}, {Make<float>(v, {2, 3, 4, 3, 2})}, y, /*delta=*/1e-2);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 2e-3) << padding;
    }
  }
}

TEST_F(Nn3dTest, BadInputs) {
  Output x = Placeholder(s_, DT_DOUBLE), w = Placeholder(s_, DT_DOUBLE);
  Output y = ops::Conv3D(s_, x, w, {1, 1, 1, 1, 1}, "VALID");
  absl::Status st =
      TryEval(s_, {{x, Doubles({1, 2, 2, 2, 2}, 1)}, {w, Doubles({1, 1, 1, 3, 1}, 2)}}, y).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("input depth"));
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::Conv3D(s, Placeholder(s, DT_FLOAT), Placeholder(s, DT_FLOAT), {2, 1, 1, 1, 1}, "SAME");
  EXPECT_THAT(s.status().message(), HasSubstr("1 in batch and depth"));
  Scope t = Scope::NewRootScope(BuiltinOps());
  ops::MaxPool3D(t, Placeholder(t, DT_FLOAT, TensorShape({1, 1, 1, 1, 1})), {1, 2, 2, 2, 1},
                 {1, 1, 1, 1, 1}, "VALID");
  EXPECT_FALSE(t.ok());
  Output dy = Placeholder(s_, DT_FLOAT);
  Output g = ops::AvgPool3DGrad(s_, {1, 2, 2, 2, 1}, dy, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, "VALID");
  st = TryEval(s_, {{dy, Make<float>({1, 2}, {1, 1, 1, 1, 2})}}, g).status();
  EXPECT_THAT(st.message(), HasSubstr("pooled shape"));
}

}  // namespace
}  // namespace sluice
