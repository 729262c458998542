// Gradients of the math ops, checked by finite differences.
#include "ops/math/math_ops.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/builtins.h"
#include "ops/testutil/gradient_checker.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;  // NOLINT: test helpers

// ---------------------------------------------------------------------------
// Gradients.

using BinaryFn = Output (*)(const Scope&, Input, Input, std::source_location);

struct BinaryCase {
  const char* name;
  BinaryFn fn;
  double lo_x, hi_x, lo_y, hi_y;
};

const BinaryCase kBinaryCases[] = {
    {"Add", ops::Add, -1, 1, -1, 1},          {"AddV2", ops::AddV2, -1, 1, -1, 1},
    {"Sub", ops::Sub, -1, 1, -1, 1},          {"Mul", ops::Mul, -1, 1, -1, 1},
    {"RealDiv", ops::RealDiv, -1, 1, 0.5, 2}, {"Maximum", ops::Maximum, -1, 1, -1, 1},
    {"Minimum", ops::Minimum, -1, 1, -1, 1},  {"Pow", ops::Pow, 0.5, 2, -1, 2},
    {"SquaredDifference", ops::SquaredDifference, -1, 1, -1, 1},
    {"Div", ops::Div, -1, 1, 0.5, 2},         {"DivNoNan", ops::DivNoNan, -1, 1, 0.5, 2},
    // x / y in (0.05, 0.82): away from FloorMod's jumps.
    {"FloorMod", ops::FloorMod, 0.1, 0.9, 1.1, 2}, {"FloorMod<0", ops::FloorMod, -0.9, -0.1, 1.1, 2},
    {"Atan2", ops::Atan2, -1, 1, 0.2, 1},     {"Atan2 x<0", ops::Atan2, 0.2, 1, -1, -0.2},
    {"Xlogy", ops::Xlogy, -1, 1, 0.5, 2},     {"Xdivy", ops::Xdivy, -1, 1, 0.5, 2},
    {"Xlog1py", ops::Xlog1py, -1, 1, -0.5, 2},
};

TEST(MathGradTest, BinaryOpsWithBroadcasting) {
  const std::vector<std::pair<TensorShape, TensorShape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{3}, {2, 3}},
      {{2, 3}, {}},     {{}, {3}},     {{2, 1, 3}, {2, 1}}};
  for (const BinaryCase& c : kBinaryCases) {
    for (const auto& [xs, ys] : shapes) {
      for (bool static_shapes : {true, false}) {
        Scope s = Scope::NewRootScope(BuiltinOps());
        Output x = Placeholder(s, DT_DOUBLE, static_shapes ? std::optional(xs) : std::nullopt);
        Output y = Placeholder(s, DT_DOUBLE, static_shapes ? std::optional(ys) : std::nullopt);
        Output z = c.fn(s, x, y, std::source_location::current());
        double err = GradError(s, {{x, Doubles(xs, 3, c.lo_x, c.hi_x)},
                                   {y, Doubles(ys, 4, c.lo_y, c.hi_y)}},
                               z);
        EXPECT_LT(err, 1e-6) << c.name << " " << xs.DebugString() << " " << ys.DebugString()
                             << (static_shapes ? " static" : " dynamic");
      }
    }
  }
}

TEST(MathGradTest, PartlyKnownShapes) {
  // The usual layer: [?, 4] + [4] (bias), and [?, 1] * [?, 3].
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({-1, 4}));
  Output b = Placeholder(s, DT_DOUBLE, TensorShape({4}));
  EXPECT_LT(GradError(s, {{x, Doubles({3, 4}, 1)}, {b, Doubles({4}, 2)}}, ops::Add(s, x, b)),
            1e-6);
  Output u = Placeholder(s, DT_DOUBLE, TensorShape({-1, 1}));
  Output v = Placeholder(s, DT_DOUBLE, TensorShape({-1, 3}));
  EXPECT_LT(GradError(s, {{u, Doubles({2, 1}, 3)}, {v, Doubles({2, 3}, 4)}}, ops::Mul(s, u, v)),
            1e-6);
}

