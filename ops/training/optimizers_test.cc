#include "ops/training/optimizers.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

// loss = (w - 3)^2 for a scalar float variable w starting at `start`.
struct Quadratic {
  explicit Quadratic(float start) : s(Scope::NewRootScope(BuiltinOps())) {
    w = ops::VariableWithInit(s.WithOpName("w"), start);
    loss = ops::Square(s.WithOpName("loss"), ops::Sub(s, w.var, 3.0f));
  }
  Scope s;
  ops::VariableAndInit w;
  Output loss;
};

std::unique_ptr<Session> MakeSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

template <typename T>
T FetchScalar(Session* sess, const Output& fetch) {
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {fetch}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].scalar<T>() : T();
}

// Minimizes with `opt` for `steps` steps from w = 0: the final w, and the
// names of the optimizer's initializers (the graph dies with `q`).
struct TrainResult {
  float w = NAN;
  std::vector<std::string> initializers;
};
TrainResult Train(Optimizer* opt, int steps) {
  Quadratic q(0.0f);
  TrainResult result;
  absl::StatusOr<Node*> train = opt->Minimize(q.s, q.loss, {q.w.var});
  EXPECT_TRUE(train.ok()) << train.status();
  if (!train.ok()) return result;
  for (Node* n : opt->initializers()) result.initializers.push_back(n->name());
  Node* init = ops::GlobalVariablesInitializer(q.s);
  std::unique_ptr<Session> sess = MakeSession(q.s);
  if (sess == nullptr) return result;
  EXPECT_TRUE(sess->Run({}, {}, {init}).ok());
  for (int i = 0; i < steps; ++i) {
    absl::Status status = sess->Run({}, {}, {*train}).status();
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return result;
  }
  result.w = FetchScalar<float>(sess.get(), q.w.var);
  return result;
}

TEST(OptimizersTest, GradientDescentOneStepByHand) {
  Quadratic q(5.0f);
  GradientDescentOptimizer gd(0.1);
  GlobalStep step = CreateGlobalStep(q.s);
  ASSERT_TRUE(q.s.ok()) << q.s.status();
  EXPECT_EQ(step.ref.node->name(), "global_step");
  EXPECT_EQ(step.ref.dtype(), MakeRefType(DT_INT64));
  absl::StatusOr<Node*> train = gd.Minimize(q.s, q.loss, {q.w.var}, &step.ref);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)->name(), "GradientDescent");
  EXPECT_TRUE(gd.initializers().empty());
  std::unique_ptr<Session> sess = MakeSession(q.s);
  ASSERT_TRUE(sess->Run({}, {}, std::vector<Node*>{q.w.initializer, step.initializer}).ok());
  EXPECT_EQ(FetchScalar<int64_t>(sess.get(), step.ref), 0);
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  // grad = 2 (w - 3) = 4; w = 5 - 0.1 * 4.
  EXPECT_FLOAT_EQ(FetchScalar<float>(sess.get(), q.w.var), 4.6f);
  EXPECT_EQ(FetchScalar<int64_t>(sess.get(), step.ref), 1);
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  EXPECT_EQ(FetchScalar<int64_t>(sess.get(), step.ref), 3);
}

TEST(OptimizersTest, GradientDescentConverges) {
  GradientDescentOptimizer gd(0.1);
  EXPECT_NEAR(Train(&gd, 100).w, 3.0f, 1e-3);
}

TEST(OptimizersTest, MomentumConverges) {
  MomentumOptimizer momentum(0.05, 0.9);
  TrainResult r = Train(&momentum, 300);
  EXPECT_NEAR(r.w, 3.0f, 1e-3);
  EXPECT_EQ(r.initializers, std::vector<std::string>{"w/Momentum/Assign"});
}

TEST(OptimizersTest, NesterovMomentumConverges) {
  MomentumOptimizer momentum(0.05, 0.9, /*use_nesterov=*/true);
  EXPECT_NEAR(Train(&momentum, 300).w, 3.0f, 1e-3);
}

TEST(OptimizersTest, AdamConverges) {
  AdamOptimizer adam(0.1);
  TrainResult r = Train(&adam, 500);
  EXPECT_NEAR(r.w, 3.0f, 1e-2);
  EXPECT_EQ(r.initializers, (std::vector<std::string>{"beta1_power/Assign", "beta2_power/Assign",
                                                      "w/Adam/Assign", "w/Adam_1/Assign"}));
}

