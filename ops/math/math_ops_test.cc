#include "ops/math/math_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;  // NOLINT: test helpers
// ---------------------------------------------------------------------------
// Registration.

TEST(MathOpsRegistrationTest, EveryOpHasACpuKernelAndShapeFn) {
  OpRegistry ops;
  ASSERT_TRUE(RegisterMathOps(&ops).ok());
  KernelRegistry kernels;
  RegisterMathKernels(&kernels);
  for (const std::string& op : ops.ListOps()) {
    // EuclideanNorm is lowered (composite_ops.h), in the builtin registry.
    if (op != "EuclideanNorm") EXPECT_TRUE(kernels.HasKernelsFor(op, kDeviceTypeCpu)) << op;
    EXPECT_TRUE(static_cast<bool>(ops.Find(op)->shape_fn)) << op;
  }
  EXPECT_EQ(RegisterMathOps(&ops).code(), absl::StatusCode::kAlreadyExists);
}

TEST(MathOpsRegistrationTest, GradientsRegistered) {
  const OpRegistry* ops = BuiltinOps();
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
                         "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid",
                         "Reciprocal", "Abs", "TanhGrad", "SigmoidGrad", "SqrtGrad",
                         "RsqrtGrad", "ReciprocalGrad", "Select", "SelectV2", "AddN", "Cast",
                         "Sum", "Mean", "Max", "Min", "Prod", "MatMul"}) {
    ASSERT_NE(ops->Find(op), nullptr) << op;
    EXPECT_TRUE(static_cast<bool>(ops->Find(op)->grad_fn)) << op;
  }
  for (const char* op : {"Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
                         "ArgMax", "Sign", "FloorDiv"}) {
    ASSERT_NE(ops->Find(op), nullptr) << op;
    EXPECT_TRUE(ops->Find(op)->no_gradient) << op;
  }
}

// ---------------------------------------------------------------------------
// Binary element-wise ops.

TEST_F(MathOpsTest, ArithmeticSameShape) {
  Output x = Placeholder(s_, DT_FLOAT);
  Output y = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({1, -2, 3, 4}, {2, 2})}, {y, Make<float>({2, 4, -1, 0.5}, {2, 2})}};
  ExpectTensor<float>(Eval(s_, f, ops::Add(s_, x, y)), {2, 2}, {3, 2, 2, 4.5});
  ExpectTensor<float>(Eval(s_, f, ops::AddV2(s_, x, y)), {2, 2}, {3, 2, 2, 4.5});
  ExpectTensor<float>(Eval(s_, f, ops::Sub(s_, x, y)), {2, 2}, {-1, -6, 4, 3.5});
  ExpectTensor<float>(Eval(s_, f, ops::Mul(s_, x, y)), {2, 2}, {2, -8, -3, 2});
  ExpectTensor<float>(Eval(s_, f, ops::RealDiv(s_, x, y)), {2, 2}, {0.5, -0.5, -3, 8});
  ExpectTensor<float>(Eval(s_, f, ops::Maximum(s_, x, y)), {2, 2}, {2, 4, 3, 4});
  ExpectTensor<float>(Eval(s_, f, ops::Minimum(s_, x, y)), {2, 2}, {1, -2, -1, 0.5});
  ExpectTensor<float>(Eval(s_, f, ops::Pow(s_, x, y)), {2, 2}, {1, 16, 1.0f / 3, 2}, 1e-5);
}

TEST_F(MathOpsTest, BroadcastShapes) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Output y = Placeholder(s_, DT_DOUBLE);
  Tensor m = Make<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  // Row vector over a matrix, both ways round.
  ExpectTensor<double>(Eval(s_, {{x, m}, {y, Make<double>({10, 20, 30}, {3})}}, ops::Add(s_, x, y)),
                       {2, 3}, {11, 22, 33, 14, 25, 36});
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({10, 20, 30}, {3})}, {y, m}}, ops::Sub(s_, x, y)),
                       {2, 3}, {9, 18, 27, 6, 15, 24});
  // Column vector.
  ExpectTensor<double>(Eval(s_, {{x, m}, {y, Make<double>({10, 100}, {2, 1})}}, ops::Mul(s_, x, y)),
                       {2, 3}, {10, 20, 30, 400, 500, 600});
  // Scalars on either side, including a rank-1 single element.
  ExpectTensor<double>(Eval(s_, {{x, m}, {y, Tensor::Scalar<double>(2)}}, ops::RealDiv(s_, x, y)),
                       {2, 3}, {0.5, 1, 1.5, 2, 2.5, 3});
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({12}, {1})}, {y, m}}, ops::RealDiv(s_, x, y)),
                       {2, 3}, {12, 6, 4, 3, 2.4, 2});
  // A one-element operand of higher rank raises the output rank.
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({1, 2}, {2})}, {y, Make<double>({5}, {1, 1})}},
                            ops::Add(s_, x, y)),
                       {1, 2}, {6, 7});
  // Both operands broadcast: [2,1,3] + [4,1] -> [2,4,3].
  std::vector<double> expected;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 4; ++b) {
      for (int c = 0; c < 3; ++c) expected.push_back((a * 3 + c) + 100.0 * b);
    }
  }
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({0, 1, 2, 3, 4, 5}, {2, 1, 3})},
                                 {y, Make<double>({0, 100, 200, 300}, {4, 1})}},
                            ops::Add(s_, x, y)),
                       {2, 4, 3}, expected);
  // Empty output.
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({}, {0, 3})}, {y, Make<double>({1, 2, 3}, {3})}},
                            ops::Add(s_, x, y)),
                       {0, 3}, {});
}

TEST_F(MathOpsTest, IntegerArithmetic) {
  Output x = Placeholder(s_, DT_INT32);
  Output y = Placeholder(s_, DT_INT32);
  Feeds f = {{x, Make<int32_t>({2, -3, 4}, {3})}, {y, Make<int32_t>({3, 2, 0}, {3})}};
  ExpectTensor<int32_t>(Eval(s_, f, ops::Add(s_, x, y)), {3}, {5, -1, 4});
  ExpectTensor<int32_t>(Eval(s_, f, ops::Mul(s_, x, y)), {3}, {6, -6, 0});
  ExpectTensor<int32_t>(Eval(s_, f, ops::Pow(s_, x, y)), {3}, {8, 9, 1});
  ExpectTensor<int32_t>(Eval(s_, f, ops::Maximum(s_, x, y)), {3}, {3, 2, 4});
  Output a = Placeholder(s_, DT_INT64);
  ExpectTensor<int64_t>(Eval(s_, {{a, Make<int64_t>({1, 2}, {2})}}, ops::Sub(s_, a, int64_t{5})),
                        {2}, {-4, -3});
}

// TensorFlow's values: tf.raw_ops.Mod, TruncateMod, tf.math.multiply_no_nan.
TEST_F(MathOpsTest, ModTruncateModAndMulNoNan) {
  Output x = Placeholder(s_, DT_INT32);
  Output y = Placeholder(s_, DT_INT32);
  const Feeds ints = {{x, Make<int32_t>({7, -7, 7, -7, INT32_MIN}, {5})},
                      {y, Make<int32_t>({3, 3, -3, -3, -1}, {5})}};
  ExpectTensor<int32_t>(Eval(s_, ints, ops::Mod(s_, x, y)), {5}, {1, -1, 1, -1, 0});
  ExpectTensor<int32_t>(Eval(s_, ints, ops::TruncateMod(s_, x, y)), {5}, {1, -1, 1, -1, 0});
  absl::StatusOr<Tensor> r = TryEval(
      s_, {{x, Make<int32_t>({7}, {1})}, {y, Make<int32_t>({0}, {1})}}, ops::Mod(s_, x, y));
  EXPECT_THAT(r.status().message(), HasSubstr("Integer division by zero"));
  Output f = Placeholder(s_, DT_FLOAT);
  Output g = Placeholder(s_, DT_FLOAT);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectTensor<float>(Eval(s_, {{f, Make<float>({7.5f, -7.5f, 1.0f}, {3})},
                                {g, Make<float>({2, 2, 0}, {3})}},
                           ops::TruncateMod(s_, f, g)),
                      {3}, {1.5f, -1.5f, nan});
  ExpectTensor<float>(Eval(s_, {{f, Make<float>({inf, nan, 2}, {3})},
                                {g, Make<float>({0, 0, 3}, {3})}},
                           ops::MulNoNan(s_, f, g)),
                      {3}, {0, 0, 6});
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_DOUBLE, TensorShape({2, 3}));
  Output b = Placeholder(s, DT_DOUBLE, TensorShape({3}));
  EXPECT_LT(GradError(s, {{a, Make<double>({1, -2, 3, 0.5, 4, -1}, {2, 3})},
                          {b, Make<double>({0.5, 2, -3}, {3})}},
                      ops::MulNoNan(s, a, b)),
            1e-8);
}

