// Pad, PadV2, ReverseV2, SplitV, ShapeN, OneHot, Where, Cumsum, Cumprod,
// All, Any, Assert and CheckNumerics: the examples of TensorFlow's API
// documentation for each (tf.pad, tf.reverse, tf.split, tf.one_hot,
// tf.where, tf.math.cumsum, tf.math.cumprod, tf.reduce_all/any), edge cases
// (empty, rank 0, negative axes, integer types), bad inputs, and gradients
// by central differences.
#include "ops/array/array_layout_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/check_ops.h"
#include "ops/math/math_ops.h"
#include "ops/math/scan_ops.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Feeds;
using testing_util::GradError;
using testing_util::Make;
using testing_util::Placeholder;
using testing_util::TryEval;

class ArrayLayoutTest : public ::testing::Test {
 protected:
  std::string ErrorOf(const Feeds& feeds, const Output& y) {
    absl::Status s = TryEval(s_, feeds, y).status();
    EXPECT_FALSE(s.ok());
    return std::string(s.message());
  }
  Scope s_ = Scope::NewRootScope(BuiltinOps());
};

TEST_F(ArrayLayoutTest, Pad) {
  Output t = Placeholder(s_, DT_INT32);
  Feeds f = {{t, Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}};
  Output paddings = ops::Const(s_, Make<int32_t>({1, 1, 2, 2}, {2, 2}));
  ExpectTensor<int32_t>(Eval(s_, f, ops::Pad(s_, t, paddings)), {4, 7},
                        {0, 0, 0, 0, 0, 0, 0,  //
                         0, 0, 1, 2, 3, 0, 0,  //
                         0, 0, 4, 5, 6, 0, 0,  //
                         0, 0, 0, 0, 0, 0, 0});
  Output v = ops::PadV2(s_, t, ops::Const(s_, Make<int64_t>({0, 1, 1, 0}, {2, 2})), 9);
  ExpectTensor<int32_t>(Eval(s_, f, v), {3, 4}, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
  // Shapes known when the paddings are constants.
  Output known = ops::Pad(s_, Placeholder(s_, DT_FLOAT, TensorShape({2, -1})), paddings);
  EXPECT_EQ(known.node->output_shape(0), TensorShape({4, -1}));
  // Rank 0 and empty.
  Output scalar = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{scalar, Make<float>({2}, {})}},
                           ops::Pad(s_, scalar, ops::Const(s_, Make<int32_t>({}, {0, 2})))),
                      {}, {2});
  ExpectTensor<float>(Eval(s_, {{scalar, Make<float>({}, {0})}},
                           ops::Pad(s_, scalar, ops::Const(s_, Make<int32_t>({1, 2}, {1, 2})))),
                      {3}, {0, 0, 0});
  // Bad paddings.
  Output p = Placeholder(s_, DT_INT32);
  EXPECT_NE(ErrorOf({{t, Make<int32_t>({1, 2}, {2})}, {p, Make<int32_t>({-1, 0}, {1, 2})}},
                    ops::Pad(s_, t, p))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{t, Make<int32_t>({1, 2}, {2})}, {p, Make<int32_t>({0, 0, 0, 0}, {2, 2})}},
                    ops::Pad(s_, t, p))
                .find("[rank, 2]"),
            std::string::npos);
}

