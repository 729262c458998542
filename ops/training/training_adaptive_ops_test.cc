// The adaptive training ops (Adagrad, AdagradDA, ProximalAdagrad, Adadelta,
// RMSProp, CenteredRMSProp, Ftrl, FtrlV2) in their dense, sparse and resource forms.
// Expected values come from TensorFlow's optimizer tests where they give
// numbers (cited per test), else from the update formulas by hand.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

class AdaptiveTest : public ::testing::Test {
 protected:
  // A ref variable initialized to `init` (a literal or a Const).
  Output Var(const std::string& name, Input init) {
    ops::VariableAndInit v = ops::VariableWithInit(s_.WithOpName(name), init);
    inits_.push_back(v.initializer);
    return v.var;
  }
  Output Var2(const std::string& name, std::vector<float> values, TensorShape shape) {
    return Var(name, ops::Const<float>(s_.WithOpName(name + "_init"), values, shape));
  }

  void Start() {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
    ASSERT_TRUE(sess_->Run({}, {}, inits_).ok());
  }

  absl::Status Steps(std::vector<Node*> targets, int n) {
    for (int i = 0; i < n; ++i) RETURN_IF_ERROR(sess_->Run({}, {}, targets).status());
    return absl::OkStatus();
  }

  std::vector<double> Values(const Output& v) {
    absl::StatusOr<std::vector<Tensor>> out = sess_->Run({}, {v}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    const Tensor& t = (*out)[0];
    std::vector<double> r;
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      r.push_back(t.dtype() == DT_FLOAT ? t.flat<float>()[i] : t.flat<double>()[i]);
    }
    return r;
  }

  void ExpectValues(const Output& v, const std::vector<double>& want, double tol) {
    std::vector<double> got = Values(v);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
    }
  }

  absl::Status RunError(Node* target) { return sess_->Run({}, {}, {target}).status(); }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::vector<Node*> inits_;
  std::unique_ptr<Session> sess_;
};

