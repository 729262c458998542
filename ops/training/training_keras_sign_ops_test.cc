// The training ops Keras's optimizers added (ResourceApplyKerasMomentum and
// its sparse form, ResourceApplyAdamWithAmsgrad, ApplyAdaMax) and the sign
// rules (ApplyAddSign, ApplyPowerSign). Expected values are the update
// formulas worked in double by the test, step by step (as TensorFlow's own
// optimizer tests do with numpy); tests/tf_conformance checks the same ops
// against TensorFlow itself.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

class KerasSignOpsTest : public ::testing::Test {
 protected:
  // A resource variable of doubles holding `init` (a vector, or shaped
  // `shape`), with a read made now, for Values (the session sees the graph
  // as it is at Start).
  Output Handle(const std::string& name, std::vector<double> init) {
    return Handle(name, init, TensorShape({static_cast<int64_t>(init.size())}));
  }
  Output Handle(const std::string& name, std::vector<double> init, const TensorShape& shape) {
    Output h = ops::VarHandleOp(s_.WithOpName(name), DT_DOUBLE, shape);
    inits_.push_back(ops::AssignVariableOp(s_, h, ops::Const<double>(s_, init, shape)));
    reads_.emplace(h.node, ops::ReadVariableOp(s_, h, DT_DOUBLE));
    return h;
  }
  // The op over `inputs`, with use_locking and the extra bool attrs.
  Node* Apply(const char* op, const std::vector<Input>& inputs,
              std::vector<std::pair<const char*, bool>> attrs = {}) {
    OpBuilder b = s_.Op(op);
    for (const Input& in : inputs) b.Input(in);
    b.Attr("use_locking", false);
    for (const auto& [name, value] : attrs) b.Attr(name, value);
    return b.Finalize();
  }

  void Start() {
    ASSERT_TRUE(s_.ok()) << s_.status();
    absl::StatusOr<std::unique_ptr<Session>> sess =
        NewSession(BuiltinSessionConfig(), *s_.graph());
    ASSERT_TRUE(sess.ok()) << sess.status();
    sess_ = std::move(*sess);
    ASSERT_TRUE(sess_->Run({}, {}, inits_).ok());
  }

  absl::Status Step(Node* target) { return Step({}, target); }
  absl::Status Step(const std::vector<std::pair<std::string, Tensor>>& feeds, Node* target) {
    return sess_->Run(feeds, {}, {target->name()}).status();
  }

  std::vector<double> Values(const Output& handle) {
    absl::StatusOr<std::vector<Tensor>> out = sess_->Run({}, {reads_.at(handle.node)}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    const Tensor& t = (*out)[0];
    return std::vector<double>(t.data<double>(), t.data<double>() + t.NumElements());
  }

  void ExpectValues(const Output& handle, const std::vector<double>& want, double tol = 1e-12) {
    std::vector<double> got = Values(handle);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
    }
  }

  Scope s_ = Scope::NewRootScope(BuiltinOps());
  std::vector<Node*> inits_;
  absl::flat_hash_map<const Node*, Output> reads_;
  std::unique_ptr<Session> sess_;
};

// Three steps with a gradient that changes sign, with and without Nesterov.
TEST_F(KerasSignOpsTest, KerasMomentumFollowsItsFormula) {
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain");
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    reads_.clear();
    Output var = Handle("var", {1.0, -2.0, 0.5});
    Output accum = Handle("accum", {0.0, 0.3, -0.1});
    Output grad = ops::Placeholder(s_.WithOpName("grad"), DT_DOUBLE);
    Node* step = Apply("ResourceApplyKerasMomentum", {var, accum, 0.1, grad, 0.9},
                       {{"use_nesterov", nesterov}});
    Start();
    std::vector<double> v = {1.0, -2.0, 0.5}, a = {0.0, 0.3, -0.1};
    const std::vector<std::vector<double>> grads = {{0.5, -1.0, 2.0}, {-0.5, 0.25, 0.0},
                                                    {1.5, 1.0, -3.0}};
    for (const std::vector<double>& g : grads) {
      ASSERT_TRUE(Step({{"grad", Tensor::FromVector(g)}}, step).ok());
      for (size_t i = 0; i < g.size(); ++i) {
        a[i] = 0.9 * a[i] - 0.1 * g[i];
        v[i] += nesterov ? 0.9 * a[i] - 0.1 * g[i] : a[i];
      }
    }
    ExpectValues(var, v);
    ExpectValues(accum, a);
  }
}