using UnaryFn = Output (*)(const Scope&, Input, std::source_location);

TEST(MathGradTest, UnaryOps) {
  struct Case {
    const char* name;
    UnaryFn fn;
    double lo, hi;
  };
  const Case cases[] = {
      {"Neg", ops::Neg, -1, 1},          {"Square", ops::Square, -1, 1},
      {"Sqrt", ops::Sqrt, 0.5, 2},       {"Rsqrt", ops::Rsqrt, 0.5, 2},
      {"Exp", ops::Exp, -1, 1},          {"Log", ops::Log, 0.5, 2},
      {"Tanh", ops::Tanh, -1, 1},        {"Sigmoid", ops::Sigmoid, -2, 2},
      {"Reciprocal", ops::Reciprocal, 0.5, 2}, {"Abs", ops::Abs, 0.1, 1},
      {"Log1p", ops::Log1p, -0.5, 2},    {"Expm1", ops::Expm1, -1, 1},
      {"Softplus", ops::Softplus, -3, 3}, {"Softsign", ops::Softsign, 0.1, 2},
      {"Softsign<0", ops::Softsign, -2, -0.1}, {"Erf", ops::Erf, -1.5, 1.5},
      {"Erfc", ops::Erfc, -1.5, 1.5},     {"Inv", ops::Inv, 0.5, 2},
      {"Sin", ops::Sin, -3, 3},           {"Cos", ops::Cos, -3, 3},
      {"Tan", ops::Tan, -1.2, 1.2},       {"Sinh", ops::Sinh, -2, 2},
      {"Cosh", ops::Cosh, -2, 2},         {"Asin", ops::Asin, -0.9, 0.9},
      {"Acos", ops::Acos, -0.9, 0.9},     {"Atan", ops::Atan, -3, 3},
      {"Asinh", ops::Asinh, -3, 3},       {"Acosh", ops::Acosh, 1.1, 3},
      {"Atanh", ops::Atanh, -0.9, 0.9},
  };
  for (const Case& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE);
    Output y = c.fn(s, x, std::source_location::current());
    EXPECT_LT(GradError(s, {{x, Doubles({2, 3}, 5, c.lo, c.hi)}}, y), 1e-6) << c.name;
  }
  // Abs on negative values too.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  EXPECT_LT(GradError(s, {{x, Doubles({4}, 6, -1, -0.1)}}, ops::Abs(s, x)), 1e-6);
}

// ClipByValue: t's gradient inside the bounds, each bound's where it clipped;
// scalar bounds sum their gradient over t.
TEST(MathGradTest, ClipByValue) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output t = Placeholder(s, DT_DOUBLE);
  Output lo = Placeholder(s, DT_DOUBLE);
  Output hi = Placeholder(s, DT_DOUBLE);
  Feeds scalars = {{t, Make<double>({-2, -0.3, 0.1, 0.4, 1.7, 3}, {2, 3})},
                   {lo, Make<double>({-0.5}, {})},
                   {hi, Make<double>({1.0}, {})}};
  EXPECT_LT(GradError(s, scalars, ops::ClipByValue(s, t, lo, hi)), 1e-6);
  Feeds tensors = {{t, Make<double>({-2, -0.3, 0.1, 0.4, 1.7, 3}, {2, 3})},
                   {lo, Make<double>({-1, -1, 0.2, 0, 0, 0}, {2, 3})},
                   {hi, Make<double>({1, 1, 1, 0.3, 2, 2}, {2, 3})}};
  EXPECT_LT(GradError(s, tensors, ops::ClipByValue(s, t, lo, hi)), 1e-6);
}