// tensorflow/python/training/adagrad_test.py testBasic: lr 3, accumulators
// start at 0.1, three steps.
TEST_F(AdaptiveTest, AdagradMatchesTensorFlowTest) {
  Output var0 = Var("var0", {1.0f, 2.0f});
  Output var1 = Var("var1", {3.0f, 4.0f});
  Output acc0 = Var("acc0", {0.1f, 0.1f});
  Output acc1 = Var("acc1", {0.1f, 0.1f});
  Output u0 = ops::ApplyAdagrad(s_, var0, acc0, 3.0f, {0.1f, 0.1f});
  Output u1 = ops::ApplyAdagrad(s_, var1, acc1, 3.0f, {0.01f, 0.01f});
  EXPECT_EQ(u0.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(u0.shape(), TensorShape({2}));
  Start();
  ASSERT_TRUE(Steps({u0.node, u1.node}, 3).ok());
  ExpectValues(var0, {-1.6026098728179932, -0.6026098728179932}, 1e-6);
  ExpectValues(var1, {2.715679168701172, 3.715679168701172}, 1e-6);
  ExpectValues(acc0, {0.1 + 3 * 0.01, 0.1 + 3 * 0.01}, 1e-6);
}

TEST_F(AdaptiveTest, AdagradWithoutUpdateSlotsKeepsAccum) {
  Output var = Var("var", {1.0, 2.0});
  Output acc = Var("acc", {4.0, 0.25});
  Output u = ops::ApplyAdagrad(s_, var, acc, 0.5, {1.0, -1.0}, {.update_slots = false});
  Start();
  ASSERT_TRUE(Steps({u.node}, 1).ok());
  ExpectValues(var, {1.0 - 0.5 * 1.0 / 2.0, 2.0 + 0.5 * 1.0 / 0.5}, 1e-12);
  ExpectValues(acc, {4.0, 0.25}, 0);
}

// adagrad_test.py testSparseBasic: rows of [2, 1] variables, one index each.
TEST_F(AdaptiveTest, SparseAdagradMatchesTensorFlowTest) {
  Output var0 = Var2("var0", {1.0f, 2.0f}, TensorShape({2, 1}));
  Output var1 = Var2("var1", {3.0f, 4.0f}, TensorShape({2, 1}));
  Output acc0 = Var2("acc0", {0.1f, 0.1f}, TensorShape({2, 1}));
  Output acc1 = Var2("acc1", {0.1f, 0.1f}, TensorShape({2, 1}));
  Output g0 = ops::Const<float>(s_, {0.1f}, TensorShape({1, 1}));
  Output g1 = ops::Const<float>(s_, {0.01f}, TensorShape({1, 1}));
  Output u0 = ops::SparseApplyAdagrad(s_, var0, acc0, 3.0f, g0, {0});
  Output u1 = ops::SparseApplyAdagrad(s_, var1, acc1, 3.0f, g1, {int64_t{1}});
  EXPECT_EQ(u0.shape(), TensorShape({2, 1}));
  Start();
  ASSERT_TRUE(Steps({u0.node, u1.node}, 3).ok());
  ExpectValues(var0, {-1.6026098728179932, 2.0}, 1e-6);
  ExpectValues(var1, {3.0, 3.715679168701172}, 1e-6);
}

// Duplicate indices apply one after the other, as TensorFlow's CPU kernel.
TEST_F(AdaptiveTest, SparseAdagradDuplicateIndicesApplyInOrder) {
  Output var = Var("var", {1.0, 2.0});
  Output acc = Var("acc", {0.1, 0.1});
  Output u = ops::SparseApplyAdagrad(s_, var, acc, 3.0, {0.1, 0.2}, {1, 1});
  Start();
  ASSERT_TRUE(Steps({u.node}, 1).ok());
  const double a1 = 0.1 + 0.01, a2 = a1 + 0.04;
  ExpectValues(var, {1.0, 2.0 - 3.0 * 0.1 / std::sqrt(a1) - 3.0 * 0.2 / std::sqrt(a2)}, 1e-12);
  ExpectValues(acc, {0.1, a2}, 1e-12);
}

TEST_F(AdaptiveTest, SparseErrors) {
  Output var = Var("var", {1.0f, 2.0f});
  Output acc = Var("acc", {0.1f, 0.1f});
  Output indices = ops::Placeholder(s_.WithOpName("indices"), DT_INT32);
  Output grad = ops::Placeholder(s_.WithOpName("grad"), DT_FLOAT);
  Output u = ops::SparseApplyAdagrad(s_, var, acc, 3.0f, grad, indices);
  Start();
  auto run = [&](Tensor i, Tensor g) {
    return sess_->Run({{indices, std::move(i)}, {grad, std::move(g)}}, {}, {u.node}).status();
  };
  absl::Status st = run(Tensor::FromVector<int32_t>({0, 2}), Tensor::FromVector<float>({1, 1}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("Index 2 at offset 1 in indices is out of range"));
  st = run(Tensor::FromVector<int32_t>({-1}), Tensor::FromVector<float>({1}));
  EXPECT_THAT(st.message(), HasSubstr("Index -1 at offset 0"));
  st = run(Tensor::FromVector<int32_t>({0}), Tensor::FromVector<float>({1, 2}));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("grad must have shape [len(indices)] + var.shape[1:]"));
  // Nothing was written by the failing steps.
  ExpectValues(var, {1.0, 2.0}, 0);
  // No indices: nothing to do.
  st = run(Tensor::FromVector<int32_t>({}), Tensor::FromVector<float>({}));
  EXPECT_TRUE(st.ok()) << st;
  ExpectValues(var, {1.0, 2.0}, 0);
}

TEST_F(AdaptiveTest, SparseShapeErrorsAtBuildTime) {
  Output var = ops::Variable(s_.WithOpName("v"), TensorShape({3, 2}), DT_FLOAT);
  Output acc = ops::Variable(s_.WithOpName("a"), TensorShape({3, 2}), DT_FLOAT);
  Output grad = ops::Const<float>(s_, {1, 2, 3}, TensorShape({1, 3}));
  ops::SparseApplyAdagrad(s_, var, acc, 0.1f, grad, {0});
  EXPECT_EQ(s_.status().code(), absl::StatusCode::kInvalidArgument) << s_.status();
  EXPECT_THAT(s_.status().message(), HasSubstr("grad must have shape"));
}

// tensorflow/python/training/proximal_adagrad_test.py: lr 3, accumulators at
// 0.1; without regularization (3 steps), with L1 (10), with L1 and L2 (10).
TEST_F(AdaptiveTest, ProximalAdagradMatchesTensorFlowTests) {
  struct Case {
    float l1, l2;
    int steps;
    std::vector<float> init0, init1;
    std::vector<double> want0, want1;
  };
  for (const Case& c : {Case{0, 0, 3, {0, 0}, {0, 0}, {-2.60260963, -4.29698515},
                             {-0.28432083, -0.56694895}},
                        Case{0.001f, 0, 10, {1, 2}, {4, 3}, {-6.663634, -9.190331},
                             {2.959304, 1.029232}},
                        Case{0.001f, 2.0f, 10, {1, 2}, {4, 3}, {-0.0495, -0.0995},
                             {-0.0045, -0.0095}}}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output var0 = Var("var0", ops::Const<float>(s_, c.init0));
    Output var1 = Var("var1", ops::Const<float>(s_, c.init1));
    Output acc0 = Var("acc0", {0.1f, 0.1f});
    Output acc1 = Var("acc1", {0.1f, 0.1f});
    Output u0 = ops::ApplyProximalAdagrad(s_, var0, acc0, 3.0f, c.l1, c.l2, {0.1f, 0.2f});
    Output u1 = ops::ApplyProximalAdagrad(s_, var1, acc1, 3.0f, c.l1, c.l2, {0.01f, 0.02f});
    Start();
    ASSERT_TRUE(Steps({u0.node, u1.node}, c.steps).ok());
    ExpectValues(var0, c.want0, 1e-5);
    ExpectValues(var1, c.want1, 1e-5);
  }
}

// The sparse form over every row matches the dense form.
TEST_F(AdaptiveTest, SparseProximalAdagradMatchesDense) {
  Output dense = Var2("dense", {1, 2, 4, 3}, TensorShape({2, 2}));
  Output sparse = Var2("sparse", {1, 2, 4, 3}, TensorShape({2, 2}));
  Output acc_d = Var2("acc_d", {0.1f, 0.1f, 0.1f, 0.1f}, TensorShape({2, 2}));
  Output acc_s = Var2("acc_s", {0.1f, 0.1f, 0.1f, 0.1f}, TensorShape({2, 2}));
  Output grad = ops::Const<float>(s_, {0.1f, 0.2f, 0.01f, 0.02f}, TensorShape({2, 2}));
  Output ud = ops::ApplyProximalAdagrad(s_, dense, acc_d, 3.0f, 0.001f, 2.0f, grad);
  Output us = ops::SparseApplyProximalAdagrad(s_, sparse, acc_s, 3.0f, 0.001f, 2.0f, grad,
                                              {int64_t{0}, int64_t{1}});
  Start();
  ASSERT_TRUE(Steps({ud.node, us.node}, 10).ok());
  ExpectValues(dense, {-0.0495, -0.0995, -0.0045, -0.0095}, 1e-5);
  ExpectValues(sparse, Values(dense), 1e-6);
}

// SparseApplyMomentum equals ApplyMomentum on the rows it names (every row
// here, in two calls' worth of order), with and without Nesterov, and
// leaves the other rows alone.
TEST_F(AdaptiveTest, SparseMomentumMatchesDense) {
  for (bool nesterov : {false, true}) {
    const std::string tag = nesterov ? "n" : "p";
    Output dense = Var2("dense" + tag, {1, 2, 4, 3, 5, 6}, TensorShape({3, 2}));
    Output sparse = Var2("sparse" + tag, {1, 2, 4, 3, 5, 6}, TensorShape({3, 2}));
    Output acc_d = Var2("acc_d" + tag, {0, 0, 0, 0, 0, 0}, TensorShape({3, 2}));
    Output acc_s = Var2("acc_s" + tag, {0, 0, 0, 0, 0, 0}, TensorShape({3, 2}));
    Output grad = ops::Const<float>(s_, {0.1f, 0.2f, 0.01f, 0.02f, 0, 0}, TensorShape({3, 2}));
    Output rows = ops::Const<float>(s_, {0.1f, 0.2f, 0.01f, 0.02f}, TensorShape({2, 2}));
    Output ud = ops::ApplyMomentum(s_, dense, acc_d, 0.5f, grad, 0.9f, {.use_nesterov = nesterov});
    Output us = ops::SparseApplyMomentum(s_, sparse, acc_s, 0.5f, rows, {int64_t{0}, int64_t{1}},
                                         0.9f, {.use_nesterov = nesterov});
    Start();
    ASSERT_TRUE(Steps({ud.node, us.node}, 5).ok());
    ExpectValues(sparse, Values(dense), 1e-6);
    std::vector<double> last = Values(sparse);
    EXPECT_EQ(last[4], 5.0);  // row 2, never named
    EXPECT_EQ(last[5], 6.0);
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
  }
}

// AdagradV2 (epsilon outside the root) and ProximalGradientDescent: one
// dense step by the formulas, and the sparse forms equal to the dense ones.
TEST_F(AdaptiveTest, AdagradV2AndProximalGradientDescent) {
  Output var = Var2("v2", {1, 2, 4, 3}, TensorShape({2, 2}));
  Output acc = Var2("acc", {0.1f, 0.1f, 0.1f, 0.1f}, TensorShape({2, 2}));
  Output sparse = Var2("v2s", {1, 2, 4, 3}, TensorShape({2, 2}));
  Output acc_s = Var2("accs", {0.1f, 0.1f, 0.1f, 0.1f}, TensorShape({2, 2}));
  Output grad = ops::Const<float>(s_, {0.1f, 0.2f, 0.01f, 0.02f}, TensorShape({2, 2}));
  Node* dense = s_.Op("ApplyAdagradV2").Input(var).Input(acc).Input(3.0f).Input(0.5f).Input(grad)
                    .Finalize();
  Node* sp = s_.Op("SparseApplyAdagradV2").Input(sparse).Input(acc_s).Input(3.0f).Input(0.5f)
                 .Input(grad).Input(ops::Const(s_, std::vector<int64_t>{0, 1})).Finalize();
  Output pvar = Var2("p", {1, -2, 0.01f, 3}, TensorShape({2, 2}));
  Output psparse = Var2("ps", {1, -2, 0.01f, 3}, TensorShape({2, 2}));
  Node* pdense = s_.Op("ApplyProximalGradientDescent").Input(pvar).Input(0.5f).Input(0.1f)
                     .Input(0.2f).Input(grad).Finalize();
  Node* psp = s_.Op("SparseApplyProximalGradientDescent").Input(psparse).Input(0.5f).Input(0.1f)
                  .Input(0.2f).Input(grad).Input(ops::Const(s_, std::vector<int32_t>{0, 1}))
                  .Finalize();
  Start();
  ASSERT_TRUE(Steps({dense, sp, pdense, psp}, 1).ok());
  // var -= 3 * g / (sqrt(0.1 + g^2) + 0.5)
  std::vector<double> want;
  const double v0[] = {1, 2, 4, 3}, g[] = {0.1, 0.2, 0.01, 0.02};
  for (int i = 0; i < 4; ++i) want.push_back(v0[i] - 3 * g[i] / (std::sqrt(0.1 + g[i] * g[i]) + 0.5));
  ExpectValues(var, want, 1e-5);
  ExpectValues(sparse, Values(var), 1e-6);
  // prox = var - 0.5 g; sign(prox) max(|prox| - 0.05, 0) / 1.1
  want.clear();
  const double p0[] = {1, -2, 0.01, 3};
  for (int i = 0; i < 4; ++i) {
    const double prox = p0[i] - 0.5 * g[i];
    want.push_back((prox > 0 ? 1 : prox < 0 ? -1 : 0) * std::max(std::abs(prox) - 0.05, 0.0) / 1.1);
  }
  ExpectValues(pvar, want, 1e-5);
  ExpectValues(psparse, Values(pvar), 1e-6);
}

TEST_F(AdaptiveTest, ProximalAdagradRejectsNegativeL1) {
  Output var = Var("var", {1.0f});
  Output acc = Var("acc", {0.1f});
  Output u = ops::ApplyProximalAdagrad(s_, var, acc, 3.0f, -1.0f, 0.0f, {0.1f});
  Start();
  absl::Status st = RunError(u.node);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("l1 regularization strength is not a non-negative scalar"));
}