TEST_F(MathOpsTest, FloorDiv) {
  Output x = Placeholder(s_, DT_INT32);
  Output y = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(
      Eval(s_, {{x, Make<int32_t>({7, -7, 7, -7, 6, INT32_MIN}, {6})},
                {y, Make<int32_t>({2, 2, -2, -2, 3, -1}, {6})}},
           ops::FloorDiv(s_, x, y)),
      {6}, {3, -4, -4, 3, 2, INT32_MIN});
  absl::StatusOr<Tensor> r =
      TryEval(s_, {{x, Make<int32_t>({1, 2}, {2})}, {y, Make<int32_t>({1, 0}, {2})}},
              ops::FloorDiv(s_, x, y));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Integer division by zero"));
  Output f = Placeholder(s_, DT_DOUBLE);
  ExpectTensor<double>(Eval(s_, {{f, Make<double>({7, -7, 0.5}, {3})}}, ops::FloorDiv(s_, f, 2.0)),
                       {3}, {3, -4, 0});
}

TEST_F(MathOpsTest, LargeBroadcastUsesAllPaths) {
  // Large enough to be split across the thread pool.
  const int64_t rows = 300, cols = 500;
  Output x = Placeholder(s_, DT_FLOAT);
  Output y = Placeholder(s_, DT_FLOAT);
  std::vector<float> xv(rows * cols), yv(cols);
  for (int64_t i = 0; i < rows * cols; ++i) xv[i] = static_cast<float>(i % 97);
  for (int64_t j = 0; j < cols; ++j) yv[j] = static_cast<float>(j);
  Tensor out = Eval(s_, {{x, Make<float>(xv, {rows, cols})}, {y, Make<float>(yv, {cols})}},
                    ops::Mul(s_, x, y));
  ASSERT_EQ(out.shape(), TensorShape({rows, cols}));
  for (int64_t i = 0; i < rows * cols; i += 997) {
    EXPECT_EQ(out.flat<float>()[i], xv[i] * yv[i % cols]) << i;
  }
  Tensor same = Eval(s_, {{x, Make<float>(xv, {rows, cols})}, {y, Make<float>(xv, {rows, cols})}},
                     ops::Sub(s_, x, y));
  for (float v : same.flat<float>()) ASSERT_EQ(v, 0.0f);
}

TEST_F(MathOpsTest, Comparisons) {
  Output x = Placeholder(s_, DT_FLOAT);
  Output y = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({1, 2, 3}, {3})}, {y, Tensor::Scalar<float>(2)}};
  ExpectTensor<bool>(Eval(s_, f, ops::Equal(s_, x, y)), {3}, {false, true, false});
  ExpectTensor<bool>(Eval(s_, f, ops::NotEqual(s_, x, y)), {3}, {true, false, true});
  ExpectTensor<bool>(Eval(s_, f, ops::Greater(s_, x, y)), {3}, {false, false, true});
  ExpectTensor<bool>(Eval(s_, f, ops::GreaterEqual(s_, x, y)), {3}, {false, true, true});
  ExpectTensor<bool>(Eval(s_, f, ops::Less(s_, x, y)), {3}, {true, false, false});
  ExpectTensor<bool>(Eval(s_, f, ops::LessEqual(s_, x, y)), {3}, {true, true, false});
  Output i = Placeholder(s_, DT_INT64);
  ExpectTensor<bool>(Eval(s_, {{i, Make<int64_t>({4, 5, 6, 7}, {2, 2})}},
                          ops::Less(s_, i, Literal(Make<int64_t>({5, 7}, {2})))),
                     {2, 2}, {true, true, false, false});
  Output b = Placeholder(s_, DT_BOOL);
  ExpectTensor<bool>(Eval(s_, {{b, Make<bool>({true, false}, {2})}}, ops::Equal(s_, b, true)),
                     {2}, {true, false});
}

TEST_F(MathOpsTest, BinaryShapeErrors) {
  Output x = Placeholder(s_, DT_FLOAT, TensorShape({2, 3}));
  Output y = Placeholder(s_, DT_FLOAT, TensorShape({4}));
  ops::Add(s_, x, y);
  ASSERT_FALSE(s_.ok());
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("[2,3]"));
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("[4]"));
}

TEST_F(MathOpsTest, BinaryRuntimeShapeError) {
  Output x = Placeholder(s_, DT_FLOAT);
  Output y = Placeholder(s_, DT_FLOAT);
  absl::StatusOr<Tensor> r = TryEval(
      s_, {{x, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}, {y, Make<float>({1, 2}, {2})}},
      ops::Mul(s_, x, y));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Incompatible shapes: [2,3] vs. [2]"));
}

// ---------------------------------------------------------------------------
// Unary ops and gradient helpers.

std::vector<double> ExpectedOf(const Tensor& t) {
  absl::Span<double> v = t.flat<double>();
  return std::vector<double>(v.begin(), v.end());
}

TEST_F(MathOpsTest, UnaryValues) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({-2, 0.5, 4}, {3})}};
  ExpectTensor<double>(Eval(s_, f, ops::Neg(s_, x)), {3}, {2, -0.5, -4});
  ExpectTensor<double>(Eval(s_, f, ops::Square(s_, x)), {3}, {4, 0.25, 16});
  ExpectTensor<double>(Eval(s_, f, ops::Abs(s_, x)), {3}, {2, 0.5, 4});
  // -0.0 loses its sign (TensorFlow's fabs), in the vector loop and the tail.
  for (DataType type : {DT_FLOAT, DT_DOUBLE}) {
    Output z = Placeholder(s_, type);
    Tensor zeros(type, TensorShape({19}));
    for (int64_t k = 0; k < 19; ++k) {
      if (type == DT_FLOAT) zeros.data<float>()[k] = -0.0f;
      if (type == DT_DOUBLE) zeros.data<double>()[k] = -0.0;
    }
    const Tensor out = Eval(s_, {{z, zeros}}, ops::Abs(s_, z));
    for (int64_t k = 0; k < 19; ++k) {
      const double v = type == DT_FLOAT ? out.data<float>()[k] : out.data<double>()[k];
      EXPECT_FALSE(std::signbit(v)) << DataTypeName(type) << " element " << k;
    }
  }
  ExpectTensor<double>(Eval(s_, f, ops::Sign(s_, x)), {3}, {-1, 1, 1});
  ExpectTensor<double>(Eval(s_, f, ops::Reciprocal(s_, x)), {3}, {-0.5, 2, 0.25});
  ExpectTensor<double>(Eval(s_, f, ops::Exp(s_, x)), {3},
                       {std::exp(-2.0), std::exp(0.5), std::exp(4.0)});
  ExpectTensor<double>(Eval(s_, f, ops::Tanh(s_, x)), {3},
                       {std::tanh(-2.0), std::tanh(0.5), std::tanh(4.0)});
  ExpectTensor<double>(Eval(s_, f, ops::Sigmoid(s_, x)), {3},
                       {1 / (1 + std::exp(2.0)), 1 / (1 + std::exp(-0.5)),
                        1 / (1 + std::exp(-4.0))});
  Feeds pos = {{x, Make<double>({0.25, 1, 4}, {3})}};
  ExpectTensor<double>(Eval(s_, pos, ops::Sqrt(s_, x)), {3}, {0.5, 1, 2});
  ExpectTensor<double>(Eval(s_, pos, ops::Rsqrt(s_, x)), {3}, {2, 1, 0.5});
  ExpectTensor<double>(Eval(s_, pos, ops::Log(s_, x)), {3}, {std::log(0.25), 0, std::log(4.0)});
  Output i = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(Eval(s_, {{i, Make<int32_t>({-3, 0, 5}, {3})}}, ops::Sign(s_, i)), {3},
                        {-1, 0, 1});
  ExpectTensor<int32_t>(Eval(s_, {{i, Make<int32_t>({-3, 0, 5}, {3})}}, ops::Abs(s_, i)), {3},
                        {3, 0, 5});
  Output fl = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{fl, Make<float>({-1, 1}, {1, 2})}}, ops::Tanh(s_, fl)), {1, 2},
                      {std::tanh(-1.0f), std::tanh(1.0f)});
}

