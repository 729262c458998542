// DepthwiseConv2dNative and its backprops: TensorFlow's hand-checked case
// (tensorflow/python/kernel_tests/depthwise_conv_op_test.py,
// testConv2D2x2Filter), agreement with Conv2D where one input channel makes
// the two the same op (SAME, VALID, EXPLICIT, strides, dilations), bad
// inputs, and gradients by central differences.
#include "ops/nn/depthwise_conv_ops.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/nn/nn_ops.h"
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

std::vector<double> Iota(int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1;
  return v;
}

std::vector<double> Values(const Tensor& t) {
  absl::Span<const double> v = t.flat<double>();
  return std::vector<double>(v.begin(), v.end());
}

class DepthwiseConvTest : public ::testing::Test {
 protected:
  Scope s_ = Scope::NewRootScope(BuiltinOps());
  Output x_ = Placeholder(s_, DT_DOUBLE);
  Output w_ = Placeholder(s_, DT_DOUBLE);
};

// Input 1..12 as [1, 2, 3, 2], filter 1..16 as [2, 2, 2, 2], VALID.
TEST_F(DepthwiseConvTest, TensorFlowsHandValues) {
  Output y = ops::DepthwiseConv2dNative(s_, x_, w_, {1, 1, 1, 1}, "VALID");
  ExpectTensor<double>(Eval(s_, {{x_, Make<double>(Iota(12), {1, 2, 3, 2})},
                                 {w_, Make<double>(Iota(16), {2, 2, 2, 2})}},
                            y),
                       {1, 1, 2, 4}, {196, 216, 272, 296, 252, 280, 344, 376});
  Scope f = Scope::NewRootScope(BuiltinOps());
  Output xf = Placeholder(f, DT_FLOAT, TensorShape({1, 2, 3, 2}));
  Output yf = ops::DepthwiseConv2dNative(f, xf, ops::Const(f, Make<float>({1, 1}, {1, 1, 2, 1})),
                                         {1, 1, 1, 1}, "SAME");
  ExpectTensor<float>(Eval(f, {{xf, Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
                                                {1, 2, 3, 2})}},
                           yf),
                      {1, 2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

// With one input channel and multiplier k, depthwise is Conv2D.
TEST_F(DepthwiseConvTest, MatchesConv2DOnOneChannel) {
  struct Case {
    std::vector<int64_t> strides;
    std::string padding;
    ops::DepthwiseConv2dAttrs attrs;
  };
  const Case cases[] = {
      {{1, 1, 1, 1}, "SAME", {}},
      {{1, 2, 2, 1}, "VALID", {}},
      {{1, 2, 2, 1}, "SAME", {}},
      {{1, 1, 1, 1}, "SAME", {.dilations = {1, 2, 2, 1}}},
      {{1, 1, 1, 1}, "EXPLICIT", {.explicit_paddings = {0, 0, 1, 2, 0, 1, 0, 0}}},
  };
  const Tensor x = Doubles({2, 5, 6, 1}, 1), w = Doubles({3, 2, 1, 3}, 2);
  for (const Case& c : cases) {
    Output d = ops::DepthwiseConv2dNative(s_, x_, w_, c.strides, c.padding, c.attrs);
    Output r = ops::Conv2D(s_, x_, w_, c.strides, c.padding,
                           {.explicit_paddings = c.attrs.explicit_paddings,
                            .dilations = c.attrs.dilations});
    Tensor want = Eval(s_, {{x_, x}, {w_, w}}, r);
    ExpectTensor<double>(Eval(s_, {{x_, x}, {w_, w}}, d), want.shape(), Values(want), 1e-12);
  }
}

TEST_F(DepthwiseConvTest, Gradients) {
  const Tensor x = Doubles({2, 4, 5, 3}, 3), w = Doubles({2, 3, 3, 2}, 4);
  EXPECT_LT(GradError(s_, {{x_, x}, {w_, w}},
                      ops::DepthwiseConv2dNative(s_, x_, w_, {1, 1, 1, 1}, "SAME")),
            1e-8);
  EXPECT_LT(GradError(s_, {{x_, x}, {w_, w}},
                      ops::DepthwiseConv2dNative(s_, x_, w_, {1, 2, 2, 1}, "VALID")),
            1e-8);
  EXPECT_LT(GradError(s_, {{x_, x}, {w_, w}},
                      ops::DepthwiseConv2dNative(s_, x_, w_, {1, 1, 1, 1}, "SAME",
                                                 {.dilations = {1, 2, 1, 1}})),
            1e-8);
  EXPECT_LT(GradError(s_, {{x_, x}, {w_, w}},
                      ops::DepthwiseConv2dNative(
                          s_, x_, w_, {1, 2, 2, 1}, "EXPLICIT",
                          {.explicit_paddings = {0, 0, 1, 1, 2, 0, 0, 0}})),
            1e-8);
}

TEST_F(DepthwiseConvTest, EmptyBatch) {
  ExpectTensor<double>(Eval(s_, {{x_, Make<double>({}, {0, 3, 3, 2})},
                                 {w_, Doubles({2, 2, 2, 3}, 5)}},
                            ops::DepthwiseConv2dNative(s_, x_, w_, {1, 1, 1, 1}, "VALID")),
                       {0, 2, 2, 6}, {});
}

TEST_F(DepthwiseConvTest, BadInputs) {
  Output y = ops::DepthwiseConv2dNative(s_, x_, w_, {1, 1, 1, 1}, "VALID");
  absl::Status st =
      TryEval(s_, {{x_, Doubles({1, 3, 3, 2}, 1)}, {w_, Doubles({2, 2, 3, 1}, 2)}}, y).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("input depth 2 must equal the filter's in_depth 3"));
  st = TryEval(s_, {{x_, Doubles({1, 1, 1, 2}, 1)}, {w_, Doubles({2, 2, 2, 1}, 2)}}, y).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::DepthwiseConv2dNative(s, Placeholder(s, DT_FLOAT), Placeholder(s, DT_FLOAT), {1, 2, 1, 1},
                             "SAME");
  EXPECT_THAT(s.status().message(), HasSubstr("strides must be equal along rows and columns"));
  Output back = ops::DepthwiseConv2dNativeBackpropInput(s_, {1, 3, 3, 2}, w_, x_, {1, 1, 1, 1},
                                                        "VALID");
  st = TryEval(s_, {{x_, Doubles({1, 3, 3, 2}, 1)}, {w_, Doubles({2, 2, 2, 1}, 2)}}, back).status();
  EXPECT_THAT(st.message(), HasSubstr("out_backprop must have shape [1,2,2,2]"));
}

}  // namespace
}  // namespace sluice