// With a fixed lr, Keras's velocity is -lr times Momentum's accumulator, so
// both rules move the weights alike: checked against ApplyMomentum's own
// kernel (tested in training_ops_test).
TEST_F(KerasSignOpsTest, KerasMomentumMovesWeightsAsMomentumDoes) {
  for (bool nesterov : {false, true}) {
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    reads_.clear();
    Output keras_var = Handle("keras_var", {1.0, 2.0});
    Output keras_acc = Handle("keras_acc", {0.0, 0.0});
    Output tf_var = Handle("tf_var", {1.0, 2.0});
    Output tf_acc = Handle("tf_acc", {0.0, 0.0});
    // The gradient of (w - 3)^2 at each variable's own weights.
    auto grad_of = [&](Output h) {
      return ops::Mul(s_, 2.0, ops::Sub(s_, ops::ReadVariableOp(s_, h, DT_DOUBLE), 3.0));
    };
    Node* keras = Apply("ResourceApplyKerasMomentum",
                        {keras_var, keras_acc, 0.05, grad_of(keras_var), 0.8},
                        {{"use_nesterov", nesterov}});
    Node* tf = Apply("ResourceApplyMomentum", {tf_var, tf_acc, 0.05, grad_of(tf_var), 0.8},
                     {{"use_nesterov", nesterov}});
    Start();
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(Step(keras).ok());
      ASSERT_TRUE(Step(tf).ok());
    }
    const std::vector<double> tf_w = Values(tf_var), tf_a = Values(tf_acc);
    ExpectValues(keras_var, tf_w, 1e-12);
    ExpectValues(keras_acc, {-0.05 * tf_a[0], -0.05 * tf_a[1]}, 1e-12);
  }
}

// The sparse form updates the named rows in the order given (a repeated
// row twice), leaves the others, and refuses an index out of range before
// writing anything.
TEST_F(KerasSignOpsTest, SparseKerasMomentumUpdatesTheNamedRowsInOrder) {
  Output var = Handle("var", {1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Output accum = Handle("accum", {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, TensorShape({3, 2}));
  Output grad = ops::Const<double>(s_, {1.0, -1.0, 0.5, 0.5, 2.0, 0.0}, TensorShape({3, 2}));
  Node* step = Apply("ResourceSparseApplyKerasMomentum",
                     {var, accum, 0.1, grad, ops::Const<int32_t>(s_, {2, 0, 2}), 0.9},
                     {{"use_nesterov", true}});
  Node* bad = Apply("ResourceSparseApplyKerasMomentum",
                    {var, accum, 0.1, grad, ops::Const<int64_t>(s_, {0, 3, 1}), 0.9});
  Start();
  ASSERT_TRUE(Step(step).ok());
  std::vector<double> v = {1, 2, 3, 4, 5, 6}, a = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  const double g[3][2] = {{1.0, -1.0}, {0.5, 0.5}, {2.0, 0.0}};
  const int rows[3] = {2, 0, 2};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      double& acc = a[rows[i] * 2 + j];
      acc = 0.9 * acc - 0.1 * g[i][j];
      v[rows[i] * 2 + j] += 0.9 * acc - 0.1 * g[i][j];
    }
  }
  ExpectValues(var, v);
  ExpectValues(accum, a);
  absl::Status st = Step(bad);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("Index 3 at offset 1 in indices is out of range"));
  ExpectValues(var, v);  // untouched by the refused update
}

// AMSGrad: the denominator uses the largest v seen, so after a large
// gradient followed by small ones vhat stays where v has fallen from.
TEST_F(KerasSignOpsTest, AdamWithAmsgradKeepsTheLargestSecondMoment) {
  Output var = Handle("var", {1.0, 2.0});
  Output m = Handle("m", {0.0, 0.0});
  Output v = Handle("v", {0.0, 0.0});
  Output vhat = Handle("vhat", {0.0, 0.0});
  Output b1p = ops::Placeholder(s_.WithOpName("b1p"), DT_DOUBLE);
  Output b2p = ops::Placeholder(s_.WithOpName("b2p"), DT_DOUBLE);
  Output grad = ops::Placeholder(s_.WithOpName("grad"), DT_DOUBLE);
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-7;
  Node* step = Apply("ResourceApplyAdamWithAmsgrad",
                     {var, m, v, vhat, b1p, b2p, lr, beta1, beta2, eps, grad});
  Start();
  std::vector<double> w = {1.0, 2.0}, mm = {0, 0}, vv = {0, 0}, vh = {0, 0};
  const std::vector<std::vector<double>> grads = {{3.0, -0.1}, {0.1, -0.1}, {0.05, 0.2}};
  double p1 = 1, p2 = 1;
  for (const std::vector<double>& g : grads) {
    p1 *= beta1;
    p2 *= beta2;
    ASSERT_TRUE(Step({{"b1p", Tensor::Scalar(p1)},
                      {"b2p", Tensor::Scalar(p2)},
                      {"grad", Tensor::FromVector(g)}},
                     step)
                    .ok());
    const double alpha = lr * std::sqrt(1 - p2) / (1 - p1);
    for (int i = 0; i < 2; ++i) {
      mm[i] = beta1 * mm[i] + (1 - beta1) * g[i];
      vv[i] = beta2 * vv[i] + (1 - beta2) * g[i] * g[i];
      vh[i] = std::max(vh[i], vv[i]);
      w[i] -= alpha * mm[i] / (std::sqrt(vh[i]) + eps);
    }
  }
  ExpectValues(var, w);
  ExpectValues(m, mm);
  ExpectValues(v, vv);
  ExpectValues(vhat, vh);
  EXPECT_GT(vh[0], vv[0]) << "the case must exercise the max";
}