// TensorFlow's documented values: Round halves to even; Floor and Ceil of
// negative halves; erf/erfc from tables; softplus stable at both ends.
// Values from TensorFlow's documentation of tf.range and its
// sequence_ops_test: a half-open sequence, a negative delta, a float delta
// that does not divide the span (ceil), an empty range.
// linspace_op_test.py: both ends included, the last exactly stop.
TEST_F(MathOpsTest, LinSpace) {
  ExpectTensor<float>(Eval(s_, {}, ops::LinSpace(s_, 10.0f, 12.0f, 3)), {3}, {10, 11, 12});
  ExpectTensor<double>(Eval(s_, {}, ops::LinSpace(s_, 0.0, -1.0, int64_t{5})), {5},
                       {0, -0.25, -0.5, -0.75, -1});
  ExpectTensor<float>(Eval(s_, {}, ops::LinSpace(s_, 5.0f, 9.0f, 1)), {1}, {5});
  const std::vector<double> tenth =
      ExpectedOf(Eval(s_, {}, ops::LinSpace(s_, 0.0, 0.3, 4)));
  EXPECT_EQ(tenth[3], 0.3);
  EXPECT_EQ(ops::LinSpace(s_, 0.0f, 1.0f, 7).node->output_shape(0), TensorShape({7}));
  Output num = Placeholder(s_, DT_INT32);
  absl::Status bad = TryEval(s_, {{num, Make<int32_t>({0}, {})}}, ops::LinSpace(s_, 0.0f, 1.0f, num))
                         .status();
  EXPECT_TRUE(absl::StrContains(bad.message(), "num must be positive, got 0")) << bad;
}

TEST_F(MathOpsTest, Range) {
  ExpectTensor<int32_t>(Eval(s_, {}, ops::Range(s_, 3, 18, 3)), {5}, {3, 6, 9, 12, 15});
  ExpectTensor<int32_t>(Eval(s_, {}, ops::Range(s_, 3, 1, -1)), {2}, {3, 2});
  ExpectTensor<int64_t>(Eval(s_, {}, ops::Range(s_, int64_t{0}, int64_t{5}, int64_t{2})), {3},
                        {0, 2, 4});
  ExpectTensor<float>(Eval(s_, {}, ops::Range(s_, 3.0f, 1.0f, -0.5f)), {4}, {3, 2.5, 2, 1.5});
  ExpectTensor<double>(Eval(s_, {}, ops::Range(s_, 0.0, 1.0, 0.3)), {4}, {0, 0.3, 0.6, 0.9});
  ExpectTensor<int32_t>(Eval(s_, {}, ops::Range(s_, 4, 4, 1)), {0}, {});
  // Shapes are known at build time from constants.
  Output r = ops::Range(s_, 0, 10, 3);
  EXPECT_EQ(r.node->output_shape(0), TensorShape({4}));
  // Run-time limits: the shape is a vector of unknown length.
  Output limit = Placeholder(s_, DT_INT32);
  Output dynamic = ops::Range(s_, 0, limit, 1);
  EXPECT_EQ(dynamic.node->output_shape(0), TensorShape({TensorShape::kUnknownDim}));
  ExpectTensor<int32_t>(Eval(s_, {{limit, Make<int32_t>({3}, {})}}, dynamic), {3}, {0, 1, 2});
  // Bad inputs, each a clear error.
  absl::Status zero = TryEval(s_, {{limit, Make<int32_t>({3}, {})}}, ops::Range(s_, 0, limit, 0)).status();
  EXPECT_NE(zero.message().find("delta must not be 0"), std::string::npos) << zero;
  absl::Status backwards =
      TryEval(s_, {{limit, Make<int32_t>({-3}, {})}}, ops::Range(s_, 0, limit, 1)).status();
  EXPECT_NE(backwards.message().find("must be <= limit"), std::string::npos) << backwards;
  absl::Status vector = TryEval(s_, {{limit, Make<int32_t>({3, 4}, {2})}}, dynamic).status();
  EXPECT_NE(vector.message().find("scalar"), std::string::npos) << vector;
  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::Range(bad, 5, 1, 1);
  EXPECT_FALSE(bad.ok());
}

// TensorFlow's documented semantics: FloorMod's remainder takes the
// divisor's sign (Python's %); TruncateDiv and the legacy Div round integer
// quotients toward zero (C's /, what TensorFlow's Div kernel does);
// DivNoNan gives 0 where the divisor is 0.
TEST_F(MathOpsTest, DivisionFamilies) {
  Output x = Placeholder(s_, DT_INT32);
  Output y = Placeholder(s_, DT_INT32);
  Feeds f = {{x, Make<int32_t>({7, -7, 7, -7, 0}, {5})}, {y, Make<int32_t>({2, 2, -2, -2, 3}, {5})}};
  ExpectTensor<int32_t>(Eval(s_, f, ops::FloorMod(s_, x, y)), {5}, {1, 1, -1, -1, 0});
  ExpectTensor<int32_t>(Eval(s_, f, ops::TruncateDiv(s_, x, y)), {5}, {3, -3, -3, 3, 0});
  ExpectTensor<int32_t>(Eval(s_, f, ops::Div(s_, x, y)), {5}, {3, -3, -3, 3, 0});
  Feeds by_zero = {{x, Make<int32_t>({1}, {1})}, {y, Make<int32_t>({0}, {1})}};
  for (Output o : {ops::FloorMod(s_, x, y), ops::TruncateDiv(s_, x, y), ops::Div(s_, x, y)}) {
    absl::Status st = TryEval(s_, by_zero, o).status();
    EXPECT_NE(st.message().find("division by zero"), std::string::npos) << st;
  }
  Output a = Placeholder(s_, DT_DOUBLE);
  Output b = Placeholder(s_, DT_DOUBLE);
  Feeds d = {{a, Make<double>({5.5, -5.5, 5.5, -5.5, 1}, {5})}, {b, Make<double>({2, 2, -2, -2, 0}, {5})}};
  ExpectTensor<double>(Eval(s_, d, ops::FloorMod(s_, a, b)), {5}, {1.5, 0.5, -0.5, -1.5, NAN});
  ExpectTensor<double>(Eval(s_, d, ops::DivNoNan(s_, a, b)), {5}, {2.75, -2.75, -2.75, 2.75, 0});
  ExpectTensor<double>(Eval(s_, d, ops::Div(s_, a, b)), {5}, {2.75, -2.75, -2.75, 2.75, INFINITY});
  // SquaredDifference broadcasts; Inv is Reciprocal.
  Feeds sq = {{a, Make<double>({1, 2, 3, 4}, {2, 2})}, {b, Make<double>({1, -1}, {2})}};
  ExpectTensor<double>(Eval(s_, sq, ops::SquaredDifference(s_, a, b)), {2, 2}, {0, 9, 4, 25});
  ExpectTensor<double>(Eval(s_, {{a, Make<double>({2, -4}, {2})}}, ops::Inv(s_, a)), {2}, {0.5, -0.25});
  ExpectTensor<int32_t>(Eval(s_, {{x, Make<int32_t>({3, -4}, {2})}, {y, Make<int32_t>({5}, {})}},
                             ops::SquaredDifference(s_, x, y)),
                        {2}, {4, 81});
}