// One Adadelta step by hand (tensorflow/python/training/adadelta_test.py
// checks the same recurrences with numpy).
TEST_F(AdaptiveTest, AdadeltaOneStep) {
  for (bool sparse : {false, true}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output var = Var("var", {1.0, 2.0});
    Output accum = Var("accum", {0.0, 0.5});
    Output accum_update = Var("accum_update", {0.0, 0.25});
    const double lr = 1.0, rho = 0.95, eps = 1e-8;
    Output u = sparse ? ops::SparseApplyAdadelta(s_, var, accum, accum_update, lr, rho, eps,
                                                 {0.1, 0.2}, {0, 1})
                      : ops::ApplyAdadelta(s_, var, accum, accum_update, lr, rho, eps,
                                           {0.1, 0.2});
    Start();
    ASSERT_TRUE(Steps({u.node}, 1).ok());
    std::vector<double> want_var, want_acc, want_upd;
    const double g[] = {0.1, 0.2}, acc0[] = {0.0, 0.5}, upd0[] = {0.0, 0.25}, v0[] = {1.0, 2.0};
    for (int i = 0; i < 2; ++i) {
      const double acc = rho * acc0[i] + (1 - rho) * g[i] * g[i];
      const double update = std::sqrt(upd0[i] + eps) / std::sqrt(acc + eps) * g[i];
      want_acc.push_back(acc);
      want_var.push_back(v0[i] - lr * update);
      want_upd.push_back(rho * upd0[i] + (1 - rho) * update * update);
    }
    ExpectValues(var, want_var, 1e-12);
    ExpectValues(accum, want_acc, 1e-12);
    ExpectValues(accum_update, want_upd, 1e-12);
  }
}