// AdaMax (TensorFlow's adamax_test numpy reference): the ref and resource
// forms run the same kernel.
TEST_F(KerasSignOpsTest, AdaMaxFollowsItsFormulaInBothForms) {
  Output var = Handle("var", {1.0, 2.0});
  Output m = Handle("m", {0.0, 0.0});
  Output u = Handle("u", {0.0, 0.0});
  ops::VariableAndInit ref_var = ops::VariableWithInit(s_.WithOpName("ref_var"), {1.0, 2.0});
  ops::VariableAndInit ref_m = ops::VariableWithInit(s_.WithOpName("ref_m"), {0.0, 0.0});
  ops::VariableAndInit ref_u = ops::VariableWithInit(s_.WithOpName("ref_u"), {0.0, 0.0});
  for (Node* n : {ref_var.initializer, ref_m.initializer, ref_u.initializer}) inits_.push_back(n);
  Output b1p = ops::Placeholder(s_.WithOpName("b1p"), DT_DOUBLE);
  Output grad = ops::Placeholder(s_.WithOpName("grad"), DT_DOUBLE);
  const double lr = 0.002, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  Node* step = Apply("ResourceApplyAdaMax", {var, m, u, b1p, lr, beta1, beta2, eps, grad});
  Node* ref_step =
      Apply("ApplyAdaMax", {ref_var.var, ref_m.var, ref_u.var, b1p, lr, beta1, beta2, eps, grad});
  Start();
  std::vector<double> w = {1.0, 2.0}, mm = {0, 0}, uu = {0, 0};
  const std::vector<std::vector<double>> grads = {{0.1, 0.1}, {-0.3, 0.01}, {0.05, -0.02}};
  double p1 = 1;
  for (const std::vector<double>& g : grads) {
    p1 *= beta1;
    for (Node* target : {step, ref_step}) {
      ASSERT_TRUE(Step({{"b1p", Tensor::Scalar(p1)}, {"grad", Tensor::FromVector(g)}}, target).ok());
    }
    for (int i = 0; i < 2; ++i) {
      mm[i] = beta1 * mm[i] + (1 - beta1) * g[i];
      uu[i] = std::max(beta2 * uu[i], std::abs(g[i]));
      w[i] -= lr / (1 - p1) * mm[i] / (uu[i] + eps);
    }
  }
  ExpectValues(var, w);
  ExpectValues(m, mm);
  ExpectValues(u, uu);
  absl::StatusOr<std::vector<Tensor>> ref = sess_->Run({}, {ref_var.var}, {});
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ((*ref)[0].flat<double>()[0], Values(var)[0]);
  EXPECT_EQ((*ref)[0].flat<double>()[1], Values(var)[1]);
}

// AddSign and PowerSign scale the gradient by whether it agrees in sign
// with its running mean: elements where they agree, disagree and where the
// gradient is 0 (sign 0: the base scale).
TEST_F(KerasSignOpsTest, SignRulesScaleByAgreement) {
  for (bool power : {false, true}) {
    SCOPED_TRACE(power ? "PowerSign" : "AddSign");
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    reads_.clear();
    Output var = Handle("var", {1.0, 1.0, 1.0});
    Output m = Handle("m", {0.5, 2.0, -1.0});
    const std::vector<double> g = {0.4, -0.2, 0.0};
    const double lr = 0.1, base = power ? std::log(2.0) : 1.0, decay = 0.5, beta = 0.9;
    Node* step = Apply(power ? "ResourceApplyPowerSign" : "ResourceApplyAddSign",
                       {var, m, lr, base, decay, beta, ops::Const<double>(s_, g)});
    Start();
    ASSERT_TRUE(Step(step).ok());
    const std::vector<double> m1 = {0.9 * 0.5 + 0.1 * 0.4, 0.9 * 2.0 - 0.1 * 0.2, -0.9};
    const double agree[] = {1, -1, 0};  // m1[1] stays positive against g < 0
    std::vector<double> w(3);
    for (int i = 0; i < 3; ++i) {
      const double scale = power ? std::exp(base * decay * agree[i]) : base + decay * agree[i];
      w[i] = 1.0 - lr * scale * g[i];
    }
    ExpectValues(m, m1);
    ExpectValues(var, w);
  }
}