TEST_F(MathOpsTest, NanInfAndFinite) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({NAN, INFINITY, -INFINITY, 1, 0}, {5})}};
  ExpectTensor<bool>(Eval(s_, f, ops::IsNan(s_, x)), {5}, {true, false, false, false, false});
  ExpectTensor<bool>(Eval(s_, f, ops::IsInf(s_, x)), {5}, {false, true, true, false, false});
  ExpectTensor<bool>(Eval(s_, f, ops::IsFinite(s_, x)), {5}, {false, false, false, true, true});
  ExpectTensor<bool>(Eval(s_, {{x, Make<float>({}, {0})}}, ops::IsNan(s_, x)), {0}, {});
}

TEST_F(MathOpsTest, ClipByValue) {
  Output t = Placeholder(s_, DT_FLOAT);
  Feeds f = {{t, Make<float>({-2, 0.5, 3}, {3})}};
  ExpectTensor<float>(Eval(s_, f, ops::ClipByValue(s_, t, -1.0f, 1.0f)), {3}, {-1, 0.5, 1});
  Output lo = Placeholder(s_, DT_FLOAT);
  Feeds per = {{t, Make<float>({-2, 0.5, 3}, {3})}, {lo, Make<float>({-3, 0.7, 0}, {3})}};
  ExpectTensor<float>(Eval(s_, per, ops::ClipByValue(s_, t, lo, 2.0f)), {3}, {-2, 0.7, 2});
  Output n = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(Eval(s_, {{n, Make<int32_t>({-5, 5}, {2})}}, ops::ClipByValue(s_, n, 0, 3)),
                        {2}, {0, 3});
  Feeds bad = {{t, Make<float>({-2, 0.5, 3}, {3})}, {lo, Make<float>({0, 0}, {2})}};
  absl::Status st = TryEval(s_, bad, ops::ClipByValue(s_, t, lo, 2.0f)).status();
  EXPECT_NE(st.message().find("clip_value_min must be a scalar"), std::string::npos) << st;
}

TEST_F(MathOpsTest, LogicalOpsBroadcast) {
  Output a = Placeholder(s_, DT_BOOL);
  Output b = Placeholder(s_, DT_BOOL);
  Feeds f = {{a, Make<bool>({true, true, false, false}, {2, 2})}, {b, Make<bool>({true, false}, {2})}};
  ExpectTensor<bool>(Eval(s_, f, ops::LogicalAnd(s_, a, b)), {2, 2}, {true, false, false, false});
  ExpectTensor<bool>(Eval(s_, f, ops::LogicalOr(s_, a, b)), {2, 2}, {true, true, true, false});
  ExpectTensor<bool>(Eval(s_, f, ops::LogicalNot(s_, a)), {2, 2}, {false, false, true, true});
  ExpectTensor<bool>(Eval(s_, {{a, Make<bool>({true}, {})}}, ops::LogicalAnd(s_, a, false)), {}, {false});
  Feeds mismatched = {{a, Make<bool>({true, true, false}, {3})}, {b, Make<bool>({true, false}, {2})}};
  EXPECT_FALSE(TryEval(s_, mismatched, ops::LogicalOr(s_, a, b)).ok());
  // Only bools: a float operand is refused when the graph is built.
  Scope bad = Scope::NewRootScope(BuiltinOps());
  ops::LogicalNot(bad, Placeholder(bad, DT_FLOAT));
  EXPECT_FALSE(bad.ok());
}

TEST_F(MathOpsTest, RoundingAndSpecialFunctions) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds halves = {{x, Make<double>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6}, {7})}};
  ExpectTensor<double>(Eval(s_, halves, ops::Round(s_, x)), {7}, {-2, -2, -0, 0, 2, 2, 3});
  ExpectTensor<double>(Eval(s_, halves, ops::Floor(s_, x)), {7}, {-3, -2, -1, 0, 1, 2, 2});
  ExpectTensor<double>(Eval(s_, halves, ops::Ceil(s_, x)), {7}, {-2, -1, -0, 1, 2, 3, 3});
  Feeds f = {{x, Make<double>({1e-10, 0.5, -0.5}, {3})}};
  const std::vector<double> log1p = ExpectedOf(Eval(s_, f, ops::Log1p(s_, x)));
  EXPECT_DOUBLE_EQ(log1p[0], 9.9999999995e-11);  // log(1 + x) ~ x - x^2/2, not 0
  EXPECT_NEAR(log1p[1], 0.4054651081081644, 1e-15);
  const std::vector<double> expm1 = ExpectedOf(Eval(s_, f, ops::Expm1(s_, x)));
  EXPECT_DOUBLE_EQ(expm1[0], 1.00000000005e-10);
  EXPECT_NEAR(expm1[2], -0.3934693402873666, 1e-15);
  const std::vector<double> erf = ExpectedOf(Eval(s_, f, ops::Erf(s_, x)));
  EXPECT_NEAR(erf[1], 0.5204998778130465, 1e-15);
  EXPECT_NEAR(erf[2], -0.5204998778130465, 1e-15);
  const std::vector<double> erfc = ExpectedOf(Eval(s_, f, ops::Erfc(s_, x)));
  EXPECT_NEAR(erfc[1], 0.4795001221869535, 1e-15);
  const std::vector<double> sin = ExpectedOf(Eval(s_, f, ops::Sin(s_, x)));
  EXPECT_NEAR(sin[1], 0.479425538604203, 1e-15);
  EXPECT_NEAR(sin[2], -0.479425538604203, 1e-15);
  const std::vector<double> cos = ExpectedOf(Eval(s_, f, ops::Cos(s_, x)));
  EXPECT_NEAR(cos[0], 1.0, 1e-15);
  EXPECT_NEAR(cos[2], 0.8775825618903728, 1e-15);
  Feeds ends = {{x, Make<double>({-800, 0, 1, 800}, {4})}};
  const std::vector<double> sp = ExpectedOf(Eval(s_, ends, ops::Softplus(s_, x)));
  EXPECT_EQ(sp[0], 0);  // e^-800 underflows; no inf, no nan
  EXPECT_NEAR(sp[1], std::log(2.0), 1e-15);
  EXPECT_NEAR(sp[2], 1.3132616875182228, 1e-15);
  EXPECT_EQ(sp[3], 800);
  ExpectTensor<double>(Eval(s_, ends, ops::Softsign(s_, x)), {4},
                       {-800.0 / 801, 0, 0.5, 800.0 / 801});
  // float, rank 0 and empty tensors too.
  Output fl = Placeholder(s_, DT_FLOAT);
  ExpectTensor<float>(Eval(s_, {{fl, Make<float>({2.5f}, {})}}, ops::Round(s_, fl)), {}, {2});
  ExpectTensor<float>(Eval(s_, {{fl, Make<float>({}, {0, 3})}}, ops::Erf(s_, fl)), {0, 3}, {});
}