TEST(MathGradTest, GradientHelperOps) {
  for (BinaryFn fn : {static_cast<BinaryFn>(ops::TanhGrad), static_cast<BinaryFn>(ops::SigmoidGrad),
                      static_cast<BinaryFn>(ops::SqrtGrad), static_cast<BinaryFn>(ops::RsqrtGrad),
                      static_cast<BinaryFn>(ops::ReciprocalGrad)}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output y = Placeholder(s, DT_DOUBLE);
    Output dy = Placeholder(s, DT_DOUBLE);
    Output z = fn(s, y, dy, std::source_location::current());
    EXPECT_LT(GradError(s, {{y, Doubles({3}, 7, 0.5, 1.5)}, {dy, Doubles({3}, 8)}}, z), 1e-6)
        << z.node->op();
  }
}

TEST(MathGradTest, SecondOrderTanh) {
  // d/dx of (d tanh(x)/dx) through TanhGrad's own gradient.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  Output y = ops::Tanh(s, x);
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {y}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_LT(GradError(s, {{x, Doubles({3}, 9)}}, (*g)[0]), 1e-6);
}

TEST(MathGradTest, SelectAddNCast) {
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output c = Placeholder(s, DT_BOOL);
    Output t = Placeholder(s, DT_DOUBLE);
    Output e = Placeholder(s, DT_DOUBLE);
    Output z = ops::Select(s, c, t, e);
    absl::StatusOr<std::vector<Output>> g = AddGradients(s, {z}, {t, e});
    ASSERT_TRUE(g.ok()) << g.status();
    Feeds f = {{c, Make<bool>({true, false, true}, {3})},
               {t, Doubles({3}, 1)},
               {e, Doubles({3}, 2)}};
    ExpectTensor<double>(Eval(s, f, (*g)[0]), {3}, {1, 0, 1});
    ExpectTensor<double>(Eval(s, f, (*g)[1]), {3}, {0, 1, 0});
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output c = Placeholder(s, DT_BOOL);
    Output t = Placeholder(s, DT_DOUBLE);
    Output e = Placeholder(s, DT_DOUBLE);
    // t [2,3] broadcasts against e [3] and c [2,1].
    Output z = ops::Mul(s, ops::SelectV2(s, c, t, e), ops::SelectV2(s, c, t, e));
    absl::StatusOr<std::vector<Output>> g = AddGradients(s, {ops::Sum(s, z, {0, 1})}, {t, e});
    ASSERT_TRUE(g.ok()) << g.status();
    Feeds f = {{c, Make<bool>({true, false}, {2, 1})},
               {t, Make<double>({1, 2, 3, 4, 5, 6}, {2, 3})},
               {e, Make<double>({10, 20, 30}, {3})}};
    ExpectTensor<double>(Eval(s, f, (*g)[0]), {2, 3}, {2, 4, 6, 0, 0, 0});
    ExpectTensor<double>(Eval(s, f, (*g)[1]), {3}, {20, 40, 60});
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output a = Placeholder(s, DT_DOUBLE);
    Output b = Placeholder(s, DT_DOUBLE);
    Output z = ops::AddN(s, {a, ops::Square(s, b), a});
    EXPECT_LT(GradError(s, {{a, Doubles({2, 2}, 1)}, {b, Doubles({2, 2}, 2)}}, z), 1e-6);
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE);
    Output z = ops::Cast(s, ops::Square(s, ops::Cast(s, x, DT_FLOAT)), DT_DOUBLE);
    absl::StatusOr<std::vector<Output>> g = AddGradients(s, {z}, {x});
    ASSERT_TRUE(g.ok()) << g.status();
    ExpectTensor<double>(Eval(s, {{x, Make<double>({1.5, -2}, {2})}}, (*g)[0]), {2}, {3, -4});
  }
}

