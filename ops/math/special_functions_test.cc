// The special functions against TensorFlow's values (tf.math.lgamma,
// digamma, polygamma, erfinv, ndtri on the same inputs, poles and domain
// ends included), and their gradients by central differences.
#include "ops/math/special_functions.h"

#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::GradError;
using testing_util::Placeholder;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

Output Floats(const Scope& s, const std::vector<float>& v) {
  return ops::Const(s, Tensor::FromVector<float>(v));
}

TEST(SpecialFunctionsTest, ValuesAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Floats(s, {-2.0f, -1.5f, 0.0f, 0.5f, 1.0f, 3.5f});
  ExpectTensor<float>(Eval(s, {}, ops::Lgamma(s, x)), TensorShape({6}),
                      {kInf, 0.86004704f, kInf, 0.5723649f, 0.0f, 1.2009736f}, 1e-5);
  ExpectTensor<float>(Eval(s, {}, ops::Digamma(s, x)), TensorShape({6}),
                      {kNan, 0.7031568f, kNan, -1.9635108f, -0.5772159f, 1.1031568f}, 1e-5);
  ExpectTensor<float>(
      Eval(s, {}, ops::Polygamma(s, Floats(s, {0, 1, 2, 1.5f, -1, 1}),
                                 Floats(s, {0.5f, 0.5f, 2, 1, 1, 0}))),
      TensorShape({6}), {-1.9635108f, 4.934802f, -0.40411383f, kNan, kNan, kInf}, 1e-5);
  ExpectTensor<float>(Eval(s, {}, ops::Erfinv(s, Floats(s, {-1, -0.5f, 0, 0.9f, 1, 1.5f}))),
                      TensorShape({6}), {-kInf, -0.4769363f, 0, 1.1630871f, kInf, kNan}, 1e-5);
  ExpectTensor<float>(Eval(s, {}, ops::Ndtri(s, Floats(s, {0, 0.025f, 0.5f, 0.975f, 1, -0.1f}))),
                      TensorShape({6}), {-kInf, -1.9599639f, 0, 1.9599644f, kInf, kNan}, 1e-5);
}

TEST(SpecialFunctionsTest, GradientsByFiniteDifferences) {
  // Away from the poles and ends, where central differences lose digits.
  const std::vector<double> positive = {0.8, 1.7, 2.5, 4.0};
  const std::vector<double> unit = {-0.8, -0.1, 0.35, 0.9};
  const std::vector<double> prob = {0.1, 0.3, 0.6, 0.85};
  struct Case {
    const char* op;
    const std::vector<double>* at;
  } cases[] = {{"Lgamma", &positive}, {"Digamma", &positive}, {"Erfinv", &unit}, {"Ndtri", &prob}};
  for (const Case& c : cases) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output x = Placeholder(s, DT_DOUBLE, TensorShape({4}));
    Output y = s.Op(c.op).Input(x).Finalize1();
    EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>(*c.at)}}, y), 1e-5) << c.op;
  }
  // Polygamma w.r.t. x, with a broadcast along x's rows.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = Placeholder(s, DT_DOUBLE, TensorShape({4}));
  Output a = ops::Const(s, Tensor::FromVector<double>({0, 1, 2}, TensorShape({3, 1})));
  EXPECT_LT(GradError(s, {{x, Tensor::FromVector<double>(positive)}}, ops::Polygamma(s, a, x)),
            1e-4);
}

TEST(SpecialFunctionsTest, ZetaAndExpintAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Poles, the domain's edges, negative q, and both ways out of the sum.
  ExpectTensor<double>(
      Eval(s, {},
           ops::Zeta(s,
                     ops::Const(s, Tensor::FromVector<double>(
                                       {1, 0.5, 2, 2, 3, 2.5, 2, 4, nan, 2, 30, 1.5, 2})),
                     ops::Const(s, Tensor::FromVector<double>(
                                       {1, 1, 0, -1, -1.5, -1.5, 1e-3, 7, 1, inf, 2, 1e6, nan})))),
      TensorShape({13}),
      {inf, nan, inf, inf, 0.11810202582086413, nan, 1000001.6425331959, 0.0011996997605209074,
       nan, 0.0, 9.313274324196682e-10, 0.002000000500000125, nan},
      1e-7);
  ExpectTensor<double>(
      Eval(s, {},
           ops::Expint(s, ops::Const(s, Tensor::FromVector<double>(
                                         {0, 1e-5, 0.5, -2, 10, 800, inf, -inf, nan})))),
      TensorShape({9}),
      {-inf, -10.935699800043695, 0.45421990486317354, nan, 2492.228976241878, inf, inf, nan,
       nan},
      1e-9);
}

TEST(SpecialFunctionsTest, ZetaAndExpintGradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output q = Placeholder(s, DT_DOUBLE);
  EXPECT_LT(GradError(s, {{q, Tensor::FromVector<double>({0.9, 1.7, 12})}},
                      ops::Zeta(s, ops::Const(s, Tensor::FromVector<double>({2.5, 4}, TensorShape({2, 1}))), q)),
            1e-6);
  EXPECT_LT(GradError(s, {{q, Tensor::FromVector<double>({0.9, 1.7, 4})}}, ops::Expint(s, q)), 1e-6);
}

}  // namespace
}  // namespace sluice