// The other trigonometric and hyperbolic functions, Rint, Atan2's
// quadrants, and Xlogy/Xdivy/Xlog1py's 0 where x is 0 (even at y = 0).
TEST_F(MathOpsTest, TrigonometryAtan2AndXlogy) {
  Output x = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{x, Make<double>({0.5, -0.25}, {2})}};
  const struct {
    const char* name;
    Output (*fn)(const Scope&, Input, std::source_location);
    double want[2];
  } unary[] = {
      {"Tan", ops::Tan, {0.5463024898437905, -0.25534192122103627}},
      {"Sinh", ops::Sinh, {0.5210953054937474, -0.25261231680816831}},
      {"Cosh", ops::Cosh, {1.1276259652063807, 1.0314130998795732}},
      {"Asin", ops::Asin, {0.5235987755982989, -0.25268025514207865}},
      {"Acos", ops::Acos, {1.0471975511965979, 1.8234765819369754}},
      {"Atan", ops::Atan, {0.4636476090008061, -0.24497866312686414}},
      {"Asinh", ops::Asinh, {0.48121182505960347, -0.24746646154726346}},
      {"Atanh", ops::Atanh, {0.5493061443340549, -0.25541281188299536}},
  };
  for (const auto& u : unary) {
    const std::vector<double> got = ExpectedOf(Eval(s_, f, u.fn(s_, x, std::source_location::current())));
    EXPECT_NEAR(got[0], u.want[0], 1e-15) << u.name;
    EXPECT_NEAR(got[1], u.want[1], 1e-15) << u.name;
  }
  EXPECT_NEAR(ExpectedOf(Eval(s_, {{x, Make<double>({2}, {1})}}, ops::Acosh(s_, x)))[0],
              1.3169578969248166, 1e-15);
  Feeds halves = {{x, Make<double>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6}, {7})}};
  ExpectTensor<double>(Eval(s_, halves, ops::Rint(s_, x)), {7}, {-2, -2, -0, 0, 2, 2, 3});
  // atan2(y, x) in each quadrant, and on the axes.
  Output y = Placeholder(s_, DT_DOUBLE);
  Feeds q = {{y, Make<double>({1, 1, -1, -1, 0, 1}, {6})}, {x, Make<double>({1, -1, -1, 1, -1, 0}, {6})}};
  const double pi = 3.141592653589793;
  const std::vector<double> angle = ExpectedOf(Eval(s_, q, ops::Atan2(s_, y, x)));
  const std::vector<double> want = {pi / 4, 3 * pi / 4, -3 * pi / 4, -pi / 4, pi, pi / 2};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(angle[i], want[i], 1e-15) << i;
  Feeds xy = {{x, Make<double>({0, 0, 2, 3}, {4})}, {y, Make<double>({0, 5, 4, -0.5}, {4})}};
  const std::vector<double> xlogy = ExpectedOf(Eval(s_, xy, ops::Xlogy(s_, x, y)));
  EXPECT_EQ(xlogy[0], 0);  // 0 log 0
  EXPECT_EQ(xlogy[1], 0);
  EXPECT_NEAR(xlogy[2], 2 * std::log(4.0), 1e-15);
  EXPECT_TRUE(std::isnan(xlogy[3]));  // 3 log(-0.5)
  ExpectTensor<double>(Eval(s_, xy, ops::Xdivy(s_, x, y)), {4}, {0, 0, 0.5, -6});
  ExpectTensor<double>(Eval(s_, xy, ops::Xlog1py(s_, x, y)), {4},
                       {0, 0, 2 * std::log1p(4.0), 3 * std::log1p(-0.5)});
}

TEST_F(MathOpsTest, FloatExpTanhSigmoidAccuracy) {
  std::vector<float> xs;
  for (int i = -20000; i <= 20000; ++i) xs.push_back(static_cast<float>(i) * 0.0047f);
  for (float v : {1e-6f, -1e-6f, 0.624f, 0.626f, -0.626f, 30.0f, -30.0f, 87.0f, -87.0f, 88.7f,
                  -87.3f, -87.34f, 88.72f, 88.73f, 89.0f, -88.0f, -100.0f, -103.9f, -104.1f,
                  1000.0f, -1000.0f}) {
    xs.push_back(v);
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>(xs, {n})}};
  Tensor e = Eval(s_, f, ops::Exp(s_, x));
  Tensor t = Eval(s_, f, ops::Tanh(s_, x));
  Tensor g = Eval(s_, f, ops::Sigmoid(s_, x));
  ASSERT_EQ(e.NumElements(), n);
  ASSERT_EQ(t.NumElements(), n);
  ASSERT_EQ(g.NumElements(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double v = xs[i];
    const double want_e = std::exp(v);
    if (want_e > 3.4e38) {
      EXPECT_TRUE(std::isinf(e.flat<float>()[i])) << v;
    } else if (want_e < 1.2e-38) {
      EXPECT_NEAR(e.flat<float>()[i], want_e, 1e-44) << v;
    } else {
      EXPECT_NEAR(e.flat<float>()[i] / want_e, 1.0, 3e-7) << v;
    }
    EXPECT_NEAR(t.flat<float>()[i], std::tanh(v), 3e-7 * std::max(1e-3, std::fabs(std::tanh(v))))
        << v;
    EXPECT_NEAR(g.flat<float>()[i], 1 / (1 + std::exp(-v)), 3e-7) << v;
  }
  Feeds special = {{x, Make<float>({INFINITY, -INFINITY, NAN}, {3})}};
  ExpectTensor<float>(Eval(s_, special, ops::Exp(s_, x)), {3}, {INFINITY, 0, NAN});
  ExpectTensor<float>(Eval(s_, special, ops::Tanh(s_, x)), {3}, {1, -1, NAN});
  ExpectTensor<float>(Eval(s_, special, ops::Sigmoid(s_, x)), {3}, {1, 0, NAN});
}

TEST_F(MathOpsTest, GradientHelperValues) {
  Output y = Placeholder(s_, DT_DOUBLE);
  Output dy = Placeholder(s_, DT_DOUBLE);
  Feeds f = {{y, Make<double>({0.5, 2}, {2})}, {dy, Make<double>({3, -1}, {2})}};
  ExpectTensor<double>(Eval(s_, f, ops::TanhGrad(s_, y, dy)), {2}, {3 * 0.75, -1 * -3.0});
  ExpectTensor<double>(Eval(s_, f, ops::SigmoidGrad(s_, y, dy)), {2}, {3 * 0.25, -1 * -2.0});
  ExpectTensor<double>(Eval(s_, f, ops::SqrtGrad(s_, y, dy)), {2}, {3.0, -0.25});
  ExpectTensor<double>(Eval(s_, f, ops::RsqrtGrad(s_, y, dy)), {2}, {3 * -0.0625, 4.0});
  ExpectTensor<double>(Eval(s_, f, ops::ReciprocalGrad(s_, y, dy)), {2}, {-0.75, 4.0});
  // InvGrad: ReciprocalGrad's first name, its values and its gradient.
  Output inv_grad = s_.Op("InvGrad").Input(y).Input(dy).Finalize1();
  ExpectTensor<double>(Eval(s_, f, inv_grad), {2}, {-0.75, 4.0});
  EXPECT_LT(GradError(s_, f, inv_grad), 1e-6);
}

// ---------------------------------------------------------------------------
// Select, AddN, Cast.

TEST_F(MathOpsTest, Select) {
  Output c = Placeholder(s_, DT_BOOL);
  Output t = Placeholder(s_, DT_FLOAT);
  Output e = Placeholder(s_, DT_FLOAT);
  Tensor tv = Make<float>({1, 2, 3, 4}, {2, 2});
  Tensor ev = Make<float>({-1, -2, -3, -4}, {2, 2});
  ExpectTensor<float>(
      Eval(s_, {{c, Make<bool>({true, false, false, true}, {2, 2})}, {t, tv}, {e, ev}},
           ops::Select(s_, c, t, e)),
      {2, 2}, {1, -2, -3, 4});
  ExpectTensor<float>(Eval(s_, {{c, Make<bool>({false, true}, {2})}, {t, tv}, {e, ev}},
                           ops::Select(s_, c, t, e)),
                      {2, 2}, {-1, -2, 3, 4});
  ExpectTensor<float>(Eval(s_, {{c, Tensor::Scalar<bool>(false)}, {t, tv}, {e, ev}},
                           ops::Select(s_, c, t, e)),
                      {2, 2}, {-1, -2, -3, -4});
  absl::StatusOr<Tensor> bad = TryEval(
      s_, {{c, Make<bool>({true, false, true}, {3})}, {t, tv}, {e, ev}}, ops::Select(s_, c, t, e));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("condition of shape [3]"));
}