TEST_F(ArrayLayoutTest, ReverseV2) {
  Output t = Placeholder(s_, DT_FLOAT);
  Feeds f = {{t, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}};
  ExpectTensor<float>(Eval(s_, f, ops::ReverseV2(s_, t, {1})), {2, 3}, {3, 2, 1, 6, 5, 4});
  ExpectTensor<float>(Eval(s_, f, ops::ReverseV2(s_, t, {-2})), {2, 3}, {4, 5, 6, 1, 2, 3});
  ExpectTensor<float>(Eval(s_, f, ops::ReverseV2(s_, t, {0, 1})), {2, 3}, {6, 5, 4, 3, 2, 1});
  ExpectTensor<float>(Eval(s_, f, ops::ReverseV2(s_, t, ops::Const(s_, std::vector<int32_t>{}))),
                      {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(ErrorOf(f, ops::ReverseV2(s_, t, {1, -1})).find("more than once"), std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::ReverseV2(s_, t, {2})).find("out of range"), std::string::npos);
}

TEST_F(ArrayLayoutTest, Tf1ReverseTakesOneBoolPerDimension) {
  Output t = Placeholder(s_, DT_FLOAT);
  Feeds f = {{t, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}};
  Output dims = ops::Const(s_, Tensor::FromVector<bool>({true, false}));
  ExpectTensor<float>(Eval(s_, f, ops::Reverse(s_, t, dims)), {2, 3}, {4, 5, 6, 1, 2, 3});
  EXPECT_NE(ErrorOf(f, ops::Reverse(s_, t, ops::Const(s_, Tensor::FromVector<bool>({true}))))
                .find("same number of values as 'input' has dimensions (2)"),
            std::string::npos);
}

TEST_F(ArrayLayoutTest, TensorDiagAndDiagPart) {
  Output d = Placeholder(s_, DT_INT32);
  Output full = ops::Diag(s_, d);
  ExpectTensor<int32_t>(Eval(s_, {{d, Make<int32_t>({1, 2, 3, 4}, {2, 2})}}, full), {2, 2, 2, 2},
                        {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4});
  ExpectTensor<int32_t>(Eval(s_, {{d, Make<int32_t>({1, 2, 3, 4}, {2, 2})}}, ops::DiagPart(s_, full)),
                        {2, 2}, {1, 2, 3, 4});
  Output m = Placeholder(s_, DT_INT32);
  EXPECT_NE(ErrorOf({{m, Make<int32_t>({1, 2, 3}, {3})}}, ops::DiagPart(s_, m)).find("even"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{m, Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}}, ops::DiagPart(s_, m))
                .find("do not match"),
            std::string::npos);
}

TEST_F(ArrayLayoutTest, SplitV) {
  Output x = Placeholder(s_, DT_INT64);
  Feeds f = {{x, Make<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5})}};
  std::vector<Output> parts = ops::SplitV(s_, x, {1, -1, 2}, -1, 3);
  ExpectTensor<int64_t>(Eval(s_, f, parts[0]), {2, 1}, {0, 5});
  ExpectTensor<int64_t>(Eval(s_, f, parts[1]), {2, 2}, {1, 2, 6, 7});
  ExpectTensor<int64_t>(Eval(s_, f, parts[2]), {2, 2}, {3, 4, 8, 9});
  std::vector<Output> rows = ops::SplitV(s_, x, ops::Const(s_, Make<int32_t>({2, 0}, {2})), 0, 2);
  ExpectTensor<int64_t>(Eval(s_, f, rows[1]), {0, 5}, {});
  EXPECT_NE(ErrorOf(f, ops::SplitV(s_, x, {1, 1}, 1, 2)[0]).find("add up"), std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::SplitV(s_, x, {-1, -1}, 1, 2)[0]).find("only one"), std::string::npos);
}

TEST_F(ArrayLayoutTest, ShapeN) {
  Output a = Placeholder(s_, DT_FLOAT);
  Output b = Placeholder(s_, DT_FLOAT);
  Feeds f = {{a, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}, {b, Make<float>({7}, {})}};
  std::vector<Output> shapes = ops::ShapeN(s_, {a, b});
  ExpectTensor<int32_t>(Eval(s_, f, shapes[0]), {2}, {2, 3});
  ExpectTensor<int32_t>(Eval(s_, f, shapes[1]), {0}, {});
}

TEST_F(ArrayLayoutTest, OneHot) {
  Output i = Placeholder(s_, DT_INT32);
  Feeds f = {{i, Make<int32_t>({0, 2, -1, 1}, {4})}};
  ExpectTensor<float>(Eval(s_, f, ops::OneHot(s_, i, 3, 5.0f, 0.0f)), {4, 3},
                      {5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0});
  ExpectTensor<float>(Eval(s_, f, ops::OneHot(s_, i, 3, 5.0f, 0.0f, {.axis = 0})), {3, 4},
                      {5, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0, 0});
  Output i64 = Placeholder(s_, DT_INT64);
  ExpectTensor<int32_t>(Eval(s_, {{i64, Make<int64_t>({1, 0, 3}, {3, 1})}},
                             ops::OneHot(s_, i64, 2, 1, 0)),
                        {3, 1, 2}, {0, 1, 1, 0, 0, 0});
  Output on_vector = ops::OneHot(s_, i, 3, ops::Const(s_, Make<float>({1, 1}, {2})), 0.0f);
  EXPECT_NE(ErrorOf(f, on_vector).find("scalars"), std::string::npos);
  ops::OneHot(s_, i, 3, 1.0f, 0.0f, {.axis = -2});
  EXPECT_FALSE(s_.ok());
}

