// LRN and LRNGrad: values against TensorFlow's formula written out by hand
// (tensorflow/python/kernel_tests/lrn_op_test.py compares the kernel with
// the same loop; testGradientsZeroInput: zero input gives a gradient of
// bias^-beta), bad inputs, and the gradient by central differences (float
// only, as TensorFlow registers LRN on the CPU).
#include "ops/nn/lrn_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
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

// The TensorFlow formula, element by element.
std::vector<float> Reference(const std::vector<float>& x, int64_t depth, const ops::LRNAttrs& a) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t d = static_cast<int64_t>(i) % depth, row = static_cast<int64_t>(i) - d;
    double sum = 0;
    for (int64_t j = std::max<int64_t>(0, d - a.depth_radius);
         j <= std::min<int64_t>(depth - 1, d + a.depth_radius); ++j) {
      sum += double{x[row + j]} * x[row + j];
    }
    y[i] = static_cast<float>(x[i] / std::pow(a.bias + a.alpha * sum, a.beta));
  }
  return y;
}

TEST(LrnTest, MatchesTheFormula) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  std::vector<float> v(2 * 2 * 1 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.9f * i) * 2;
  for (const ops::LRNAttrs& a : {ops::LRNAttrs{}, ops::LRNAttrs{2, 0.5f, 0.3f, 0.75f},
                                 ops::LRNAttrs{0, 2.0f, 1e-4f, 0.75f}}) {
    ExpectTensor<float>(Eval(s, {{x, Make<float>(v, {2, 2, 1, 7})}}, ops::LRN(s, x, a)),
                        {2, 2, 1, 7}, Reference(v, 7, a), 1e-6);
  }
  ExpectTensor<float>(Eval(s, {{x, Make<float>({}, {0, 2, 2, 3})}}, ops::LRN(s, x)), {0, 2, 2, 3},
                      {});
}

TEST(LrnTest, ZeroInputGradientIsBiasToTheMinusBeta) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  Output y = ops::LRN(s, x, {.depth_radius = 1, .bias = 4.0f, .alpha = 1.0f, .beta = 0.5f});
  absl::StatusOr<std::vector<Output>> dx = AddGradients(s, {y}, {x});
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectTensor<float>(Eval(s, {{x, Make<float>(std::vector<float>(8, 0), {1, 2, 1, 4})}}, (*dx)[0]),
                      {1, 2, 1, 4}, std::vector<float>(8, 0.5f));
}

TEST(LrnTest, Gradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  std::vector<float> v(2 * 1 * 2 * 6);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(1.1f * i);
  for (const ops::LRNAttrs& a : {ops::LRNAttrs{2, 1.0f, 0.5f, 0.75f}, ops::LRNAttrs{1, 0.5f, 2.0f, 0.5f}}) {
    absl::StatusOr<double> err =
        MaxGradientError(s, {x}, {Make<float>(v, {2, 1, 2, 6})}, ops::LRN(s, x, a), 1e-2);
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 2e-3);
  }
}

TEST(LrnTest, BadInputs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_FLOAT);
  absl::Status st = TryEval(s, {{x, Make<float>({1, 2}, {2})}}, ops::LRN(s, x)).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("4-D"));
  Output y = Placeholder(s, DT_FLOAT);
  Output g = ops::LRNGrad(s, x, x, y);
  st = TryEval(s, {{x, Make<float>({1, 2}, {1, 1, 1, 2})}, {y, Make<float>({1}, {1, 1, 1, 1})}}, g)
           .status();
  EXPECT_THAT(st.message(), HasSubstr("one shape"));
  Scope t = Scope::NewRootScope(BuiltinOps());
  ops::LRN(t, Placeholder(t, DT_DOUBLE));
  EXPECT_FALSE(t.ok());
}

}  // namespace
}  // namespace sluice
