// ApproximateEqual, Cross and AccumulateNV2 on known values, their
// gradients by finite differences, and mismatched shapes.
#include "ops/math/compat_math_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

TEST(CompatMathOpsTest, ApproximateEqual) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output z = ops::ApproximateEqual(s, ops::Const(s, {1.0f, 2.0f, 3.0f}),
                                   ops::Const(s, {1.05f, 2.5f, 2.99f}), 0.1f);
  ExpectTensor<bool>(Eval(s, {}, z), {3}, {true, false, true});
  absl::Status bad = TryEval(s, {}, ops::ApproximateEqual(s, ops::Const(s, {1.0f}),
                                                          ops::Const(s, {1.0f, 2.0f})))
                         .status();
  EXPECT_NE(bad.message().find("same shape"), std::string::npos) << bad;
}

TEST(CompatMathOpsTest, CrossAndItsGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output c = ops::Cross(s, ops::Const(s, Make<int32_t>({1, 0, 0, 1, 2, 3}, {2, 3})),
                        ops::Const(s, Make<int32_t>({0, 1, 0, 4, 5, 6}, {2, 3})));
  ExpectTensor<int32_t>(Eval(s, {}, c), {2, 3}, {0, 0, 1, -3, 6, -3});
  Output a = Placeholder(s, DT_DOUBLE, TensorShape({2, 3}));
  Output b = Placeholder(s, DT_DOUBLE, TensorShape({2, 3}));
  testing_util::Feeds f = {{a, Make<double>({0.1, -0.4, 0.9, 1.2, 0.3, -0.5}, {2, 3})},
                           {b, Make<double>({0.7, 0.2, -0.3, -1.1, 0.6, 0.8}, {2, 3})}};
  EXPECT_LT(GradError(s, f, ops::Cross(s, a, b)), 1e-6);
  absl::Status bad = TryEval(s, {}, ops::Cross(s, ops::Const(s, {1.0f, 2.0f}),
                                               ops::Const(s, {1.0f, 2.0f})))
                         .status();
  EXPECT_NE(bad.message().find("last dimension must be 3"), std::string::npos) << bad;
}

TEST(CompatMathOpsTest, AccumulateNV2SumsAndPassesTheGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({2}));
  Output sum = ops::AccumulateNV2(s, {x, ops::Square(s, x), ops::Const(s, {1.0, 2.0})});
  testing_util::Feeds f = {{x, Make<double>({3, -1}, {2})}};
  ExpectTensor<double>(Eval(s, f, sum), {2}, {13, 2});
  EXPECT_LT(GradError(s, f, sum), 1e-6);
}

TEST(CompatMathOpsTest, NextAfterAndItsGradient) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Tensor t = Eval(s, {}, ops::NextAfter(s, ops::Const(s, {1.0f, 1.0f, 0.0f}), ops::Const(s, {2.0f, 0.0f, -1.0f})));
  EXPECT_EQ(t.flat<float>()[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(t.flat<float>()[1], std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(t.flat<float>()[2], -std::numeric_limits<float>::denorm_min());
  // Broadcasting; d/dx1 is 1 (summed over the broadcast), d/dx2 is 0.
  Output x1 = Placeholder(s, DT_DOUBLE);
  Output x2 = Placeholder(s, DT_DOUBLE);
  Output y = ops::NextAfter(s, x1, x2);
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {ops::Sum(s, y, ops::Const(s, std::vector<int32_t>{0, 1}))}, {x1, x2});
  ASSERT_TRUE(g.ok()) << g.status();
  testing_util::Feeds f = {{x1, Make<double>({0.5, -2}, {2, 1})}, {x2, Make<double>({1, 2, 3}, {3})}};
  ExpectTensor<double>(Eval(s, f, (*g)[0]), {2, 1}, {3, 3});
  ExpectTensor<double>(Eval(s, f, (*g)[1]), {3}, {0, 0, 0});
}

}  // namespace
}  // namespace sluice