TEST(MathGradTest, Reductions) {
  using ReduceFn = Output (*)(const Scope&, Input, Input, const ops::ReduceAttrs&,
                              std::source_location);
  struct Case {
    const char* name;
    ReduceFn fn;
  };
  const Case cases[] = {{"Sum", ops::Sum}, {"Mean", ops::Mean}, {"Max", ops::Max},
                        {"Min", ops::Min}, {"Prod", ops::Prod}};
  const std::vector<std::vector<int64_t>> axes_list = {{0}, {1}, {-1}, {0, 2}, {0, 1, 2}, {}};
  for (const Case& c : cases) {
    for (const auto& axes : axes_list) {
      for (bool keep_dims : {false, true}) {
        for (int known : {0, 1, 2}) {  // unknown shape, partly known, fully known
          Scope s = Scope::NewRootScope(BuiltinOps());
          std::optional<TensorShape> shape;
          if (known == 1) shape = TensorShape({-1, 3, 4});
          if (known == 2) shape = TensorShape({2, 3, 4});
          Output x = Placeholder(s, DT_DOUBLE, shape);
          Input axes_input =
              Literal(Tensor::FromVector<int32_t>(std::vector<int32_t>(axes.begin(), axes.end())));
          Output y = c.fn(s, x, axes_input, {.keep_dims = keep_dims},
                          std::source_location::current());
          double err = GradError(s, {{x, Doubles({2, 3, 4}, 11, 0.5, 1.5)}}, y);
          EXPECT_LT(err, 1e-6) << c.name << " axes " << axes.size() << " keep " << keep_dims
                               << " known " << known;
        }
      }
    }
  }
}

TEST(MathGradTest, ReductionWithRuntimeAxes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  Output axes = ops::Cast(s, ops::Sum(s, Input({1, 0}), {0}, {.keep_dims = true}), DT_INT32);
  EXPECT_LT(GradError(s, {{x, Doubles({2, 3}, 12)}}, ops::Mean(s, x, axes)), 1e-6);
  EXPECT_LT(GradError(s, {{x, Doubles({2, 3}, 13)}}, ops::Sum(s, x, axes)), 1e-6);
}

TEST(MathGradTest, MaxSplitsTiesAndProdHandlesZeros) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  Output m = ops::Max(s, x, 1);
  Output p = ops::Prod(s, x, 1);
  absl::StatusOr<std::vector<Output>> gm = AddGradients(s, {m}, {x});
  absl::StatusOr<std::vector<Output>> gp = AddGradients(s, {p}, {x});
  ASSERT_TRUE(gm.ok()) << gm.status();
  ASSERT_TRUE(gp.ok()) << gp.status();
  Feeds f = {{x, Make<double>({1, 3, 3, 2, 0, 3, 0, 0, 5}, {3, 3})}};
  ExpectTensor<double>(Eval(s, f, (*gm)[0]), {3, 3}, {0, 0.5, 0.5, 0, 0, 1, 0, 0, 1});
  ExpectTensor<double>(Eval(s, f, (*gp)[0]), {3, 3}, {9, 3, 3, 0, 6, 0, 0, 0, 0});
}

TEST(MathGradTest, MatMulAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool static_shapes : {false, true}) {
        Scope s = Scope::NewRootScope(BuiltinOps());
        TensorShape as = ta ? TensorShape({3, 2}) : TensorShape({2, 3});
        TensorShape bs = tb ? TensorShape({4, 3}) : TensorShape({3, 4});
        Output a = Placeholder(s, DT_DOUBLE, static_shapes ? std::optional(as) : std::nullopt);
        Output b = Placeholder(s, DT_DOUBLE, static_shapes ? std::optional(bs) : std::nullopt);
        Output z = ops::MatMul(s, a, b, {.transpose_a = ta, .transpose_b = tb});
        EXPECT_LT(GradError(s, {{a, Doubles(as, 21)}, {b, Doubles(bs, 22)}}, z), 1e-6)
            << ta << tb;
      }
    }
  }
}

TEST(MathGradTest, NoGradientOps) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE);
  // The comparison is not on a differentiable path: x reaches y only through Select's branches.
  Output y = ops::Select(s, ops::Greater(s, x, 0.0), x, ops::Neg(s, x));
  absl::StatusOr<std::vector<Output>> g = AddGradients(s, {y}, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensor<double>(Eval(s, {{x, Make<double>({-2, 3}, {2})}}, (*g)[0]), {2}, {-1, 1});
}

}  // namespace
}  // namespace sluice

