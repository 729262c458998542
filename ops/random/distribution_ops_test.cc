// The gamma, Poisson and binomial draws against the values TensorFlow 2.21
// drew for the same seeds (raw_ops, run twice in one tf.function for the
// seeded forms), distribution checks over many draws, gradients, and
// TensorFlow's errors.
#include "ops/random/distribution_ops.h"

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::TryEval;

Tensor Uint64s(const std::vector<uint64_t>& v) {
  Tensor t(::tensorflow::DT_UINT64, TensorShape({static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<uint64_t>()[i] = v[i];
  return t;
}

double AsDouble(double v) { return v; }
double AsDouble(float v) { return v; }
double AsDouble(Half v) { return v.ToFloat(); }

Output Seed(const Scope& s, int64_t a, int64_t b) {
  return ops::Const(s, Tensor::FromVector<int64_t>({a, b}));
}

// Values relative to their size: a float draw from double keeps ~7 digits.
template <typename T>
void ExpectRelative(const Tensor& t, const TensorShape& shape, const std::vector<double>& want,
                    double rel) {
  ASSERT_EQ(t.shape(), shape) << t.shape().DebugString();
  absl::Span<const T> v = t.flat<T>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(AsDouble(v[i]), want[i], rel * std::fabs(want[i])) << "at " << i;
  }
}

TEST(DistributionOpsTest, SeededGammaRunsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output g = ops::RandomGamma(s, ops::Const(s, Tensor::FromVector<int32_t>({3})),
                              ops::Const(s, Tensor::FromVector<float>({0.5f, 1, 4})),
                              {.seed = 7, .seed2 = 3});
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> first = (*session)->Run({}, {g.name()}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectRelative<float>((*first)[0], TensorShape({3, 3}),
                        {0.10705150663852692, 0.16779643297195435, 4.441959381103516,
                         1.1853370666503906, 1.4979090690612793, 8.147467613220215,
                         0.00560532882809639, 0.13885359466075897, 2.6506876945495605},
                        1e-7);
  absl::StatusOr<std::vector<Tensor>> second = (*session)->Run({}, {g.name()}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectRelative<float>((*second)[0], TensorShape({3, 3}),
                        {0.4291400909423828, 0.6289328932762146, 7.051769733428955,
                         0.005395125597715378, 2.430196523666382, 5.000110149383545,
                         0.002111130626872182, 0.47523900866508484, 3.4047274589538574},
                        1e-7);

  // Double, an int64 shape and a [2, 1] alpha: output [2, 2, 1].
  ExpectRelative<double>(
      Eval(s, {},
           ops::RandomGamma(s, ops::Const(s, Tensor::FromVector<int64_t>({2})),
                            ops::Const(s, Tensor::FromVector<double>({0.25, 2.5}, TensorShape({2, 1}))),
                            {.seed = 1, .seed2 = 2})),
      TensorShape({2, 2, 1}),
      {0.000686324869154855, 2.323283516142543, 0.04000407260467551, 1.7440146182479694}, 1e-14);
}

TEST(DistributionOpsTest, StatelessGammaIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ExpectRelative<float>(
      Eval(s, {},
           ops::StatelessRandomGammaV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2, 3})),
                                       Seed(s, 7, 42),
                                       ops::Const(s, Tensor::FromVector<float>({0.5f, 1, 4})))),
      TensorShape({2, 3}),
      {0.0633244588971138, 0.8426080942153931, 4.745694637298584, 0.0011032288894057274,
       0.467422217130661, 12.662039756774902},
      1e-7);
  ExpectRelative<double>(
      Eval(s, {},
           s.Op("StatelessRandomGammaV3")
               .Input(ops::Const(s, Tensor::FromVector<int32_t>({4})))
               .Input(ops::Const(s, Uint64s({5})))
               .Input(ops::Const(s, Uint64s({9, 0})))
               .Input(ops::Const(s, 1))
               .Input(ops::Const(s, 3.0))
               .Finalize1()),
      TensorShape({4}), {4.123975047919657, 2.3986610366599397, 4.528076040290095, 0.5923484684937261},
      1e-14);
  ExpectRelative<Half>(
      Eval(s, {},
           ops::StatelessRandomGammaV2(
               s, ops::Const(s, Tensor::FromVector<int32_t>({4})), Seed(s, 1, 2),
               ops::Const(s, Tensor::FromVector<Half>({Half::FromFloat(0.5f), Half::FromFloat(1),
                                                       Half::FromFloat(4), Half::FromFloat(20)})))),
      TensorShape({4}), {0.06695556640625, 1.7197265625, 5.95703125, 21.4375}, 1e-3);
}