TEST_F(MathOpsTest, SelectV2Broadcasts) {
  Output c = Placeholder(s_, DT_BOOL);
  Output t = Placeholder(s_, DT_DOUBLE);
  ExpectTensor<double>(Eval(s_, {{c, Make<bool>({true, false, true}, {3})},
                                 {t, Make<double>({1, 2, 3, 4, 5, 6}, {2, 3})}},
                            ops::SelectV2(s_, c, t, 0.0)),
                       {2, 3}, {1, 0, 3, 4, 0, 6});
  ExpectTensor<double>(Eval(s_, {{c, Make<bool>({false, true}, {2, 1})},
                                 {t, Make<double>({1, 2, 3}, {3})}},
                            ops::SelectV2(s_, c, t, -1.0)),
                       {2, 3}, {-1, -1, -1, 1, 2, 3});
  absl::StatusOr<Tensor> bad =
      TryEval(s_, {{c, Make<bool>({true, false}, {2})}, {t, Make<double>({1, 2, 3}, {3})}},
              ops::SelectV2(s_, c, t, 0.0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("Incompatible shapes"));
}

TEST_F(MathOpsTest, AddN) {
  Output a = Placeholder(s_, DT_FLOAT);
  Output b = Placeholder(s_, DT_FLOAT);
  Output c = Placeholder(s_, DT_FLOAT);
  Feeds f = {{a, Make<float>({1, 2}, {2})}, {b, Make<float>({10, 20}, {2})},
             {c, Make<float>({100, 200}, {2})}};
  ExpectTensor<float>(Eval(s_, f, ops::AddN(s_, {a, b, c})), {2}, {111, 222});
  ExpectTensor<float>(Eval(s_, f, ops::AddN(s_, {a})), {2}, {1, 2});
  absl::StatusOr<Tensor> bad =
      TryEval(s_, {{a, Make<float>({1, 2}, {2})}, {b, Make<float>({1, 2, 3}, {3})}},
              ops::AddN(s_, {a, b}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("same shape"));
}

TEST_F(MathOpsTest, Cast) {
  Output f = Placeholder(s_, DT_FLOAT);
  Feeds fv = {{f, Make<float>({2.7f, -2.7f, 0, 300}, {4})}};
  ExpectTensor<int32_t>(Eval(s_, fv, ops::Cast(s_, f, DT_INT32)), {4}, {2, -2, 0, 300});
  ExpectTensor<int64_t>(Eval(s_, fv, ops::Cast(s_, f, DT_INT64)), {4}, {2, -2, 0, 300});
  ExpectTensor<bool>(Eval(s_, fv, ops::Cast(s_, f, DT_BOOL)), {4}, {true, true, false, true});
  ExpectTensor<double>(Eval(s_, fv, ops::Cast(s_, f, DT_DOUBLE)), {4},
                       {2.7f, -2.7f, 0, 300});
  ExpectTensor<float>(Eval(s_, fv, ops::Cast(s_, f, DT_FLOAT)), {4}, {2.7f, -2.7f, 0, 300});
  ExpectTensor<uint8_t>(Eval(s_, fv, ops::Cast(s_, f, DT_UINT8)), {4}, {2, 0, 0, 255});
  Output b = Placeholder(s_, DT_BOOL);
  ExpectTensor<float>(Eval(s_, {{b, Make<bool>({true, false}, {2})}}, ops::Cast(s_, b, DT_FLOAT)),
                      {2}, {1, 0});
  Output i8 = Placeholder(s_, DT_INT8);
  ExpectTensor<int32_t>(Eval(s_, {{i8, Make<int8_t>({-5, 7}, {2})}}, ops::Cast(s_, i8, DT_INT32)),
                        {2}, {-5, 7});
  ExpectTensor<int64_t>(Eval(s_, {{i8, Make<int8_t>({-5, 7}, {2})}},
                             ops::Cast(s_, ops::Cast(s_, i8, DT_UINT8), DT_INT64)),
                        {2}, {251, 7});
}

TEST_F(MathOpsTest, CastsOfSixteenBitTypes) {
  Output f = Placeholder(s_, DT_FLOAT);
  Feeds fv = {{f, Make<float>({2.7f, -70000, 0.1f, 1e-8f}, {4})}};
  // To half and back: rounded to 11 bits, -inf beyond its range, denormals kept.
  Output h = ops::Cast(s_, f, DT_HALF);
  ExpectTensor<float>(Eval(s_, fv, ops::Cast(s_, h, DT_FLOAT)), {4},
                      {2.69921875f, -INFINITY, 0.0999755859375f, 0});
  ExpectTensor<double>(Eval(s_, fv, ops::Cast(s_, h, DT_DOUBLE)), {4},
                       {2.69921875, -INFINITY, 0.0999755859375, 0}, 1e-7);
  ExpectTensor<int32_t>(Eval(s_, fv, ops::Cast(s_, h, DT_INT32)), {4},
                        {2, std::numeric_limits<int32_t>::lowest(), 0, 0});
  ExpectTensor<int16_t>(Eval(s_, fv, ops::Cast(s_, f, DT_INT16)), {4}, {2, -32768, 0, 0});
  ExpectTensor<bool>(Eval(s_, fv, ops::Cast(s_, h, DT_BOOL)), {4}, {true, true, true, false});
  // Half to bfloat16 and integers to both.
  ExpectTensor<float>(
      Eval(s_, fv, ops::Cast(s_, ops::Cast(s_, h, DT_BFLOAT16), DT_FLOAT)), {4},
      {2.703125f, -INFINITY, 0.10009765625f, 0});
  Output i = Placeholder(s_, DT_INT64);
  ExpectTensor<float>(Eval(s_, {{i, Make<int64_t>({2049, -3}, {2})}},
                           ops::Cast(s_, ops::Cast(s_, i, DT_HALF), DT_FLOAT)),
                      {2}, {2048, -3});
  ExpectTensor<double>(Eval(s_, {{i, Make<int64_t>({257, -3}, {2})}},
                            ops::Cast(s_, ops::Cast(s_, i, DT_BFLOAT16), DT_DOUBLE)),
                       {2}, {256, -3});
}

// ---------------------------------------------------------------------------
// Reductions.

TEST_F(MathOpsTest, SumAxes) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}};
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, {0, 1})), {}, {21});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, 0)), {3}, {5, 7, 9});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, 1)), {2}, {6, 15});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, -1)), {2}, {6, 15});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, {1}, {.keep_dims = true})), {2, 1}, {6, 15});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, {0, 1}, {.keep_dims = true})), {1, 1}, {21});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, Literal(Make<int32_t>({}, {0})))), {2, 3},
                      {1, 2, 3, 4, 5, 6});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, int64_t{1})), {2}, {6, 15});
  ExpectTensor<float>(Eval(s_, f, ops::Sum(s_, x, {1, -1})), {2}, {6, 15});
}

TEST_F(MathOpsTest, SumGeneralAndLarge) {
  Output x = Placeholder(s_, DT_DOUBLE);
  std::vector<double> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  Feeds f = {{x, Make<double>(v, {2, 3, 4})}};
  // Middle axis: [2,4].
  std::vector<double> mid;
  for (int a = 0; a < 2; ++a) {
    for (int c = 0; c < 4; ++c) mid.push_back(v[a * 12 + c] + v[a * 12 + 4 + c] + v[a * 12 + 8 + c]);
  }
  ExpectTensor<double>(Eval(s_, f, ops::Sum(s_, x, 1)), {2, 4}, mid);
  // Outer and inner axes: [3].
  std::vector<double> outer_inner(3, 0);
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) outer_inner[b] += v[a * 12 + b * 4 + c];
    }
  }
  ExpectTensor<double>(Eval(s_, f, ops::Sum(s_, x, {0, 2})), {3}, outer_inner);
  // Size-1 dimensions are skipped: [2,1,3] over axis 1 is a reshape.
  ExpectTensor<double>(Eval(s_, {{x, Make<double>({1, 2, 3, 4, 5, 6}, {2, 1, 3})}},
                            ops::Sum(s_, x, 1)),
                       {2, 3}, {1, 2, 3, 4, 5, 6});

  // Large: every fast path on the pool.
  Output y = Placeholder(s_, DT_FLOAT);
  const int64_t rows = 513, cols = 300;
  std::vector<float> big(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) big[i] = static_cast<float>(i % 7);
  Feeds g = {{y, Make<float>(big, {rows, cols})}};
  std::vector<float> col_sums(cols, 0), row_sums(rows, 0);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      col_sums[c] += big[r * cols + c];
      row_sums[r] += big[r * cols + c];
      total += big[r * cols + c];
    }
  }
  ExpectTensor<float>(Eval(s_, g, ops::Sum(s_, y, 0)), {cols}, col_sums);
  ExpectTensor<float>(Eval(s_, g, ops::Sum(s_, y, 1)), {rows}, row_sums);
  ExpectTensor<float>(Eval(s_, g, ops::Sum(s_, y, {0, 1})), {}, {static_cast<float>(total)});
}

