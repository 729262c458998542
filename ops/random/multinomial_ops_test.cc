// Multinomial and StatelessMultinomial against the ids TensorFlow 2.21 drew
// for the same logits and seeds (tf.random.stateless_categorical,
// raw_ops.Multinomial run twice in one session), a distribution check over
// many draws, and TensorFlow's errors.
#include "ops/random/multinomial_ops.h"

#include <cmath>
#include <limits>
#include <vector>

#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::ExpectTensor;
using testing_util::Placeholder;
using testing_util::TryEval;

Tensor Logits() {
  const float inf = std::numeric_limits<float>::infinity();
  return Tensor::FromVector<float>({0.5f, 1, -0.25f, 2, -inf, 0, 0, 1}, TensorShape({2, 4}));
}

TEST(MultinomialOpsTest, StatelessIdsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output l = ops::Const(s, Logits());
  ExpectTensor<int64_t>(
      Eval(s, {},
           ops::StatelessMultinomial(s, l, ops::Const(s, 6),
                                     ops::Const(s, Tensor::FromVector<int64_t>({7, 42})))),
      TensorShape({2, 6}), {3, 3, 1, 2, 0, 1, 1, 3, 2, 1, 1, 3});
  ExpectTensor<int32_t>(Eval(s, {},
                             ops::StatelessMultinomial(
                                 s, ops::Cast(s, l, DT_DOUBLE), ops::Const(s, 5),
                                 ops::Const(s, Tensor::FromVector<int32_t>({-3, 11})), DT_INT32)),
                        TensorShape({2, 5}), {3, 1, 2, 0, 3, 2, 1, 1, 1, 3});
}

TEST(MultinomialOpsTest, SeededStatefulRunsAreTensorFlows) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output m = ops::Multinomial(s, ops::Const(s, Logits()), ops::Const(s, 7), 3, 5);
  absl::StatusOr<std::unique_ptr<Session>> session = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> first = (*session)->Run({}, {m.name()}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectTensor<int64_t>((*first)[0], TensorShape({2, 7}),
                        {1, 0, 3, 3, 3, 3, 1, 1, 3, 2, 3, 3, 1, 3});
  absl::StatusOr<std::vector<Tensor>> second = (*session)->Run({}, {m.name()}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectTensor<int64_t>((*second)[0], TensorShape({2, 7}),
                        {3, 3, 3, 3, 3, 3, 3, 1, 2, 1, 2, 2, 3, 3});
}

TEST(MultinomialOpsTest, FrequenciesFollowTheSoftmax) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(5.0f)};  // 1 : 2 : 5
  Tensor ids = Eval(s, {},
                    ops::StatelessMultinomial(
                        s, ops::Const(s, Tensor::FromVector<float>(logits, TensorShape({1, 3}))),
                        ops::Const(s, 40000), ops::Const(s, Tensor::FromVector<int64_t>({1, 2}))));
  std::vector<int> counts(3, 0);
  for (int64_t id : ids.flat<int64_t>()) ++counts[id];
  EXPECT_NEAR(counts[0] / 40000.0, 1.0 / 8, 0.01);
  EXPECT_NEAR(counts[1] / 40000.0, 2.0 / 8, 0.01);
  EXPECT_NEAR(counts[2] / 40000.0, 5.0 / 8, 0.01);
}

TEST(MultinomialOpsTest, Errors) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output l = Placeholder(s, DT_FLOAT);
  Output n = Placeholder(s, DT_INT32);
  Output seed = Placeholder(s, DT_INT64);
  Output y = ops::StatelessMultinomial(s, l, n, seed);
  const Tensor good_seed = Tensor::FromVector<int64_t>({1, 2});
  const struct {
    Tensor logits, n, seed;
    const char* needle;
  } cases[] = {
      {Tensor::FromVector<float>({1, 2}), Tensor::Scalar<int32_t>(2), good_seed,
       "logits should be a matrix"},
      {Logits(), Tensor::Scalar<int32_t>(-1), good_seed, "num_samples should be non-negative"},
      {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::Scalar<int32_t>(1), good_seed,
       "num_classes should be positive"},
      {Logits(), Tensor::Scalar<int32_t>(1), Tensor::FromVector<int64_t>({1, 2, 3}),
       "seed must have shape [2]"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Tensor> r = TryEval(s, {{l, c.logits}, {n, c.n}, {seed, c.seed}}, y);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.needle;
    EXPECT_THAT(r.status().message(), HasSubstr(c.needle));
  }
}

}  // namespace
}  // namespace sluice