// tensorflow/python/training/rmsprop_test.py testWithoutMomentum and
// testWithMomentum: lr 2, decay 0.9, epsilon 1, ms starts at 1, two steps.
TEST_F(AdaptiveTest, RMSPropMatchesTensorFlowTests) {
  for (float momentum : {0.0f, 0.5f}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output var = Var("var", {1.0f, 2.0f});
    Output ms = Var("ms", {1.0f, 1.0f});
    Output mom = Var("mom", {0.0f, 0.0f});
    Output u = ops::ApplyRMSProp(s_, var, ms, mom, 2.0f, 0.9f, momentum, 1.0f, {0.1f, 0.1f});
    Start();
    ASSERT_TRUE(Steps({u.node}, 1).ok());
    // First step: ms = 0.901; var = v - 0.1 * 2 / sqrt(0.901 + 1).
    const double mom1 = 0.1 * 2.0 / std::sqrt(0.901 + 1.0);
    ExpectValues(ms, {0.901, 0.901}, 1e-6);
    ExpectValues(var, {1.0 - mom1, 2.0 - mom1}, 1e-6);
    ASSERT_TRUE(Steps({u.node}, 1).ok());
    // Second step: ms = 0.901 * 0.9 + 0.001.
    const double ms2 = 0.901 * 0.9 + 0.001;
    const double mom2 = momentum * mom1 + 0.1 * 2.0 / std::sqrt(ms2 + 1.0);
    ExpectValues(ms, {ms2, ms2}, 1e-6);
    ExpectValues(mom, {mom2, mom2}, 1e-6);
    ExpectValues(var, {1.0 - mom1 - mom2, 2.0 - mom1 - mom2}, 1e-6);
  }
}

