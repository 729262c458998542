// Igamma, Igammac, IgammaGradA, RandomGammaGrad and Betainc against
// TensorFlow 2.21's values (edges included), their derivatives against
// finite differences of the functions themselves, and the gradients.
#include "ops/math/incomplete_functions.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/testutil/math_test_util.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::GradError;
using testing_util::Placeholder;
using testing_util::TryEval;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Output Doubles(const Scope& s, const std::vector<double>& v) {
  return ops::Const(s, Tensor::FromVector<double>(v));
}

void ExpectClose(const Tensor& t, const std::vector<double>& want, double rel) {
  absl::Span<const double> v = t.flat<double>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "at " << i << ": " << v[i];
    } else {
      EXPECT_NEAR(v[i], want[i], rel * std::fabs(want[i]) + 1e-300) << "at " << i;
    }
  }
}

// a and x, edges first: 0, -1, 0.5, 1 at x = 0 or 1; infinities; NaN;
// x < 0; then interior points on both sides of x = a.
const std::vector<double> kA = {0, -1, 0.5, 1, 2, kInf, kNaN, 3, 3, 3, 3, 1e-3, 50, 0.2};
const std::vector<double> kX = {1, 1, 0, 0, kInf, 2, 1, -1, kNaN, 0.5, 30, 0.1, 45, 7};

TEST(IncompleteFunctionsTest, IgammaFamilyIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Doubles(s, kA), x = Doubles(s, kX);
  ExpectClose(Eval(s, {}, ops::Igamma(s, a, x)),
              {kNaN, kNaN, 0, 0, 1, 0, kNaN, kNaN, kNaN, 0.014387677966970684, 0.9999999999549898,
               0.9981780097379499, 0.24680203440017257, 0.9999620075820126},
              1e-13);
  ExpectClose(Eval(s, {}, ops::Igammac(s, a, x)),
              {kNaN, kNaN, 1, 1, 0, 1, kNaN, kNaN, kNaN, 0.9856123220330293, 4.501016648012131e-11,
               0.0018219902620500994, 0.7531979655998274, 3.799241798739781e-05},
              1e-12);
  ExpectClose(Eval(s, {}, ops::IgammaGradA(s, a, x)),
              {kNaN, kNaN, 0, 0, 0, 0, kNaN, kNaN, kNaN, -0.02852023587882894,
               -1.1310081317420556e-10, -1.8210559392083043, -0.04554329214012429,
               -0.0002793147783515256},
              1e-10);
  ExpectClose(Eval(s, {}, ops::RandomGammaGrad(s, a, x)),
              {kNaN, kNaN, 0, 0, 0, 0, kNaN, kNaN, kNaN, 0.3761753563104819, 2.685886589190873,
               201.60551595416177, 0.951410192211624, 6.6700060526389375},
              1e-10);
}

TEST(IncompleteFunctionsTest, DerivativesMatchFiniteDifferences) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Both branches (series: x <= max(1, a); fraction beyond), small and large a.
  const std::vector<double> a = {0.3, 0.3, 2, 2, 7.5, 7.5, 120, 120};
  const std::vector<double> x = {0.2, 4, 1.5, 6, 3, 11, 110, 135};
  const double h = 1e-6;
  std::vector<double> up(a), down(a);
  for (size_t i = 0; i < a.size(); ++i) {
    up[i] += h;
    down[i] -= h;
  }
  Tensor p_up = Eval(s, {}, ops::Igamma(s, Doubles(s, up), Doubles(s, x)));
  Tensor p_down = Eval(s, {}, ops::Igamma(s, Doubles(s, down), Doubles(s, x)));
  Tensor der = Eval(s, {}, ops::IgammaGradA(s, Doubles(s, a), Doubles(s, x)));
  Tensor sample_der = Eval(s, {}, ops::RandomGammaGrad(s, Doubles(s, a), Doubles(s, x)));
  for (size_t i = 0; i < a.size(); ++i) {
    const double fd = (p_up.flat<double>()[i] - p_down.flat<double>()[i]) / (2 * h);
    EXPECT_NEAR(der.flat<double>()[i], fd, 1e-6 * std::fabs(fd) + 1e-9) << i;
    // d x / d a at fixed P: -(dP/da) / density.
    const double density = std::exp(-x[i] + (a[i] - 1) * std::log(x[i]) - std::lgamma(a[i]));
    EXPECT_NEAR(sample_der.flat<double>()[i], -fd / density, 1e-5 * std::fabs(fd / density)) << i;
  }
  // P + Q = 1 on both branches.
  Tensor p = Eval(s, {}, ops::Igamma(s, Doubles(s, a), Doubles(s, x)));
  Tensor q = Eval(s, {}, ops::Igammac(s, Doubles(s, a), Doubles(s, x)));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(p.flat<double>()[i] + q.flat<double>()[i], 1, 1e-14) << i;
  }
}

