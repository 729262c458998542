#include "training/loss_scale.h"

#include <memory>
#include <vector>

#include "builtin_session.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "placement/auto_mixed_precision.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

// loss = sum(w * x) + 0.5 * sum(w * w) over a 3-vector w, trained by SGD with
// momentum (so a skipped step must leave a slot untouched too).
struct Model {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x, w, loss, step;
  std::vector<Node*> inits;

  Model() {
    x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
    ops::VariableAndInit v =
        ops::VariableWithInit(s.WithOpName("w"), ops::Const(s, {1.0f, -2.0f, 0.5f}));
    ops::VariableAndInit g =
        ops::VariableWithInit(s.WithOpName("global_step"), ops::Const(s, int64_t{0}));
    w = v.var;
    step = g.var;
    inits = {v.initializer, g.initializer};
    Output r = ops::Identity(s, w);
    loss = ops::Add(s, ops::Sum(s, ops::Mul(s, r, x), {0}),
                    ops::Mul(s, ops::Sum(s, ops::Mul(s, r, r), {0}), 0.5f));
  }
};

Tensor Vec(std::vector<float> v) {
  return Tensor::FromVector<float>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

std::unique_ptr<Session> Open(const Model& m) {
  absl::StatusOr<std::unique_ptr<Session>> s = NewSession(BuiltinSessionConfig(), *m.s.graph());
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// The gradients are unscaled in float even under float16 mixed precision:
// every Mul by the scale's reciprocal carries the rewrite's deny attr.
TEST(LossScaleOptimizerTest, TheUnscalingIsKeptFloatUnderMixedPrecision) {
  Model m;
  GradientDescentOptimizer sgd(0.1);
  LossScaleOptimizer scaled(&sgd);
  absl::StatusOr<Node*> train = scaled.Minimize(m.s.WithOpName("train"), m.loss, {m.w});
  ASSERT_TRUE(train.ok()) << train.status();
  int unscaling = 0;
  for (const Node* n : m.s.graph()->nodes()) {
    if (n->op() != "Reciprocal") continue;
    for (const Edge* e : n->out_edges()) {
      if (e->IsControl() || e->dst->op() != "Mul") continue;
      ++unscaling;
      EXPECT_TRUE(e->dst->GetAttr<bool>(kMixedPrecisionDenyAttr).value_or(false))
          << e->dst->DebugName();
    }
  }
  EXPECT_EQ(unscaling, 1);  // one variable, one gradient
}

TEST(LossScaleOptimizerTest, FiniteStepsApplyTheUnscaledGradientAndTheScaleGrows) {
  Model scaled_model, plain_model;
  MomentumOptimizer a(0.1, 0.9), b(0.1, 0.9);
  LossScaleOptimizer scaled(&a, {.initial_scale = 1024, .increment_period = 3});
  absl::StatusOr<Node*> train =
      scaled.Minimize(scaled_model.s, scaled_model.loss, {scaled_model.w}, &scaled_model.step);
  ASSERT_TRUE(train.ok()) << train.status();
  absl::StatusOr<Node*> plain =
      b.Minimize(plain_model.s, plain_model.loss, {plain_model.w}, &plain_model.step);
  ASSERT_TRUE(plain.ok()) << plain.status();
  std::vector<Node*> init = scaled_model.inits;
  init.insert(init.end(), scaled.initializers().begin(), scaled.initializers().end());
  init.insert(init.end(), a.initializers().begin(), a.initializers().end());
  std::vector<Node*> plain_init = plain_model.inits;
  plain_init.insert(plain_init.end(), b.initializers().begin(), b.initializers().end());
  std::unique_ptr<Session> s1 = Open(scaled_model), s2 = Open(plain_model);
  ASSERT_TRUE(s1 && s2);
  ASSERT_TRUE(s1->Run({}, {}, init).ok());
  ASSERT_TRUE(s2->Run({}, {}, plain_init).ok());
  const std::vector<float> scales = {1024, 1024, 2048, 2048};  // after each step
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(s1->Run({{scaled_model.x, Vec({0.5f, 1.5f, -1.0f})}}, {}, {*train}).ok());
    ASSERT_TRUE(s2->Run({{plain_model.x, Vec({0.5f, 1.5f, -1.0f})}}, {}, {*plain}).ok());
    absl::StatusOr<std::vector<Tensor>> got =
        s1->Run({}, {scaled_model.w, scaled.loss_scale(), scaled_model.step}, {});
    absl::StatusOr<std::vector<Tensor>> want = s2->Run({}, {plain_model.w}, {});
    ASSERT_TRUE(got.ok() && want.ok());
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR((*got)[0].flat<float>()[j], (*want)[0].flat<float>()[j], 1e-6) << i;
    }
    EXPECT_EQ((*got)[1].scalar<float>(), scales[i]) << "step " << i;
    EXPECT_EQ((*got)[2].scalar<int64_t>(), i + 1);
  }
}