TEST_F(ArrayLayoutTest, Where) {
  Output b = Placeholder(s_, DT_BOOL);
  ExpectTensor<int64_t>(Eval(s_, {{b, Make<bool>({true, false, false, true}, {2, 2})}}, ops::Where(s_, b)),
                        {2, 2}, {0, 0, 1, 1});
  Output x = Placeholder(s_, DT_FLOAT);
  ExpectTensor<int64_t>(Eval(s_, {{x, Make<float>({0, -0.0f, 3, 0, 2}, {5})}}, ops::Where(s_, x)),
                        {2, 1}, {2, 4});
  ExpectTensor<int64_t>(Eval(s_, {{x, Make<float>({}, {0, 3})}}, ops::Where(s_, x)), {0, 2}, {});
}

TEST_F(ArrayLayoutTest, CumsumAndCumprod) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({2, 3, 5}, {3})}};
  ExpectTensor<double>(Eval(s_, f, ops::Cumsum(s_, x, 0)), {3}, {2, 5, 10});
  ExpectTensor<double>(Eval(s_, f, ops::Cumsum(s_, x, 0, {.exclusive = true})), {3}, {0, 2, 5});
  ExpectTensor<double>(Eval(s_, f, ops::Cumsum(s_, x, 0, {.reverse = true})), {3}, {10, 8, 5});
  ExpectTensor<double>(Eval(s_, f, ops::Cumsum(s_, x, 0, {.exclusive = true, .reverse = true})),
                       {3}, {8, 5, 0});
  ExpectTensor<double>(Eval(s_, f, ops::Cumprod(s_, x, 0)), {3}, {2, 6, 30});
  ExpectTensor<double>(Eval(s_, f, ops::Cumprod(s_, x, 0, {.exclusive = true})), {3}, {1, 2, 6});
  ExpectTensor<double>(Eval(s_, f, ops::Cumprod(s_, x, 0, {.reverse = true})), {3}, {30, 15, 5});
  Output m = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(Eval(s_, {{m, Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}}, ops::Cumsum(s_, m, -1)),
                        {2, 3}, {1, 3, 6, 4, 9, 15});
  ExpectTensor<int32_t>(Eval(s_, {{m, Make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})}}, ops::Cumsum(s_, m, 0)),
                        {2, 3}, {1, 2, 3, 5, 7, 9});
  EXPECT_NE(ErrorOf(f, ops::Cumsum(s_, x, 1)).find("out of range"), std::string::npos);
  EXPECT_NE(ErrorOf(f, ops::Cumsum(s_, x, {0})).find("scalar"), std::string::npos);
}

TEST_F(ArrayLayoutTest, AllAndAny) {
  Output b = Placeholder(s_, DT_BOOL);
  Feeds f = {{b, Make<bool>({true, true, false, false}, {2, 2})}};
  ExpectTensor<bool>(Eval(s_, f, ops::All(s_, b, 0)), {2}, {false, false});
  ExpectTensor<bool>(Eval(s_, f, ops::All(s_, b, 1)), {2}, {true, false});
  ExpectTensor<bool>(Eval(s_, f, ops::Any(s_, b, 1)), {2}, {true, false});
  ExpectTensor<bool>(Eval(s_, f, ops::Any(s_, b, {0, 1})), {}, {true});
  ExpectTensor<bool>(Eval(s_, f, ops::All(s_, b, -1, {.keep_dims = true})), {2, 1}, {true, false});
  ExpectTensor<bool>(Eval(s_, {{b, Make<bool>({}, {0})}}, ops::All(s_, b, 0)), {}, {true});
  ExpectTensor<bool>(Eval(s_, {{b, Make<bool>({}, {0})}}, ops::Any(s_, b, 0)), {}, {false});
}