TEST_F(AdaptiveTest, SparseRMSPropUpdatesOnlyTheIndexedRows) {
  Output var = Var2("var", {1, 2, 3, 4}, TensorShape({2, 2}));
  Output ms = Var2("ms", {1, 1, 1, 1}, TensorShape({2, 2}));
  Output mom = Var2("mom", {0, 0, 0, 0}, TensorShape({2, 2}));
  Output grad = ops::Const<float>(s_, {0.1f, 0.1f}, TensorShape({1, 2}));
  Output u = ops::SparseApplyRMSProp(s_, var, ms, mom, 2.0f, 0.9f, 0.5f, 1.0f, grad, {1});
  Start();
  ASSERT_TRUE(Steps({u.node}, 1).ok());
  const double step = 0.1 * 2.0 / std::sqrt(0.901 + 1.0);
  ExpectValues(var, {1, 2, 3 - step, 4 - step}, 1e-6);
  ExpectValues(ms, {1, 1, 0.901, 0.901}, 1e-6);
}

// Centered RMSProp by hand (rmsprop_test.py's numpy reference with
// centered=True).
TEST_F(AdaptiveTest, CenteredRMSPropOneStep) {
  for (bool sparse : {false, true}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output var = Var("var", {1.0, 2.0});
    Output mg = Var("mg", {0.0, 0.1});
    Output ms = Var("ms", {1.0, 1.0});
    Output mom = Var("mom", {0.0, 0.2});
    const double lr = 2.0, rho = 0.9, momentum = 0.5, eps = 1e-3;
    Output u = sparse ? ops::SparseApplyCenteredRMSProp(s_, var, mg, ms, mom, lr, rho, momentum,
                                                        eps, {0.1, -0.3}, {0, 1})
                      : ops::ApplyCenteredRMSProp(s_, var, mg, ms, mom, lr, rho, momentum, eps,
                                                  {0.1, -0.3});
    Start();
    ASSERT_TRUE(Steps({u.node}, 1).ok());
    const double g[] = {0.1, -0.3}, mg0[] = {0.0, 0.1}, mom0[] = {0.0, 0.2}, v0[] = {1.0, 2.0};
    std::vector<double> want_var, want_mg;
    for (int i = 0; i < 2; ++i) {
      const double ms1 = 1.0 * rho + (1 - rho) * g[i] * g[i];
      const double mg1 = mg0[i] * rho + (1 - rho) * g[i];
      const double mom1 = momentum * mom0[i] + lr * g[i] / std::sqrt(ms1 - mg1 * mg1 + eps);
      want_var.push_back(v0[i] - mom1);
      want_mg.push_back(mg1);
    }
    ExpectValues(var, want_var, 1e-12);
    ExpectValues(mg, want_mg, 1e-12);
  }
}

// tensorflow/python/training/ftrl_test.py: lr 3, accumulators at 0.1,
// linear at 0, lr_power -0.5.
struct FtrlCase {
  const char* name;
  float l1, l2;
  int steps;
  std::vector<float> init0, init1;
  std::vector<double> want0, want1;
};

TEST_F(AdaptiveTest, FtrlMatchesTensorFlowTests) {
  for (const FtrlCase& c :
       {FtrlCase{"testFtrlwithoutRegularization", 0, 0, 3, {0, 0}, {0, 0},
                 {-2.60260963, -4.29698515}, {-0.28432083, -0.56694895}},
        FtrlCase{"testFtrlwithoutRegularization2", 0, 0, 3, {1, 2}, {4, 3},
                 {-2.55607247, -3.98729396}, {-0.28232238, -0.56096673}},
        FtrlCase{"testFtrlWithL1", 0.001f, 0, 10, {1, 2}, {4, 3},
                 {-7.66718769, -10.91273689}, {-0.93460727, -1.86147261}},
        FtrlCase{"testFtrlWithL1_L2", 0.001f, 2.0f, 10, {1, 2}, {4, 3},
                 {-0.24059935, -0.46829352}, {-0.02406147, -0.04830509}}}) {
    SCOPED_TRACE(c.name);
    for (bool sparse : {false, true}) {
      s_ = Scope::NewRootScope(BuiltinOps());
      inits_.clear();
      Output var0 = Var("var0", ops::Const<float>(s_, c.init0));
      Output var1 = Var("var1", ops::Const<float>(s_, c.init1));
      Output acc0 = Var("acc0", {0.1f, 0.1f});
      Output acc1 = Var("acc1", {0.1f, 0.1f});
      Output lin0 = Var("lin0", {0.0f, 0.0f});
      Output lin1 = Var("lin1", {0.0f, 0.0f});
      Output u0, u1;
      if (sparse) {
        u0 = ops::SparseApplyFtrl(s_, var0, acc0, lin0, {0.1f, 0.2f}, {0, 1}, 3.0f, c.l1, c.l2,
                                  -0.5f);
        u1 = ops::SparseApplyFtrl(s_, var1, acc1, lin1, {0.01f, 0.02f}, {0, 1}, 3.0f, c.l1,
                                  c.l2, -0.5f);
      } else {
        u0 = ops::ApplyFtrl(s_, var0, acc0, lin0, {0.1f, 0.2f}, 3.0f, c.l1, c.l2, -0.5f);
        u1 = ops::ApplyFtrl(s_, var1, acc1, lin1, {0.01f, 0.02f}, 3.0f, c.l1, c.l2, -0.5f);
      }
      Start();
      ASSERT_TRUE(Steps({u0.node, u1.node}, c.steps).ok());
      ExpectValues(var0, c.want0, 1e-5);
      ExpectValues(var1, c.want1, 1e-5);
    }
  }
}