TEST_F(MathOpsTest, MeanMaxMinProd) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({1, 5, 3, -4, 2, 8}, {2, 3})}};
  ExpectTensor<float>(Eval(s_, f, ops::Mean(s_, x, 1)), {2}, {3, 2});
  ExpectTensor<float>(Eval(s_, f, ops::Mean(s_, x, {0, 1})), {}, {2.5});
  ExpectTensor<float>(Eval(s_, f, ops::Max(s_, x, 1)), {2}, {5, 8});
  ExpectTensor<float>(Eval(s_, f, ops::Max(s_, x, 0)), {3}, {1, 5, 8});
  ExpectTensor<float>(Eval(s_, f, ops::Min(s_, x, 0)), {3}, {-4, 2, 3});
  ExpectTensor<float>(Eval(s_, f, ops::Min(s_, x, {0, 1}, {.keep_dims = true})), {1, 1}, {-4});
  ExpectTensor<float>(Eval(s_, f, ops::Prod(s_, x, 1)), {2}, {15, -64});
  ExpectTensor<float>(Eval(s_, f, ops::Prod(s_, x, 0)), {3}, {-4, 10, 24});
  Output i = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(Eval(s_, {{i, Make<int32_t>({1, 2, 4, 7}, {2, 2})}}, ops::Mean(s_, i, 1)),
                        {2}, {1, 5});
  // Reducing an empty dimension gives the identity (NaN for Mean).
  Feeds empty = {{x, Make<float>({}, {2, 0})}};
  ExpectTensor<float>(Eval(s_, empty, ops::Sum(s_, x, 1)), {2}, {0, 0});
  ExpectTensor<float>(Eval(s_, empty, ops::Prod(s_, x, 1)), {2}, {1, 1});
  ExpectTensor<float>(Eval(s_, empty, ops::Mean(s_, x, 1)), {2}, {NAN, NAN});
  ExpectTensor<float>(Eval(s_, empty, ops::Max(s_, x, 1)), {2}, {-INFINITY, -INFINITY});
}

TEST_F(MathOpsTest, ReductionAxisErrors) {
  Output x = Placeholder(s_, DT_FLOAT, TensorShape({2, 3}));
  ops::Sum(s_, x, 2);
  ASSERT_FALSE(s_.ok());
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("axis 2 is out of range"));

  Scope s = Scope::NewRootScope(BuiltinOps());
  Output y = Placeholder(s, DT_FLOAT);
  Output axis = Placeholder(s, DT_INT32);
  absl::StatusOr<Tensor> r = TryEval(
      s, {{y, Make<float>({1, 2}, {2})}, {axis, Tensor::Scalar<int32_t>(-2)}}, ops::Max(s, y, axis));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Invalid reduction dimension -2"));
}

TEST_F(MathOpsTest, ReductionShapeInference) {
  Output x = Placeholder(s_, DT_FLOAT, TensorShape({-1, 4, 5}));
  EXPECT_EQ(ops::Sum(s_, x, {0, 2}).shape(), TensorShape({4}));
  EXPECT_EQ(ops::Mean(s_, x, -1, {.keep_dims = true}).shape(), TensorShape({-1, 4, 1}));
  Output axes = Placeholder(s_, DT_INT32);
  EXPECT_EQ(ops::Max(s_, x, axes, {.keep_dims = true}).shape(), TensorShape::UnknownOfRank(3));
  EXPECT_EQ(ops::ArgMax(s_, x, 1).shape(), TensorShape({-1, 5}));
  EXPECT_EQ(ops::MatMul(s_, Placeholder(s_, DT_FLOAT, TensorShape({-1, 3})),
                        Placeholder(s_, DT_FLOAT, TensorShape({3, 7})))
                .shape(),
            TensorShape({-1, 7}));
  EXPECT_TRUE(s_.ok()) << s_.status();
}

// ---------------------------------------------------------------------------
// ArgMax.

TEST_F(MathOpsTest, ArgMax) {
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds f = {{x, Make<float>({1, 9, 9, 4, 2, 0}, {2, 3})}};
  ExpectTensor<int64_t>(Eval(s_, f, ops::ArgMax(s_, x, 1)), {2}, {1, 0});
  ExpectTensor<int64_t>(Eval(s_, f, ops::ArgMax(s_, x, 0)), {3}, {1, 0, 0});
  ExpectTensor<int32_t>(Eval(s_, f, ops::ArgMax(s_, x, -1, {.output_type = DT_INT32})), {2},
                        {1, 0});
  Output i = Placeholder(s_, DT_INT32);
  ExpectTensor<int64_t>(
      Eval(s_, {{i, Make<int32_t>({3, 1, 4, 1, 5, 9, 2, 6}, {2, 2, 2})}}, ops::ArgMax(s_, i, 1)),
      {2, 2}, {1, 0, 0, 0});

  // Long rows take the vectorized path; ties keep the first index.
  std::vector<double> row(2 * 100, 0.0);
  row[77] = 5;
  row[90] = 5;
  row[100 + 3] = -1;
  for (int j = 0; j < 100; ++j) row[100 + j] -= 2;
  Output dx = Placeholder(s_, DT_DOUBLE);
  ExpectTensor<int64_t>(Eval(s_, {{dx, Make<double>(row, {2, 100})}}, ops::ArgMax(s_, dx, 1)),
                        {2}, {77, 0});
  row[40] = NAN;
  ExpectTensor<int64_t>(Eval(s_, {{dx, Make<double>(row, {2, 100})}}, ops::ArgMax(s_, dx, 1)),
                        {2}, {77, 0});

  Output d = Placeholder(s_, DT_INT32);
  absl::StatusOr<Tensor> r = TryEval(
      s_, {{x, Make<float>({1, 2}, {2})}, {d, Tensor::Scalar<int32_t>(1)}}, ops::ArgMax(s_, x, d));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("out of range"));
}