TEST(OptimizersTest, AdamFirstStepAndSlots) {
  Quadratic q(5.0f);
  AdamOptimizer adam(0.1);
  absl::StatusOr<Node*> train = adam.Minimize(q.s, q.loss, {q.w.var});
  ASSERT_TRUE(train.ok()) << train.status();
  Output m = adam.GetSlot(q.w.var, "m");
  Output v = adam.GetSlot(q.w.var, "v");
  ASSERT_TRUE(m.valid());
  ASSERT_TRUE(v.valid());
  EXPECT_EQ(m.node->name(), "w/Adam");
  EXPECT_EQ(v.node->name(), "w/Adam_1");
  EXPECT_FALSE(adam.GetSlot(q.w.var, "momentum").valid());
  // Slots live with their variable.
  EXPECT_EQ(m.node->ColocationNames(), std::vector<std::string>{"w"});
  Node* beta1_power = q.s.graph()->FindNode("beta1_power");
  ASSERT_NE(beta1_power, nullptr);
  Node* init = ops::GlobalVariablesInitializer(q.s);
  std::unique_ptr<Session> sess = MakeSession(q.s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  EXPECT_FLOAT_EQ(FetchScalar<float>(sess.get(), Output(beta1_power)), 0.9f);
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  // g = 4: m = 0.4, v = 0.016; lr_t * m / sqrt(v) = lr exactly (up to epsilon).
  EXPECT_NEAR(FetchScalar<float>(sess.get(), q.w.var), 4.9f, 1e-5);
  EXPECT_NEAR(FetchScalar<float>(sess.get(), m), 0.4f, 1e-6);
  EXPECT_NEAR(FetchScalar<float>(sess.get(), v), 0.016f, 1e-6);
  EXPECT_NEAR(FetchScalar<float>(sess.get(), Output(beta1_power)), 0.81f, 1e-6);
}

TEST(OptimizersTest, RMSPropConverges) {
  RMSPropOptimizer rmsprop(0.02);
  TrainResult r = Train(&rmsprop, 500);
  EXPECT_NEAR(r.w, 3.0f, 1e-3);
  // TensorFlow's slot names: rms, then momentum.
  EXPECT_EQ(r.initializers, (std::vector<std::string>{"w/RMSProp/Assign", "w/RMSProp_1/Assign"}));
}

TEST(OptimizersTest, CenteredRMSPropWithMomentumConverges) {
  RMSPropOptimizer rmsprop(0.01, {.momentum = 0.9, .centered = true});
  TrainResult r = Train(&rmsprop, 500);
  EXPECT_NEAR(r.w, 3.0f, 1e-2);
  EXPECT_EQ(r.initializers, (std::vector<std::string>{"w/RMSProp/Assign", "w/RMSProp_1/Assign",
                                                      "w/RMSProp_2/Assign"}));
}

// One step from w = 5 (g = 4) with lr 0.1, rho 0.9: rms starts at 1, so
// rms = 1 + (16 - 1) * 0.1 = 2.5; centered, mg = 0.4 and the denominator is
// sqrt(2.5 - 0.16).
TEST(OptimizersTest, RMSPropFirstStepByHand) {
  for (bool centered : {false, true}) {
    SCOPED_TRACE(centered ? "centered" : "plain");
    Quadratic q(5.0f);
    RMSPropOptimizer rmsprop(0.1, {.centered = centered});
    absl::StatusOr<Node*> train = rmsprop.Minimize(q.s, q.loss, {q.w.var});
    ASSERT_TRUE(train.ok()) << train.status();
    const Output rms = rmsprop.GetSlot(q.w.var, "rms");
    const Output mom = rmsprop.GetSlot(q.w.var, "momentum");
    ASSERT_TRUE(rms.valid() && mom.valid());
    EXPECT_EQ(rmsprop.GetSlot(q.w.var, "mg").valid(), centered);
    EXPECT_EQ(rms.node->ColocationNames(), std::vector<std::string>{"w"});
    Node* init = ops::GlobalVariablesInitializer(q.s);
    std::unique_ptr<Session> sess = MakeSession(q.s);
    ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
    EXPECT_FLOAT_EQ(FetchScalar<float>(sess.get(), rms), 1.0f);
    ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
    const double step = 0.4 / std::sqrt(centered ? 2.34 : 2.5);
    EXPECT_NEAR(FetchScalar<float>(sess.get(), rms), 2.5f, 1e-6);
    EXPECT_NEAR(FetchScalar<float>(sess.get(), mom), step, 1e-6);
    EXPECT_NEAR(FetchScalar<float>(sess.get(), q.w.var), 5.0 - step, 1e-6);
  }
}

TEST(OptimizersTest, AdadeltaConverges) {
  AdadeltaOptimizer adadelta(1.0, 0.95, 1e-6);
  TrainResult r = Train(&adadelta, 1000);
  EXPECT_NEAR(r.w, 3.0f, 1e-2);
  EXPECT_EQ(r.initializers,
            (std::vector<std::string>{"w/Adadelta/Assign", "w/Adadelta_1/Assign"}));
}

// One step from w = 5 (g = 4), lr 1, rho 0.95, epsilon 1e-6: accum = 0.8,
// update = sqrt(1e-6) / sqrt(0.8 + 1e-6) * 4, accum_update = 0.05 update^2.
TEST(OptimizersTest, AdadeltaFirstStepByHand) {
  Quadratic q(5.0f);
  AdadeltaOptimizer adadelta(1.0, 0.95, 1e-6);
  absl::StatusOr<Node*> train = adadelta.Minimize(q.s, q.loss, {q.w.var});
  ASSERT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(q.s);
  std::unique_ptr<Session> sess = MakeSession(q.s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  const double update = 1e-3 / std::sqrt(0.8 + 1e-6) * 4;
  EXPECT_NEAR(FetchScalar<float>(sess.get(), adadelta.GetSlot(q.w.var, "accum")), 0.8f, 1e-6);
  EXPECT_NEAR(FetchScalar<float>(sess.get(), adadelta.GetSlot(q.w.var, "accum_update")),
              0.05 * update * update, 1e-10);
  EXPECT_NEAR(FetchScalar<float>(sess.get(), q.w.var), 5.0 - update, 1e-6);
}

TEST(OptimizersTest, ComputeThenApplyGradients) {
  Quadratic q(5.0f);
  GradientDescentOptimizer gd(0.25);
  absl::StatusOr<std::vector<GradAndVar>> gvs = gd.ComputeGradients(q.s, q.loss, {q.w.var});
  ASSERT_TRUE(gvs.ok()) << gvs.status();
  ASSERT_EQ(gvs->size(), 1u);
  ASSERT_TRUE((*gvs)[0].grad.valid());
  absl::StatusOr<Node*> train = gd.ApplyGradients(q.s, *gvs);
  ASSERT_TRUE(train.ok()) << train.status();
  std::unique_ptr<Session> sess = MakeSession(q.s);
  ASSERT_TRUE(sess->Run({}, {}, {q.w.initializer}).ok());
  EXPECT_FLOAT_EQ(FetchScalar<float>(sess.get(), (*gvs)[0].grad), 4.0f);
  ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  EXPECT_FLOAT_EQ(FetchScalar<float>(sess.get(), q.w.var), 4.0f);
}

TEST(OptimizersTest, NoGradientIsInvalidArgument) {
  Quadratic q(1.0f);
  ops::VariableAndInit other = ops::VariableWithInit(q.s.WithOpName("other"), 1.0f);
  GradientDescentOptimizer gd(0.1);
  absl::StatusOr<Node*> train = gd.Minimize(q.s, q.loss, {other.var});
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument) << train.status();
  EXPECT_NE(train.status().message().find("no gradients"), std::string::npos) << train.status();
  EXPECT_NE(train.status().message().find("other"), std::string::npos) << train.status();
}

TEST(OptimizersTest, NonVariableIsInvalidArgument) {
  Quadratic q(1.0f);
  Output x = ops::Placeholder(q.s.WithOpName("x"), DT_FLOAT);
  GradientDescentOptimizer gd(0.1);
  absl::StatusOr<Node*> train = gd.Minimize(q.s, q.loss, {x});
  EXPECT_EQ(train.status().code(), absl::StatusCode::kInvalidArgument) << train.status();
  EXPECT_NE(train.status().message().find("not a variable"), std::string::npos) << train.status();
}

TEST(OptimizersTest, VectorVariableWithSum) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {0.0f, 10.0f});
  Output loss = ops::Sum(s, ops::Square(s, ops::Sub(s, w.var, {3.0f, -1.0f})), {0});
  MomentumOptimizer opt(0.05, 0.5);
  absl::StatusOr<Node*> train = opt.Minimize(s, loss, {w.var});
  ASSERT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(s);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(sess->Run({}, {}, {*train}).ok());
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {w.var}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].flat<float>()[0], 3.0f, 1e-3);
  EXPECT_NEAR((*out)[0].flat<float>()[1], -1.0f, 1e-3);
}

}  // namespace
}  // namespace sluice