// tensorflow/compiler/tests/ftrl_test.py testFtrlWithL1_L2_L2Shrinkage
// (rtol 1e-4 there), dense and sparse.
TEST_F(AdaptiveTest, FtrlV2MatchesTensorFlowTest) {
  for (bool sparse : {false, true}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output var0 = Var("var0", {1.0f, 2.0f});
    Output var1 = Var("var1", {4.0f, 3.0f});
    Output acc0 = Var("acc0", {0.1f, 0.1f});
    Output acc1 = Var("acc1", {0.1f, 0.1f});
    Output lin0 = Var("lin0", {0.0f, 0.0f});
    Output lin1 = Var("lin1", {0.0f, 0.0f});
    Output u0, u1;
    if (sparse) {
      u0 = ops::SparseApplyFtrlV2(s_, var0, acc0, lin0, {0.1f, 0.2f}, {0, 1}, 3.0f, 0.001f, 2.0f,
                                  0.1f, -0.5f);
      u1 = ops::SparseApplyFtrlV2(s_, var1, acc1, lin1, {0.01f, 0.02f}, {0, 1}, 3.0f, 0.001f,
                                  2.0f, 0.1f, -0.5f);
    } else {
      u0 = ops::ApplyFtrlV2(s_, var0, acc0, lin0, {0.1f, 0.2f}, 3.0f, 0.001f, 2.0f, 0.1f, -0.5f);
      u1 = ops::ApplyFtrlV2(s_, var1, acc1, lin1, {0.01f, 0.02f}, 3.0f, 0.001f, 2.0f, 0.1f,
                            -0.5f);
    }
    Start();
    ASSERT_TRUE(Steps({u0.node, u1.node}, 10).ok());
    ExpectValues(var0, {-0.22578996, -0.44345799}, 1e-4);
    ExpectValues(var1, {-0.14378493, -0.13229476}, 1e-4);
    // Shrinkage does not change the accumulator: 0.1 + 10 * grad^2.
    ExpectValues(acc0, {0.1 + 10 * 0.01, 0.1 + 10 * 0.04}, 1e-5);
  }
}

// With multiply_linear_by_lr, linear holds lr times its plain value and var
// comes out the same (TensorFlow's ftrl_test.py testFtrlMultiplyLinearByLr...).
TEST_F(AdaptiveTest, FtrlMultiplyLinearByLrGivesTheSameVariable) {
  Output plain = Var("plain", {1.0, 2.0});
  Output by_lr = Var("by_lr", {1.0, 2.0});
  Output acc_p = Var("acc_p", {0.1, 0.1});
  Output acc_l = Var("acc_l", {0.1, 0.1});
  Output lin_p = Var("lin_p", {0.0, 0.0});
  Output lin_l = Var("lin_l", {0.0, 0.0});
  Output up = ops::ApplyFtrl(s_, plain, acc_p, lin_p, {0.1, 0.2}, 3.0, 0.001, 2.0, -0.5);
  Output ul = ops::ApplyFtrl(s_, by_lr, acc_l, lin_l, {0.1, 0.2}, 3.0, 0.001, 2.0, -0.5,
                             {.multiply_linear_by_lr = true});
  Start();
  ASSERT_TRUE(Steps({up.node, ul.node}, 10).ok());
  ExpectValues(by_lr, Values(plain), 1e-12);
  std::vector<double> lin = Values(lin_p);
  ExpectValues(lin_l, {3.0 * lin[0], 3.0 * lin[1]}, 1e-12);
}