// NaN as TensorFlow 2.21 treats it (each expectation checked there):
// Maximum, Minimum, Max and Min give NaN when any input is NaN, whichever
// side and whatever the path (vectorized rows, columns, the whole tensor);
// ArgMax and ArgMin skip NaNs, and a row of NaNs gives index 0.
TEST_F(MathOpsTest, NanFollowsTensorFlow) {
  // 67 elements: NaNs in the vectorized body (on either side) and the tail.
  std::vector<float> av(67), bv(67), max_want(67), min_want(67);
  for (int i = 0; i < 67; ++i) {
    av[i] = static_cast<float>(i);
    bv[i] = static_cast<float>(66 - i);
  }
  av[5] = NAN;
  bv[40] = NAN;
  av[64] = NAN;
  for (int i = 0; i < 67; ++i) {
    const bool nan = std::isnan(av[i]) || std::isnan(bv[i]);
    max_want[i] = nan ? NAN : std::max(av[i], bv[i]);
    min_want[i] = nan ? NAN : std::min(av[i], bv[i]);
  }
  Output a = Placeholder(s_, DT_FLOAT);
  Output b = Placeholder(s_, DT_FLOAT);
  Feeds ab = {{a, Make<float>(av, {67})}, {b, Make<float>(bv, {67})}};
  ExpectTensor<float>(Eval(s_, ab, ops::Maximum(s_, a, b)), {67}, max_want);
  ExpectTensor<float>(Eval(s_, ab, ops::Minimum(s_, a, b)), {67}, min_want);
  Feeds ba = {{a, Make<float>({1, NAN}, {2})}, {b, Make<float>({NAN, 1}, {2})}};
  ExpectTensor<float>(Eval(s_, ba, ops::Maximum(s_, a, b)), {2}, {NAN, NAN});

  // Rows of 64 (the vectorized lanes): NaN first in row 0, in a later lane
  // in row 1; row 2 has none.
  std::vector<float> rows(3 * 64, 0.0f);
  rows[0] = NAN;
  rows[32] = 5;
  rows[10] = -3;
  rows[64 + 40] = NAN;
  rows[64 + 7] = 4;
  rows[64 + 50] = -6;
  rows[128 + 9] = 2;
  rows[128 + 60] = -1;
  Output x = Placeholder(s_, DT_FLOAT);
  Feeds fx = {{x, Make<float>(rows, {3, 64})}};
  ExpectTensor<float>(Eval(s_, fx, ops::Max(s_, x, 1)), {3}, {NAN, NAN, 2});
  ExpectTensor<float>(Eval(s_, fx, ops::Min(s_, x, 1)), {3}, {NAN, NAN, -1});
  ExpectTensor<float>(Eval(s_, fx, ops::Max(s_, x, {0, 1})), {}, {NAN});
  ExpectTensor<int64_t>(Eval(s_, fx, ops::ArgMax(s_, x, 1)), {3}, {32, 7, 9});
  ExpectTensor<int64_t>(Eval(s_, fx, ops::ArgMin(s_, x, 1)), {3}, {10, 50, 60});

  // Columns: row 0 all NaN; column 1 has a NaN lower down too.
  Output c = Placeholder(s_, DT_FLOAT);
  Feeds fc = {{c, Make<float>({NAN, NAN, NAN, NAN, 2, 1, 3, 0, 1, NAN, 5, 7}, {3, 4})}};
  ExpectTensor<float>(Eval(s_, fc, ops::Max(s_, c, 0)), {4}, {NAN, NAN, NAN, NAN});
  ExpectTensor<int64_t>(Eval(s_, fc, ops::ArgMax(s_, c, 0)), {4}, {1, 1, 2, 2});
  ExpectTensor<int64_t>(Eval(s_, fc, ops::ArgMin(s_, c, 0)), {4}, {2, 1, 1, 1});
  ExpectTensor<int64_t>(Eval(s_, fc, ops::ArgMax(s_, c, 1)), {3}, {0, 2, 3});
  ExpectTensor<int64_t>(Eval(s_, fc, ops::ArgMin(s_, c, 1)), {3}, {0, 3, 0});

  // Columns where a NaN comes after numbers, and one without NaN.
  Output d = Placeholder(s_, DT_FLOAT);
  Feeds fd = {{d, Make<float>({1, 5, NAN, NAN, 3, 0, 2, 1, 0}, {3, 3})}};
  ExpectTensor<float>(Eval(s_, fd, ops::Max(s_, d, 0)), {3}, {NAN, 5, NAN});
  ExpectTensor<float>(Eval(s_, fd, ops::Min(s_, d, 0)), {3}, {NAN, 1, NAN});
  ExpectTensor<float>(Eval(s_, fd, ops::Min(s_, d, {0, 1})), {}, {NAN});

  // TensorFlow's scan starts at (0, lowest) and moves only to a strictly
  // larger value: -inf and lowest after a NaN never move it.
  Output e = Placeholder(s_, DT_FLOAT);
  const float lowest = std::numeric_limits<float>::lowest();
  Feeds fe = {{e, Make<float>({NAN, -INFINITY, -INFINITY, 2, NAN, lowest, NAN, INFINITY}, {4, 2})}};
  ExpectTensor<int64_t>(Eval(s_, fe, ops::ArgMax(s_, e, 1)), {4}, {0, 1, 0, 1});
  ExpectTensor<int64_t>(Eval(s_, fe, ops::ArgMin(s_, e, 1)), {4}, {1, 0, 1, 0});
  ExpectTensor<int64_t>(Eval(s_, fe, ops::ArgMax(s_, e, 0)), {2}, {0, 3});
}

TEST_F(MathOpsTest, ArgMinFindsTheFirstSmallest) {
  Output x = Placeholder(s_, DT_INT64);
  Feeds f = {{x, Make<int64_t>({4, -1, 7, -1, 3, 3}, {2, 3})}};
  ExpectTensor<int64_t>(Eval(s_, f, ops::ArgMin(s_, x, 1)), {2}, {1, 0});
  ExpectTensor<int32_t>(Eval(s_, f, ops::ArgMin(s_, x, 0, {.output_type = DT_INT32})), {3},
                        {1, 0, 1});
  Output scalar = Placeholder(s_, DT_INT64, TensorShape({}));
  ops::ArgMin(s_, scalar, 0);
  EXPECT_FALSE(s_.ok());
  EXPECT_THAT(std::string(s_.status().message()),
              HasSubstr("ArgMin needs an input of rank >= 1, got a scalar"));
}

// ---------------------------------------------------------------------------
// MatMul.

template <typename T>
std::vector<T> NaiveMatMul(const std::vector<T>& a, const std::vector<T>& b, int m, int k, int n,
                           bool ta, bool tb) {
  std::vector<T> c(m * n, 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int p = 0; p < k; ++p) {
        c[i * n + j] += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      }
    }
  }
  return c;
}

TEST_F(MathOpsTest, MatMulSmall) {
  Output a = Placeholder(s_, DT_FLOAT);
  Output b = Placeholder(s_, DT_FLOAT);
  Feeds f = {{a, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})},
             {b, Make<float>({7, 8, 9, 10, 11, 12}, {3, 2})}};
  ExpectTensor<float>(Eval(s_, f, ops::MatMul(s_, a, b)), {2, 2}, {58, 64, 139, 154});
  ExpectTensor<float>(Eval(s_, f, ops::MatMul(s_, a, b, {.transpose_a = true, .transpose_b = true})),
                      {3, 3}, {39, 49, 59, 54, 68, 82, 69, 87, 105});
  Output ia = Placeholder(s_, DT_INT32);
  Output ib = Placeholder(s_, DT_INT32);
  ExpectTensor<int32_t>(Eval(s_, {{ia, Make<int32_t>({1, 2, 3, 4}, {2, 2})},
                                  {ib, Make<int32_t>({5, 6, 7, 8}, {2, 2})}},
                             ops::MatMul(s_, ia, ib, {.transpose_b = true})),
                        {2, 2}, {17, 23, 39, 53});
}

TEST_F(MathOpsTest, MatMulAllTransposes) {
  const int m = 5, k = 7, n = 4;
  std::vector<double> av = Values(m * k, 1), bv = Values(k * n, 2);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Scope s = Scope::NewRootScope(BuiltinOps());
      Output a = Placeholder(s, DT_DOUBLE);
      Output b = Placeholder(s, DT_DOUBLE);
      TensorShape as = ta ? TensorShape({k, m}) : TensorShape({m, k});
      TensorShape bs = tb ? TensorShape({n, k}) : TensorShape({k, n});
      Tensor out = Eval(s, {{a, Make<double>(av, as)}, {b, Make<double>(bv, bs)}},
                        ops::MatMul(s, a, b, {.transpose_a = ta, .transpose_b = tb}));
      ExpectTensor<double>(out, {m, n}, NaiveMatMul(av, bv, m, k, n, ta, tb), 1e-12);
      // Float goes through sgemm.
      Scope sf = Scope::NewRootScope(BuiltinOps());
      Output af = Placeholder(sf, DT_FLOAT);
      Output bf = Placeholder(sf, DT_FLOAT);
      std::vector<float> avf(av.begin(), av.end()), bvf(bv.begin(), bv.end());
      Tensor outf = Eval(sf, {{af, Make<float>(avf, as)}, {bf, Make<float>(bvf, bs)}},
                         ops::MatMul(sf, af, bf, {.transpose_a = ta, .transpose_b = tb}));
      ExpectTensor<float>(outf, {m, n}, NaiveMatMul(avf, bvf, m, k, n, ta, tb), 1e-5);
    }
  }
}

TEST_F(MathOpsTest, MatMulErrors) {
  ops::MatMul(s_, Placeholder(s_, DT_FLOAT, TensorShape({2, 3})),
              Placeholder(s_, DT_FLOAT, TensorShape({4, 5})));
  ASSERT_FALSE(s_.ok());
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s_.status().message()), HasSubstr("inner dimensions differ"));

  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_FLOAT);
  Output b = Placeholder(s, DT_FLOAT);
  Output c = ops::MatMul(s, a, b);
  absl::StatusOr<Tensor> r =
      TryEval(s, {{a, Make<float>({1, 2, 3, 4, 5, 6}, {2, 3})}, {b, Make<float>({1, 2}, {2, 1})}}, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Matrix size-incompatible"));
  r = TryEval(s, {{a, Make<float>({1, 2, 3}, {3})}, {b, Make<float>({1, 2}, {2, 1})}}, c);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("two matrices"));
  // Empty inner dimension: zeros.
  ExpectTensor<float>(
      Eval(s, {{a, Make<float>({}, {2, 0})}, {b, Make<float>({}, {0, 2})}}, c), {2, 2},
      {0, 0, 0, 0});
}

}  // namespace
}  // namespace sluice