TEST(DistributionOpsTest, GammaMomentsMatchAlpha) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const std::vector<double> alphas = {0.3, 1, 2.5, 40};
  Tensor t = Eval(s, {},
                  ops::StatelessRandomGammaV2(
                      s, ops::Const(s, Tensor::FromVector<int32_t>({20000, 4})), Seed(s, 3, 4),
                      ops::Const(s, Tensor::FromVector<double>(alphas))));
  absl::Span<const double> v = t.flat<double>();
  for (int a = 0; a < 4; ++a) {
    double sum = 0, sq = 0;
    for (int i = 0; i < 20000; ++i) {
      const double x = v[i * 4 + a];
      ASSERT_GT(x, 0);
      sum += x;
      sq += x * x;
    }
    const double mean = sum / 20000, var = sq / 20000 - mean * mean;
    // Gamma(alpha, 1): mean and variance alpha; 5 standard errors.
    EXPECT_NEAR(mean, alphas[a], 5 * std::sqrt(alphas[a] / 20000)) << alphas[a];
    EXPECT_NEAR(var, alphas[a], 0.08 * alphas[a]) << alphas[a];
  }
}

TEST(DistributionOpsTest, GammaGradientIsTensorFlows) {
  // tf.GradientTape over tf.random.stateless_gamma([2, 3], [7, 42], alpha)
  // times [[1, 2, 3], [4, 5, 6]], summed.
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output alpha = ops::Const(s, Tensor::FromVector<double>({0.5, 1, 4}));
  Output g = ops::StatelessRandomGammaV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2, 3})),
                                         Seed(s, 7, 42), alpha);
  Output loss = ops::Sum(s, ops::Mul(s, g, ops::Const(s, Tensor::FromVector<double>(
                                                          {1, 2, 3, 4, 5, 6}, TensorShape({2, 3})))),
                         ops::Const(s, Tensor::FromVector<int32_t>({0, 1})));
  absl::StatusOr<std::vector<Output>> grads = AddGradients(s, {loss}, {alpha});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ExpectRelative<double>(Eval(s, {}, (*grads)[0]), TensorShape({3}),
                         {0.4336244426087976, 6.030169409836863, 13.926362631752138}, 1e-9);

  // RandomGamma's: d/d alpha of sum(g^2) for alpha [2, 1], shape [2].
  Output a2 = ops::Const(s, Tensor::FromVector<double>({0.7, 3}, TensorShape({2, 1})));
  Output g2 = ops::RandomGamma(s, ops::Const(s, Tensor::FromVector<int32_t>({2})), a2,
                               {.seed = 4, .seed2 = 5});
  Output loss2 = ops::Sum(s, ops::Square(s, g2), ops::Const(s, Tensor::FromVector<int32_t>({0, 1, 2})));
  grads = AddGradients(s, {loss2}, {a2});
  ASSERT_TRUE(grads.ok()) << grads.status();
  ExpectRelative<double>(Eval(s, {}, (*grads)[0]), TensorShape({2, 1}),
                         {3.679156331754985, 4.3354021304005474}, 1e-9);
}