TEST(IncompleteFunctionsTest, BetaincIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ExpectClose(
      Eval(s, {},
           ops::Betainc(s, Doubles(s, {0, -1, 0.5, 1, 2, kInf, kNaN, 3, 3, 3, 3, 1e-3, 50, 0.2, 2, 2, 2}),
                        Doubles(s, {1, 1, 0.5, 0, 2, 2, 1, 1, 1, 2, 3, 0.1, 45, 7, 3, 3, kInf}),
                        Doubles(s, {.5, .5, 0, 0.3, 1, .5, .5, -0.1, 1.1, 0.5, 0.3, 0.9, 0.5, 0.01, 0, 1, 0.5}))),
      {kNaN, kNaN, 0, kNaN, 1, kNaN, kNaN, kNaN, kNaN, 0.31250000000000006, 0.1630799999999998,
       0.9920587075715213, 0.3031479688469767, 0.6262679659376421, 0, 1, kNaN},
      1e-12);
  // Scalars broadcast; other shapes must agree.
  ExpectClose(Eval(s, {}, ops::Betainc(s, Doubles(s, {1, 2}), Doubles(s, {3, 4}), ops::Const(s, 0.5))),
              {0.875, 0.8125}, 1e-14);
  absl::StatusOr<Tensor> r = TryEval(
      s, {},
      ops::Betainc(s, Doubles(s, {1, 2}),
                   ops::Const(s, Tensor::FromVector<double>({1, 2, 3, 4}, TensorShape({2, 2}))),
                   ops::Const(s, 0.5)));
  EXPECT_THAT(r.status().message(), HasSubstr("Shapes of a and b are inconsistent: [2] vs. [2,2]"));
}

TEST(IncompleteFunctionsTest, Gradients) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = Placeholder(s, DT_DOUBLE);
  Output x = Placeholder(s, DT_DOUBLE);
  const testing_util::Feeds feeds = {
      {a, Tensor::FromVector<double>({0.7, 2.5, 6}, TensorShape({3, 1}))},
      {x, Tensor::FromVector<double>({0.4, 3, 8, 1.5})}};
  EXPECT_LT(GradError(s, feeds, ops::Igamma(s, a, x)), 1e-6);
  EXPECT_LT(GradError(s, feeds, ops::Igammac(s, a, x)), 1e-6);
  // Betainc: w.r.t. x only (a and b fixed).
  Output xb = Placeholder(s, DT_DOUBLE);
  EXPECT_LT(GradError(s, {{xb, Tensor::FromVector<double>({0.2, 0.5, 0.9})}},
                      ops::Betainc(s, Doubles(s, {0.7, 2.5, 6}), Doubles(s, {1.5, 3, 0.8}), xb)),
            1e-6);
  EXPECT_LT(GradError(s, {{xb, Tensor::Scalar<double>(0.3)}},
                      ops::Betainc(s, Doubles(s, {0.7, 2.5, 6}), Doubles(s, {1.5, 3, 0.8}), xb)),
            1e-6);
}

}  // namespace
}  // namespace sluice