TEST_F(ArrayLayoutTest, AssertAndCheckNumerics) {
  Output x = Placeholder(s_, DT_FLOAT);
  Node* check = ops::Assert(s_, ops::Less(s_, ops::Max(s_, x, 0), 10.0f),
                            {Input("x too big:"), x}, /*summarize=*/2);
  Output after = ops::Identity(s_.WithControlDependencies(std::vector<Node*>{check}), x);
  ExpectTensor<float>(Eval(s_, {{x, Make<float>({1, 2}, {2})}}, after), {2}, {1, 2});
  EXPECT_NE(ErrorOf({{x, Make<float>({12, 2, 3}, {3})}}, after)
                .find("assertion failed: [x too big:] [12 2...]"),
            std::string::npos);
  Output checked = ops::CheckNumerics(s_, x, "logits");
  ExpectTensor<float>(Eval(s_, {{x, Make<float>({1, 2}, {2})}}, checked), {2}, {1, 2});
  EXPECT_NE(ErrorOf({{x, Make<float>({1, NAN}, {2})}}, checked).find("logits : Tensor had NaN values"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{x, Make<float>({INFINITY, NAN}, {2})}}, checked)
                .find("logits : Tensor had Inf and NaN values"),
            std::string::npos);
  Output v2 = s_.Op("CheckNumericsV2", std::source_location::current())
                  .Input(x)
                  .Attr("message", std::string("h"))
                  .Finalize1();
  EXPECT_NE(ErrorOf({{x, Make<float>({-INFINITY, INFINITY, NAN}, {3})}}, v2)
                .find("h : Tensor had -Inf and +Inf and NaN values"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{x, Make<float>({1, INFINITY}, {2})}}, v2).find("Tensor had +Inf values"),
            std::string::npos);
}

// tf.nn.space_to_depth's documented example: [1, 2, 2, 1] with block 2
// becomes [1, 1, 1, 4]; [1, 4, 4, 1] becomes [1, 2, 2, 4] with each 2x2
// block's pixels in row-major order; depth_to_space undoes it.
TEST_F(ArrayLayoutTest, SpaceToDepthAndBack) {
  Output x = Placeholder(s_, DT_INT32);
  std::vector<int32_t> v(16);
  for (int i = 0; i < 16; ++i) v[i] = i + 1;
  Feeds f = {{x, Make<int32_t>(v, {1, 4, 4, 1})}};
  Output d = ops::SpaceToDepth(s_, x, 2);
  ExpectTensor<int32_t>(Eval(s_, f, d), {1, 2, 2, 4},
                        {1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16});
  ExpectTensor<int32_t>(Eval(s_, f, ops::DepthToSpace(s_, d, 2)), {1, 4, 4, 1}, v);
  // Channels move together: [1, 2, 2, 3] -> [1, 1, 1, 12].
  Output c = Placeholder(s_, DT_FLOAT);
  std::vector<float> cv(12);
  for (int i = 0; i < 12; ++i) cv[i] = i;
  ExpectTensor<float>(Eval(s_, {{c, Make<float>(cv, {1, 2, 2, 3})}}, ops::SpaceToDepth(s_, c, 2)),
                      {1, 1, 1, 12}, cv);
  EXPECT_NE(ErrorOf({{x, Make<int32_t>({1, 2, 3}, {1, 3, 1, 1})}}, ops::SpaceToDepth(s_, x, 2))
                .find("divisible"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{x, Make<int32_t>({1, 2, 3}, {1, 1, 1, 3})}}, ops::DepthToSpace(s_, x, 2))
                .find("divisible"),
            std::string::npos);
}