TEST_F(AdaptiveTest, FtrlRejectsBadHyperParameters) {
  Output var = Var("var", {1.0f});
  Output acc = Var("acc", {0.1f});
  Output lin = Var("lin", {0.0f});
  Output bad_lr = ops::ApplyFtrl(s_.WithOpName("bad_lr"), var, acc, lin, {0.1f}, 0.0f, 0.0f, 0.0f,
                                 -0.5f);
  Output bad_power =
      ops::ApplyFtrl(s_.WithOpName("bad_power"), var, acc, lin, {0.1f}, 1.0f, 0.0f, 0.0f, 0.5f);
  Start();
  absl::Status st = RunError(bad_lr.node);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("lr is not a positive scalar"));
  st = RunError(bad_power.node);
  EXPECT_THAT(st.message(), HasSubstr("lr_power is not a non-positive scalar"));
}

// The Resource forms run the same kernels on VarHandleOp variables.
TEST_F(AdaptiveTest, ResourceFormsMatchRefForms) {
  auto handle = [&](const char* name, std::vector<float> init) {
    Output h = ops::VarHandleOp(s_.WithOpName(name), DT_FLOAT, TensorShape({2}));
    inits_.push_back(ops::AssignVariableOp(s_, h, ops::Const<float>(s_, init)));
    return h;
  };
  Output var = handle("rvar", {1, 2});
  Output acc = handle("racc", {0.1f, 0.1f});
  Output lin = handle("rlin", {0, 0});
  Node* dense = s_.Op("ResourceApplyAdagrad")
                    .Input(var)
                    .Input(acc)
                    .Input(3.0f)
                    .Input({0.1f, 0.1f})
                    .Attr("use_locking", false)
                    .Finalize();
  Output var_f = handle("rvar_f", {1, 2});
  Output acc_f = handle("racc_f", {0.1f, 0.1f});
  Node* sparse = s_.Op("ResourceSparseApplyFtrl")
                     .Input(var_f)
                     .Input(acc_f)
                     .Input(lin)
                     .Input({0.1f, 0.2f})
                     .Input({int64_t{0}, int64_t{1}})
                     .Input(3.0f)
                     .Input(0.001f)
                     .Input(2.0f)
                     .Input(-0.5f)
                     .Finalize();
  Output read = ops::ReadVariableOp(s_, var, DT_FLOAT);
  Output read_f = ops::ReadVariableOp(s_, var_f, DT_FLOAT);
  Start();
  ASSERT_TRUE(Steps({dense}, 3).ok());
  ExpectValues(read, {-1.6026098728179932, -0.6026098728179932}, 1e-6);
  ASSERT_TRUE(Steps({sparse}, 10).ok());
  ExpectValues(read_f, {-0.24059935, -0.46829352}, 1e-5);
}

// Values from TensorFlow 2.21 (tf.raw_ops.ResourceApplyAdagradDA, two steps
// with l1 0.05, l2 0.05, lr 0.1, global_step 3).
TEST_F(AdaptiveTest, AdagradDAMatchesTensorFlow) {
  Output var = Var("var", {0.5f, -1.0f, 2.0f, 0.0f});
  Output ga = Var("ga", {0.1f, -0.2f, 0.0f, 0.0f});
  Output gsa = Var("gsa", {0.1f, 0.1f, 0.1f, 0.1f});
  Output u = ops::ApplyAdagradDA(s_, var, ga, gsa, {0.3f, -0.4f, 0.05f, 0.0f}, 0.1f, 0.05f, 0.05f,
                                 int64_t{3});
  EXPECT_EQ(u.dtype(), DT_FLOAT_REF);
  // Without l1, one step by the formula: var = -ga * lr / (l2 * 3 * lr + sqrt(gsa)).
  Output var2 = Var("var2", {0.5, -1.0});
  Output ga2 = Var("ga2", {0.1, -0.2});
  Output gsa2 = Var("gsa2", {0.1, 0.1});
  Output u2 =
      ops::ApplyAdagradDA(s_, var2, ga2, gsa2, {0.3, -0.4}, 0.1, 0.0, 0.05, int64_t{3});
  Start();
  ASSERT_TRUE(Steps({u.node}, 2).ok());
  ExpectValues(var, {-0.1010750383, 0.1281908005, 0.0, 0.0}, 1e-6);
  ExpectValues(ga, {0.7, -1.0, 0.1, 0.0}, 1e-6);
  ExpectValues(gsa, {0.28, 0.42, 0.105, 0.1}, 1e-6);
  ASSERT_TRUE(Steps({u2.node}, 1).ok());
  const double d0 = 0.015 + std::sqrt(0.19), d1 = 0.015 + std::sqrt(0.26);
  ExpectValues(var2, {-0.4 * 0.1 / d0, 0.6 * 0.1 / d1}, 1e-12);
}