// Each rule minimizes (w - 3)^2 from w = 0.
TEST_F(KerasSignOpsTest, TrainingLoopsConverge) {
  struct Loop {
    const char* op;
    int slots;
    std::vector<Input> hyper_before_grad;  // after the slots
    std::vector<Input> after_grad;
    int steps;
  };
  const std::vector<Loop> loops = {
      {"ResourceApplyKerasMomentum", 1, {0.05}, {0.9}, 300},
      // Bias corrections held at a late step's values.
      {"ResourceApplyAdamWithAmsgrad", 3, {1e-9, 1e-9, 0.02, 0.9, 0.999, 1e-7}, {}, 1000},
      {"ResourceApplyAdaMax", 2, {1e-9, 0.02, 0.9, 0.999, 1e-7}, {}, 1000},
      {"ResourceApplyAddSign", 1, {0.02, 1.0, 0.5, 0.9}, {}, 600},
      {"ResourceApplyPowerSign", 1, {0.02, std::log(2.0), 0.5, 0.9}, {}, 600},
  };
  for (const Loop& loop : loops) {
    SCOPED_TRACE(loop.op);
    s_ = Scope::NewRootScope(BuiltinOps());
    inits_.clear();
    reads_.clear();
    Output w = Handle("w", {0.0, 0.0});
    std::vector<Input> inputs = {w};
    for (int i = 0; i < loop.slots; ++i) inputs.push_back(Handle(absl::StrCat("slot", i), {0, 0}));
    for (const Input& in : loop.hyper_before_grad) inputs.push_back(in);
    inputs.push_back(ops::Mul(s_, 2.0, ops::Sub(s_, ops::ReadVariableOp(s_, w, DT_DOUBLE), 3.0)));
    for (const Input& in : loop.after_grad) inputs.push_back(in);
    Node* step = Apply(loop.op, inputs);
    Start();
    for (int i = 0; i < loop.steps; ++i) ASSERT_TRUE(Step(step).ok());
    ExpectValues(w, {3.0, 3.0}, 2e-2);
  }
}

// Bad inputs: a non-scalar hyper-parameter, a gradient of another shape, a
// variable of another type, and the ref form TensorFlow does not have.
TEST_F(KerasSignOpsTest, BadInputsAreClearErrors) {
  Output var = Handle("var", {1.0, 2.0});
  Output accum = Handle("accum", {0.0, 0.0});
  Output floats = ops::VarHandleOp(s_.WithOpName("floats"), DT_FLOAT, TensorShape({2}));
  inits_.push_back(ops::AssignVariableOp(s_, floats, ops::Const<float>(s_, {1.0f, 2.0f})));
  Output lr = ops::Placeholder(s_.WithOpName("lr"), DT_DOUBLE);
  Output grad = ops::Placeholder(s_.WithOpName("grad"), DT_DOUBLE);
  Node* step = Apply("ResourceApplyKerasMomentum", {var, accum, lr, grad, 0.9});
  Node* wrong_type = Apply("ResourceApplyKerasMomentum", {floats, accum, lr, grad, 0.9});
  Start();
  const Tensor vec = Tensor::FromVector(std::vector<double>{1.0, 1.0});
  absl::Status st = Step({{"lr", vec}, {"grad", vec}}, step);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("lr must be a scalar"));
  st = Step({{"lr", Tensor::Scalar(0.1)},
             {"grad", Tensor::FromVector(std::vector<double>{1.0, 1.0, 1.0})}},
            step);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("grad has shape [3]"));
  st = Step({{"lr", Tensor::Scalar(0.1)}, {"grad", vec}}, wrong_type);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("holds float"));

  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit ref = ops::VariableWithInit(s.WithOpName("ref"), {1.0});
  s.Op("ApplyKerasMomentum").Input(ref.var).Input(ref.var).Input(0.1).Input({1.0}).Input(0.9)
      .Finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("ApplyKerasMomentum"));
}

}  // namespace
}  // namespace sluice