TEST_F(ArrayLayoutTest, MatrixDiagAndDiagPart) {
  Output d = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{d, Make<float>({1, 2, 3, 4}, {2, 2})}}, ops::MatrixDiag(s_, d)),
                      {2, 2, 2}, {1, 0, 0, 2, 3, 0, 0, 4});
  Output m = Placeholder(s_, DT_INT64);
  ExpectTensor<int64_t>(Eval(s_, {{m, Make<int64_t>({1, 2, 3, 4, 5, 6}, {2, 3})}}, ops::MatrixDiagPart(s_, m)),
                        {2}, {1, 5});
  ExpectTensor<int64_t>(Eval(s_, {{m, Make<int64_t>({}, {2, 0, 3})}}, ops::MatrixDiagPart(s_, m)),
                        {2, 0}, {});
  EXPECT_NE(ErrorOf({{d, Make<float>({1}, {})}}, ops::MatrixDiag(s_, d)).find("at least 1-D"),
            std::string::npos);
}

TEST_F(ArrayLayoutTest, Gradients) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds m = {{x, Make<double>({0.5, -1.5, 2.0, 0.1, 0.3, -0.7}, {2, 3})}};
  EXPECT_LT(GradError(s_, m, ops::Pad(s_, x, ops::Const(s_, Make<int32_t>({1, 0, 2, 1}, {2, 2})))),
            1e-6);
  EXPECT_LT(GradError(s_, m, ops::PadV2(s_, x, ops::Const(s_, Make<int64_t>({0, 1, 1, 1}, {2, 2})),
                                        3.0)),
            1e-6);
  EXPECT_LT(GradError(s_, m, ops::ReverseV2(s_, ops::Square(s_, x), {0, -1})), 1e-6);
  std::vector<Output> parts = ops::SplitV(s_, x, {1, 2}, 1, 2);
  EXPECT_LT(GradError(s_, m, ops::Mul(s_, parts[1], 3.0)), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::ConcatV2(s_, {parts[1], ops::Square(s_, parts[0])}, 1)), 1e-6);
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      ops::ScanAttrs a{.exclusive = exclusive, .reverse = reverse};
      EXPECT_LT(GradError(s_, m, ops::Cumsum(s_, x, 1, a)), 1e-6) << exclusive << reverse;
      EXPECT_LT(GradError(s_, m, ops::Cumprod(s_, x, 1, a)), 1e-6) << exclusive << reverse;
      EXPECT_LT(GradError(s_, m, ops::Cumprod(s_, x, 0, a)), 1e-6) << exclusive << reverse;
    }
  }
  EXPECT_LT(GradError(s_, m, ops::CheckNumerics(s_, ops::Square(s_, x), "sq")), 1e-6);
  Output img = Placeholder(s_, DT_DOUBLE, TensorShape({1, 2, 4, 2}));
  std::vector<double> iv(16);
  for (int i = 0; i < 16; ++i) iv[i] = std::sin(0.3 * i);
  Feeds im = {{img, Make<double>(iv, {1, 2, 4, 2})}};
  EXPECT_LT(GradError(s_, im, ops::Square(s_, ops::SpaceToDepth(s_, img, 2))), 1e-6);
  Output deep = Placeholder(s_, DT_DOUBLE, TensorShape({1, 1, 2, 8}));
  EXPECT_LT(GradError(s_, {{deep, Make<double>(iv, {1, 1, 2, 8})}},
                      ops::DepthToSpace(s_, ops::Square(s_, deep), 2)),
            1e-6);
  Output sq = Placeholder(s_, DT_DOUBLE, TensorShape({2, 2, 2}));
  Feeds sqf = {{sq, Make<double>({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, {2, 2, 2})}};
  EXPECT_LT(GradError(s_, sqf, ops::Square(s_, ops::MatrixDiagPart(s_, sq))), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::MatrixDiag(s_, ops::Square(s_, x))), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::Diag(s_, ops::Square(s_, x))), 1e-6);
  EXPECT_LT(GradError(s_, m, ops::Reverse(s_, ops::Square(s_, x),
                                          ops::Const(s_, Tensor::FromVector<bool>({true, true})))),
            1e-6);
  Output sq4 = Placeholder(s_, DT_DOUBLE, TensorShape({2, 2}));
  EXPECT_LT(GradError(s_, {{sq4, Make<double>({0.1, 0.2, 0.3, 0.4}, {2, 2})}},
                      ops::Square(s_, ops::DiagPart(s_, sq4))),
            1e-6);
}

}  // namespace
}  // namespace sluice