// The sparse form applies repeated rows one after the other (TensorFlow
// 2.21's values for rows 1, 3, 1 of a [4, 1] variable, global_step 2).
TEST_F(AdaptiveTest, SparseAdagradDAMatchesTensorFlow) {
  Output var = Var2("var", {0.5f, -1.0f, 2.0f, 0.0f}, TensorShape({4, 1}));
  Output ga = Var2("ga", {0.1f, -0.2f, 0.0f, 0.0f}, TensorShape({4, 1}));
  Output gsa = Var2("gsa", {0.1f, 0.1f, 0.1f, 0.1f}, TensorShape({4, 1}));
  Output g = ops::Const<float>(s_, {0.3f, -0.4f, 0.5f}, TensorShape({3, 1}));
  Output u = ops::SparseApplyAdagradDA(s_, var, ga, gsa, g, {int64_t{1}, int64_t{3}, int64_t{1}},
                                       0.1f, 0.05f, 0.05f, int64_t{2});
  Start();
  ASSERT_TRUE(Steps({u.node}, 1).ok());
  ExpectValues(var, {0.5, -0.0742583573, 2.0, 0.0577031858}, 1e-6);
  ExpectValues(ga, {0.1, 0.6, 0.0, -0.4}, 1e-6);
  ExpectValues(gsa, {0.1, 0.44, 0.1, 0.26}, 1e-6);
}

TEST_F(AdaptiveTest, AdagradDAGlobalStepIsAnInt64Scalar) {
  // Each case in a graph of its own (a scope keeps its first error).
  auto build = [](const std::function<Output(const Scope&)>& step) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Output var = ops::VariableWithInit(s.WithOpName("var"), {1.0f}).var;
    Output ga = ops::VariableWithInit(s.WithOpName("ga"), {0.0f}).var;
    Output gsa = ops::VariableWithInit(s.WithOpName("gsa"), {0.1f}).var;
    ops::ApplyAdagradDA(s, var, ga, gsa, {1.0f}, 0.1f, 0.0f, 0.0f, step(s));
    return s.status();
  };
  const absl::Status scalar = build([](const Scope& s) { return ops::Const(s, int64_t{3}); });
  EXPECT_TRUE(scalar.ok()) << scalar;
  // A float tensor: the op wants int64.
  EXPECT_FALSE(build([](const Scope& s) { return ops::Const(s, 3.0f); }).ok());
  const absl::Status vector = build([](const Scope& s) {
    return ops::Const(s, std::vector<int64_t>{1, 2}, TensorShape({2}));
  });
  EXPECT_EQ(vector.code(), absl::StatusCode::kInvalidArgument) << vector;
  EXPECT_THAT(std::string(vector.message()), HasSubstr("global_step must be a scalar"));
}

// Each rule minimizes (w - 3)^2 (gradient 2 (w - 3) built in the graph).
TEST_F(AdaptiveTest, TrainingLoopsConverge) {
  using Builder = std::function<Output(const Scope&, Output w, Output grad)>;
  struct Loop {
    const char* name;
    Builder build;
    int steps;
  };
  auto slot = [](const Scope& s, const char* name, double value) {
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName(name), {value, value});
    return v;
  };
  std::vector<Node*>* inits = &inits_;
  auto var = [&](const Scope& s, const char* name, double value) {
    ops::VariableAndInit v = slot(s, name, value);
    inits->push_back(v.initializer);
    return v.var;
  };
  const std::vector<Loop> loops = {
      {"Adagrad",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyAdagrad(s, w, var(s, "acc", 0.1), 0.5, g);
       },
       300},
      {"ProximalAdagrad",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyProximalAdagrad(s, w, var(s, "acc", 0.1), 0.5, 0.0, 0.0, g);
       },
       300},
      {"Adadelta",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyAdadelta(s, w, var(s, "acc", 0), var(s, "upd", 0), 1.0, 0.9, 1e-2, g);
       },
       1000},
      {"RMSProp",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyRMSProp(s, w, var(s, "ms", 1), var(s, "mom", 0), 0.01, 0.9, 0.5, 1e-6,
                                  g);
       },
       1000},
      {"CenteredRMSProp",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyCenteredRMSProp(s, w, var(s, "mg", 0), var(s, "ms", 1), var(s, "mom", 0),
                                          0.01, 0.9, 0.5, 1e-6, g);
       },
       1000},
      {"Ftrl",
       [&](const Scope& s, Output w, Output g) {
         return ops::ApplyFtrl(s, w, var(s, "acc", 0.1), var(s, "lin", 0), g, 1.0, 0.0, 0.0,
                               -0.5);
       },
       300},
  };
  for (const Loop& loop : loops) {
    SCOPED_TRACE(loop.name);
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    Output w = var(s_, "w", 0.0);
    Output grad = ops::Mul(s_, 2.0, ops::Sub(s_, w, 3.0));
    Output step = loop.build(s_.NewSubScope(loop.name), w, grad);
    Start();
    ASSERT_TRUE(Steps({step.node}, loop.steps).ok());
    ExpectValues(w, {3.0, 3.0}, 1e-2);
  }
}

}  // namespace
}  // namespace sluice