TEST(DistributionOpsTest, PoissonIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Both samplers (rate below and above 10), two runs of a seeded op.
  Output k = ops::RandomPoissonV2(s, ops::Const(s, Tensor::FromVector<int32_t>({3})),
                                  ops::Const(s, Tensor::FromVector<float>({0.5f, 4, 25, 1e4f})),
                                  DT_INT64, {.seed = 3, .seed2 = 9});
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> first = (*session)->Run({}, {k.name()}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectTensor<int64_t>((*first)[0], TensorShape({3, 4}),
                        {0, 8, 23, 10026, 0, 4, 28, 9940, 1, 5, 28, 9872});
  absl::StatusOr<std::vector<Tensor>> second = (*session)->Run({}, {k.name()}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectTensor<int64_t>((*second)[0], TensorShape({3, 4}),
                        {0, 2, 26, 9954, 0, 3, 16, 10063, 1, 1, 24, 9903});
  ExpectTensor<double>(
      Eval(s, {},
           ops::RandomPoissonV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                ops::Const(s, Tensor::FromVector<double>({7, 150}, TensorShape({2, 1}))),
                                DT_DOUBLE, {.seed = 1, .seed2 = 1})),
      TensorShape({2, 2, 1}), {7, 141, 4, 149});
  ExpectTensor<float>(
      Eval(s, {},
           ops::StatelessRandomPoisson(s, ops::Const(s, Tensor::FromVector<int32_t>({2, 4})),
                                       Seed(s, 5, 6),
                                       ops::Const(s, Tensor::FromVector<float>({0, 3, 12, 500})),
                                       DT_FLOAT)),
      TensorShape({2, 4}), {0, 3, 13, 538, 0, 4, 9, 492});
  ExpectTensor<int32_t>(
      Eval(s, {},
           ops::StatelessRandomPoisson(s, ops::Const(s, Tensor::FromVector<int32_t>({5})),
                                       ops::Const(s, Tensor::FromVector<int32_t>({-1, 2})),
                                       ops::Const(s, 9), DT_INT32)),
      TensorShape({5}), {5, 10, 10, 9, 7});
}

TEST(DistributionOpsTest, BinomialIsTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Inversion (n p < 10), BTRS, and p > 0.5 mirrored.
  ExpectTensor<int32_t>(
      Eval(s, {},
           ops::StatelessRandomBinomial(
               s, ops::Const(s, Tensor::FromVector<int32_t>({2, 5})), Seed(s, 7, 8),
               ops::Const(s, Tensor::FromVector<float>({10, 100, 1000, 5, 30})),
               ops::Const(s, Tensor::FromVector<float>({0.3f, 0.02f, 0.9f, 0.5f, 0.7f})), DT_INT32)),
      TensorShape({2, 5}), {2, 1, 901, 3, 18, 1, 1, 905, 3, 24});
  // counts [2] and probs [3, 1] broadcast to [3, 2]; count 0 and p 1 are constants.
  ExpectTensor<float>(
      Eval(s, {},
           ops::StatelessRandomBinomial(
               s, ops::Const(s, Tensor::FromVector<int32_t>({3, 2})), Seed(s, 1, 1),
               ops::Const(s, Tensor::FromVector<double>({0, 50})),
               ops::Const(s, Tensor::FromVector<double>({0.4, 1.0, 0.99}, TensorShape({3, 1}))),
               DT_FLOAT)),
      TensorShape({3, 2}), {0, 20, 0, 50, 0, 49});
}

TEST(DistributionOpsTest, StatefulBinomialIsTensorFlowsAndAdvancesTheState) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output state = ops::VarHandleOp(s, DT_INT64, TensorShape({3}));
  Node* init = ops::AssignVariableOp(
      s, state, ops::Const(s, Tensor::FromVector<int64_t>({12345, 0, 77})));
  Output draw = ops::StatefulRandomBinomial(
      s.WithControlDependencies(std::vector<Node*>{init}), state, ops::Const(s, Tensor::FromVector<int32_t>({7, 2})),
      ops::Const(s, Tensor::FromVector<float>({20, 200})),
      ops::Const(s, Tensor::FromVector<float>({0.25f, 0.6f})));
  Output after = ops::ReadVariableOp(s.WithControlDependencies(std::vector<Output>{draw}), state, DT_INT64);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({}, {draw.name(), after.name()}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor<int64_t>((*out)[0], TensorShape({7, 2}),
                        {5, 123, 8, 115, 5, 122, 11, 113, 6, 112, 4, 119, 1, 125});
  ExpectTensor<int64_t>((*out)[1], TensorShape({3}), {268345, 0, 77});
}

TEST(DistributionOpsTest, Errors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> r = TryEval(
      s, {},
      ops::StatelessRandomGammaV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2, 3})), Seed(s, 1, 2),
                                  ops::Const(s, Tensor::FromVector<float>({1, 2}, TensorShape({2, 1})))));
  EXPECT_THAT(r.status().message(), HasSubstr("Shape passed in must end with broadcasted shape"));
  r = TryEval(s, {},
              ops::RandomGamma(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                               ops::Const(s, Tensor::FromVector<float>({}, TensorShape({0})))));
  EXPECT_THAT(r.status().message(), HasSubstr("alpha should have non-zero element count"));
  r = TryEval(s, {},
              ops::RandomGamma(s, ops::Const(s, Tensor::FromVector<int32_t>({-1})),
                               ops::Const(s, Tensor::FromVector<float>({1}))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = TryEval(s, {},
              ops::StatelessRandomGammaV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                          ops::Const(s, Tensor::FromVector<int64_t>({1, 2, 3})),
                                          ops::Const(s, 1.0f)));
  EXPECT_THAT(r.status().message(), HasSubstr("seed must have shape [2]"));
  r = TryEval(s, {},
              ops::StatelessRandomBinomial(s, ops::Const(s, Tensor::FromVector<int32_t>({2, 5})),
                                           Seed(s, 1, 2),
                                           ops::Const(s, Tensor::FromVector<float>({1, 2, 3, 4, 5}, TensorShape({1, 5}))),
                                           ops::Const(s, 0.5f)));
  EXPECT_THAT(r.status().message(), HasSubstr("Shape passed in must end with broadcasted shape"));
  r = TryEval(s, {},
              ops::StatelessRandomBinomial(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                           Seed(s, 1, 2), ops::Const(s, Tensor::FromVector<float>({1, 2, 3})),
                                           ops::Const(s, Tensor::FromVector<float>({0.5f, 0.5f}))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  Output state = ops::VarHandleOp(s, DT_INT64, TensorShape({3}));
  r = TryEval(s, {},
              ops::StatefulRandomBinomial(s, state, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                          ops::Const(s, 5.0f), ops::Const(s, 0.5f), DT_INT64,
                                          /*algorithm=*/3));
  EXPECT_THAT(r.status().message(), HasSubstr("Unsupported algorithm id: 3"));
}

TEST(DistributionOpsTest, EdgesNeverHang) {
  // Where TensorFlow loops forever (a NaN rate or count), Sluice returns.
  Scope s = Scope::NewRootScope(BuiltinOps());
  const double nan = std::nan("");
  Tensor p = Eval(s, {},
                  ops::StatelessRandomPoisson(s, ops::Const(s, Tensor::FromVector<int32_t>({3})),
                                              Seed(s, 1, 2),
                                              ops::Const(s, Tensor::FromVector<double>({nan, INFINITY, -2})),
                                              DT_DOUBLE));
  EXPECT_TRUE(std::isnan(p.flat<double>()[0]));
  EXPECT_EQ(p.flat<double>()[1], INFINITY);
  EXPECT_EQ(p.flat<double>()[2], 0);
  Tensor b = Eval(s, {},
                  ops::StatelessRandomBinomial(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                               Seed(s, 1, 2),
                                               ops::Const(s, Tensor::FromVector<double>({nan, 10})),
                                               ops::Const(s, Tensor::FromVector<double>({0.5, nan})),
                                               DT_DOUBLE));
  EXPECT_TRUE(std::isnan(b.flat<double>()[0]));
  EXPECT_TRUE(std::isnan(b.flat<double>()[1]));
  // A draw beyond the output type saturates.
  Tensor big = Eval(s, {},
                    ops::StatelessRandomBinomial(s, ops::Const(s, Tensor::FromVector<int32_t>({1})), Seed(s, 1, 2),
                                                 ops::Const(s, 1e12), ops::Const(s, 1.0), DT_INT32));
  EXPECT_EQ(big.flat<int32_t>()[0], std::numeric_limits<int32_t>::max());
  // Gamma's edges: alpha 0 gives 0, below 0 NaN.
  Tensor g = Eval(s, {},
                  ops::StatelessRandomGammaV2(s, ops::Const(s, Tensor::FromVector<int32_t>({2})),
                                              Seed(s, 1, 2),
                                              ops::Const(s, Tensor::FromVector<double>({0, -1}))));
  EXPECT_EQ(g.flat<double>()[0], 0);
  EXPECT_TRUE(std::isnan(g.flat<double>()[1]));
}

}  // namespace
}  // namespace sluice