TEST(LossScaleOptimizerTest, AnOverflowingStepIsSkippedAndHalvesTheScale) {
  Model m;
  MomentumOptimizer inner(0.1, 0.9);
  LossScaleOptimizer scaled(&inner, {.initial_scale = 1024});
  absl::StatusOr<Node*> train = scaled.Minimize(m.s, m.loss, {m.w}, &m.step);
  ASSERT_TRUE(train.ok()) << train.status();
  std::vector<Node*> init = m.inits;
  init.insert(init.end(), scaled.initializers().begin(), scaled.initializers().end());
  init.insert(init.end(), inner.initializers().begin(), inner.initializers().end());
  std::unique_ptr<Session> sess = Open(m);
  ASSERT_TRUE(sess && sess->Run({}, {}, init).ok());
  Output momentum = inner.GetSlot(m.w, "momentum");
  ASSERT_TRUE(momentum.valid());
  // A good step first: w and the momentum move.
  ASSERT_TRUE(sess->Run({{m.x, Vec({0.5f, 1.5f, -1.0f})}}, {}, {*train}).ok());
  absl::StatusOr<std::vector<Tensor>> before =
      sess->Run({}, {m.w, momentum, scaled.good_steps()}, {});
  ASSERT_TRUE(before.ok());
  EXPECT_EQ((*before)[2].scalar<int64_t>(), 1);
  // x * 1024 overflows float: the step runs, but updates nothing.
  ASSERT_TRUE(sess->Run({{m.x, Vec({1e37f, 1.0f, 1.0f})}}, {}, {*train}).ok());
  absl::StatusOr<std::vector<Tensor>> after =
      sess->Run({}, {m.w, momentum, scaled.loss_scale(), scaled.good_steps(), m.step}, {});
  ASSERT_TRUE(after.ok());
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ((*after)[0].flat<float>()[j], (*before)[0].flat<float>()[j]);
    EXPECT_EQ((*after)[1].flat<float>()[j], (*before)[1].flat<float>()[j]);
  }
  EXPECT_EQ((*after)[2].scalar<float>(), 512.0f);
  EXPECT_EQ((*after)[3].scalar<int64_t>(), 0);
  EXPECT_EQ((*after)[4].scalar<int64_t>(), 1);  // global_step did not advance
  // And training goes on.
  ASSERT_TRUE(sess->Run({{m.x, Vec({0.5f, 1.5f, -1.0f})}}, {}, {*train}).ok());
  absl::StatusOr<std::vector<Tensor>> next = sess->Run({}, {m.w, m.step}, {});
  ASSERT_TRUE(next.ok());
  EXPECT_NE((*next)[0].flat<float>()[0], (*after)[0].flat<float>()[0]);
  EXPECT_EQ((*next)[1].scalar<int64_t>(), 2);
}

// The scale never grows past float's range (where every step would be
// skipped from then on).
TEST(LossScaleOptimizerTest, TheScaleStopsShortOfInfinity) {
  Model m;
  GradientDescentOptimizer inner(0.1);
  LossScaleOptimizer scaled(&inner, {.initial_scale = 2e38, .increment_period = 1});
  absl::StatusOr<Node*> train = scaled.Minimize(m.s, m.loss, {m.w});
  ASSERT_TRUE(train.ok()) << train.status();
  std::vector<Node*> init = m.inits;
  init.insert(init.end(), scaled.initializers().begin(), scaled.initializers().end());
  std::unique_ptr<Session> sess = Open(m);
  ASSERT_TRUE(sess && sess->Run({}, {}, init).ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(sess->Run({{m.x, Vec({0.5f, 1.5f, -1.0f})}}, {}, {*train}).ok());
  }
  absl::StatusOr<std::vector<Tensor>> got = sess->Run({}, {scaled.loss_scale(), m.w}, {});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)[0].scalar<float>(), 2e38f);
  EXPECT_NE((*got)[1].flat<float>()[0], 1.0f);  // the steps were applied
}

TEST(LossScaleOptimizerTest, BadArgumentsAreInvalidArgument) {
  Model m;
  GradientDescentOptimizer sgd(0.1);
  LossScaleOptimizer zero(&sgd, {.initial_scale = 0.5});
  EXPECT_EQ(zero.Minimize(m.s, m.loss, {m.w}).status().code(), absl::StatusCode::kInvalidArgument);
  LossScaleOptimizer ok(&sgd);
  Output int_loss = ops::Const(m.s, 3);
  EXPECT_EQ(ok.Minimize(m.s, int_loss, {m.w}).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(ok.Minimize(m.s, m.loss, {m.w}).ok());
  absl::Status again = ok.Minimize(m.s, m.loss, {m.w}).status();
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(again.message().find("already"), std::string::npos) << again;
}

}  // namespace
}  // namespace sluice
