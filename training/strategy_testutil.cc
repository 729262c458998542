#include "training/strategy_testutil.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/math/math_ops.h"
#include "ops/nn/nn_ops.h"
#include "ops/state/state_ops.h"
#include "session/direct_session.h"

namespace sluice {
namespace strategy_testing {
namespace {

// Deterministic values in about [-0.5, 0.5], plus `shift`.
Output InitConst(const Scope& s, const TensorShape& shape, int salt, float shift) {
  std::vector<float> v;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.push_back(0.5f * std::sin(salt * 13.0f + i) + shift);
  }
  return ops::Const(s, v, shape);
}

}  // namespace

std::string Cpu(int i) { return absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i); }

std::vector<std::string> Cpus(int k) {
  std::vector<std::string> out;
  for (int i = 0; i < k; ++i) out.push_back(Cpu(i));
  return out;
}

SessionConfig ThreeCpuOptions() {
  SessionConfig o = BuiltinSessionConfig();
  o.devices.num_virtual_cpus = 3;
  o.devices.virtual_cpu_threads = 1;
  return o;
}

ReplicaFn MakeNet(int64_t hidden, int* calls) {
  return [hidden, calls](const Scope& s,
                         const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {
    const float shift = calls == nullptr ? 0.0f : 0.25f * static_cast<float>((*calls)++);
    ops::VariableAndInit w1 =
        ops::VariableWithInit(s.WithOpName("w1"), InitConst(s, {kIn, hidden}, 1, shift));
    ops::VariableAndInit b1 =
        ops::VariableWithInit(s.WithOpName("b1"), InitConst(s, {hidden}, 2, shift));
    ops::VariableAndInit w2 =
        ops::VariableWithInit(s.WithOpName("w2"), InitConst(s, {hidden, kOut}, 3, shift));
    ops::VariableAndInit b2 =
        ops::VariableWithInit(s.WithOpName("b2"), InitConst(s, {kOut}, 4, shift));
    Output h = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, in[0], w1.var), b1.var));
    Output out = ops::BiasAdd(s, ops::MatMul(s, h, w2.var), b2.var);
    Output err = ops::Sub(s, out, in[1]);
    Output loss = ops::Mean(s, ops::Square(s, err), {0, 1});
    Output mae = ops::Mean(s, ops::Abs(s, err), {0, 1});
    if (!s.ok()) return s.status();
    return ReplicaModel{loss, {w1.var, b1.var, w2.var, b2.var}, {mae}};
  };
}

Data StepData(int step) {
  Data d{Tensor(DT_FLOAT, TensorShape({kBatch, kIn})),
         Tensor(DT_FLOAT, TensorShape({kBatch, kOut}))};
  auto x = d.x.flat<float>();
  auto y = d.y.flat<float>();
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * i + step);
  for (size_t i = 0; i < y.size(); ++i) y[i] = std::cos(0.3f * i + 2.0f * step);
  return d;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  auto fa = a.flat<float>();
  auto fb = b.flat<float>();
  EXPECT_EQ(fa.size(), fb.size());
  float d = 0;
  for (size_t i = 0; i < std::min(fa.size(), fb.size()); ++i) {
    d = std::max(d, std::fabs(fa[i] - fb[i]));
  }
  return d;
}

std::unique_ptr<Optimizer> NewSgd() {
  return std::make_unique<GradientDescentOptimizer>(kLearningRate);
}

std::unique_ptr<Optimizer> NewMomentum() {
  return std::make_unique<MomentumOptimizer>(kLearningRate, 0.9);
}

std::vector<Tensor> TrainOnOneDevice(int64_t hidden, const OptimizerFactory& optimizer) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {.shape = {-1, kIn}});
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, {.shape = {-1, kOut}});
  absl::StatusOr<ReplicaModel> m = MakeNet(hidden, nullptr)(s.WithDevice(Cpu(0)), {x, y});
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  std::unique_ptr<Optimizer> opt = optimizer();
  absl::StatusOr<Node*> train = opt->Minimize(s, m->loss, m->variables);
  EXPECT_TRUE(train.ok()) << train.status();
  Node* init = ops::GlobalVariablesInitializer(s);
  EXPECT_TRUE(s.ok()) << s.status();
  auto sess = NewSession(ThreeCpuOptions(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  if (!sess.ok() || !train.ok()) return {};
  EXPECT_TRUE((*sess)->Run({}, {}, {init}).ok());
  for (int step = 0; step < kSteps; ++step) {
    Data d = StepData(step);
    auto out = (*sess)->Run({{x, d.x}, {y, d.y}}, {}, {*train});
    EXPECT_TRUE(out.ok()) << out.status();
  }
  auto vars = (*sess)->Run({}, m->variables);
  EXPECT_TRUE(vars.ok()) << vars.status();
  return vars.ok() ? *vars : std::vector<Tensor>{};
}

}  // namespace strategy_testing
}  // namespace sluice
