#include "ops/random/random_ops.h"

#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using RandomFn = Output (*)(const Scope&, Input, DataType, const ops::RandomAttrs&,
                            std::source_location);

// Builds `fn` in a fresh graph and session; runs it `runs` times.
std::vector<std::vector<double>> Draw(RandomFn fn, Input shape, DataType dtype,
                                      ops::RandomAttrs attrs, int runs) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output r = fn(s, shape, dtype, attrs, std::source_location::current());
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  std::vector<std::vector<double>> out;
  for (int i = 0; i < runs && sess.ok(); ++i) {
    absl::StatusOr<std::vector<Tensor>> t = (*sess)->Run({}, {r}, {});
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) break;
    const Tensor& v = (*t)[0];
    EXPECT_EQ(v.dtype(), dtype);
    std::vector<double> values;
    for (int64_t j = 0; j < v.NumElements(); ++j) {
      switch (dtype) {
        case DT_FLOAT: values.push_back(v.data<float>()[j]); break;
        case DT_HALF: values.push_back(v.data<Half>()[j].ToFloat()); break;
        case DT_BFLOAT16: values.push_back(v.data<BFloat16>()[j].ToFloat()); break;
        default: values.push_back(v.data<double>()[j]);
      }
    }
    out.push_back(std::move(values));
  }
  return out;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / v.size();
}

double StdDev(const std::vector<double>& v) {
  const double m = Mean(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / v.size());
}

TEST(RandomOpsTest, ShapeInference) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output known = ops::RandomUniform(s, {2, 3}, DT_FLOAT);
  EXPECT_EQ(known.shape(), TensorShape({2, 3}));
  EXPECT_EQ(known.dtype(), DT_FLOAT);
  Output dims = ops::Placeholder(s, DT_INT32, {.shape = TensorShape({3})});
  Output partial = ops::TruncatedNormal(s, dims, DT_DOUBLE);
  EXPECT_EQ(partial.shape(), TensorShape::UnknownOfRank(3));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(known.node->IsStateful());
}

TEST(RandomOpsTest, BadShapeAtBuildTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::RandomUniform(s, {2, -3}, DT_FLOAT);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find("negative"), std::string::npos) << s.status();

  Scope s2 = Scope::NewRootScope(BuiltinOps());
  Output m = ops::Placeholder(s2, DT_INT32, {.shape = TensorShape({2, 2})});
  ops::RandomStandardNormal(s2, m, DT_FLOAT);
  EXPECT_EQ(s2.status().code(), absl::StatusCode::kInvalidArgument) << s2.status();
  EXPECT_NE(s2.status().message().find("[2,2]"), std::string::npos) << s2.status();
}

TEST(RandomOpsTest, BadShapeAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output dims = ops::Placeholder(s.WithOpName("dims"), DT_INT64);
  Output r = ops::RandomUniform(s, dims, DT_FLOAT);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::Status status =
      (*sess)->Run({{dims, Tensor::FromVector<int64_t>({4, -1})}}, {r}, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("negative"), std::string::npos) << status;
  absl::StatusOr<std::vector<Tensor>> ok =
      (*sess)->Run({{dims, Tensor::FromVector<int64_t>({4, 5})}}, {r}, {});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].shape(), TensorShape({4, 5}));
}

TEST(RandomOpsTest, SeededIsReproducibleAcrossSessionsAndAdvancesPerRun) {
  for (RandomFn fn : {&ops::RandomUniform, &ops::RandomStandardNormal, &ops::TruncatedNormal}) {
    auto a = Draw(fn, {50}, DT_FLOAT, {.seed = 7, .seed2 = 3}, 2);
    auto b = Draw(fn, {50}, DT_FLOAT, {.seed = 7, .seed2 = 3}, 2);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(a, b);        // same graph, same sequence
    EXPECT_NE(a[0], a[1]);  // each run draws new values
    auto c = Draw(fn, {50}, DT_FLOAT, {.seed = 7, .seed2 = 4}, 1);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NE(a[0], c[0]);  // another seed, another sequence
  }
}

TEST(RandomOpsTest, UnseededDiffersBetweenSessions) {
  auto a = Draw(&ops::RandomUniform, {20}, DT_DOUBLE, {}, 1);
  auto b = Draw(&ops::RandomUniform, {20}, DT_DOUBLE, {}, 1);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(a[0], b[0]);
}

// Half and bfloat16 hold few bits: a uniform rounded to them from a wider one
// reached 1.0 once in 2^12 (Half) or 2^9 (bfloat16) draws.
TEST(RandomOpsTest, UniformRangeAndMoments) {
  for (DataType dtype : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16}) {
    SCOPED_TRACE(DataTypeName(dtype));
    auto r = Draw(&ops::RandomUniform, {20000}, dtype, {.seed = 1}, 1);
    ASSERT_EQ(r.size(), 1u);
    for (double x : r[0]) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0);
    }
    EXPECT_NEAR(Mean(r[0]), 0.5, 0.01);
    EXPECT_NEAR(StdDev(r[0]), std::sqrt(1.0 / 12), 0.01);
  }
}

TEST(RandomOpsTest, NormalMoments) {
  auto r = Draw(&ops::RandomStandardNormal, {20000}, DT_DOUBLE, {.seed = 2}, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NEAR(Mean(r[0]), 0.0, 0.03);
  EXPECT_NEAR(StdDev(r[0]), 1.0, 0.03);
  double max_abs = 0;
  for (double x : r[0]) max_abs = std::max(max_abs, std::fabs(x));
  EXPECT_GT(max_abs, 2.5);  // the tails are there
}

TEST(RandomOpsTest, TruncatedNormalStaysWithinTwoStddevs) {
  auto r = Draw(&ops::TruncatedNormal, {20000}, DT_FLOAT, {.seed = 3}, 1);
  ASSERT_EQ(r.size(), 1u);
  for (double x : r[0]) ASSERT_LE(std::fabs(x), 2.0);
  EXPECT_NEAR(Mean(r[0]), 0.0, 0.03);
  // The standard deviation of N(0,1) truncated to [-2, 2] is about 0.880.
  EXPECT_NEAR(StdDev(r[0]), 0.880, 0.02);
}

TEST(RandomOpsTest, UniformIntRangeAndErrors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output r = ops::RandomUniformInt(s, {1000}, 2, 7, {.seed = 5});
  Output lo = ops::Placeholder(s.WithOpName("lo"), DT_INT64);
  Output bad = ops::RandomUniformInt(s, {3}, lo, Input(int64_t{1}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(r.dtype(), DT_INT32);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok()) << sess.status();
  absl::StatusOr<std::vector<Tensor>> out = (*sess)->Run({}, {r}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  std::set<int32_t> seen;
  for (int32_t v : (*out)[0].flat<int32_t>()) {
    ASSERT_GE(v, 2);
    ASSERT_LT(v, 7);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);
  absl::Status status = (*sess)->Run({{lo, Tensor::Scalar<int64_t>(1)}}, {bad}, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("minval < maxval"), std::string::npos) << status;
}

}  // namespace
}  // namespace sluice
