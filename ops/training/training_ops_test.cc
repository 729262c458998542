#include "ops/training/training_ops.h"

#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/state/state_ops.h"
#include "runtime/device.h"
#include "session/direct_session.h"
#include "runtime/session.h"

namespace sluice {
namespace {

std::unique_ptr<Session> MakeSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

template <typename T>
std::vector<T> Fetch(Session* sess, const Output& fetch) {
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {fetch}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  absl::Span<T> v = (*out)[0].flat<T>();
  return std::vector<T>(v.begin(), v.end());
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(TrainingOpsTest, ApplyGradientDescentFloat) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f, 3.0f});
  Output out = ops::ApplyGradientDescent(s, w.var, 0.1f, {0.5f, 1.0f, -1.0f});
  EXPECT_EQ(out.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(out.shape(), TensorShape({3}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), out),
            (std::vector<float>{1.0f - 0.1f * 0.5f, 2.0f - 0.1f * 1.0f, 3.0f + 0.1f * 1.0f}));
  // A second step continues from the updated value.
  ASSERT_TRUE(sess->Run({}, {}, {out.node}).ok());
  EXPECT_EQ(
      Fetch<float>(sess.get(), w.var),
      (std::vector<float>{(1.0f - 0.05f) - 0.05f, (2.0f - 0.1f) - 0.1f, (3.0f + 0.1f) + 0.1f}));
}

TEST(TrainingOpsTest, ApplyGradientDescentDouble) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0, -1.0});
  Output out = ops::ApplyGradientDescent(s, w.var, 0.5, {2.0, 4.0});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<double>(sess.get(), out), (std::vector<double>{0.0, -3.0}));
}

struct MomentumCase {
  bool nesterov;
  std::vector<double> var;
  std::vector<double> accum;
};

TEST(TrainingOpsTest, ApplyMomentum) {
  // var [1, 2], accum [0.5, 0.5], lr 0.1, grad [1, -1], momentum 0.9:
  // accum = [0.45 + 1, 0.45 - 1] = [1.45, -0.55].
  for (const MomentumCase& c :
       {MomentumCase{false, {1 - 0.1 * 1.45, 2 - 0.1 * -0.55}, {1.45, -0.55}},
        MomentumCase{true,
                     {1 - (1 * 0.1 + 1.45 * 0.9 * 0.1), 2 - (-1 * 0.1 + -0.55 * 0.9 * 0.1)},
                     {1.45, -0.55}}}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit var = ops::VariableWithInit(s.WithOpName("var"), {1.0, 2.0});
    ops::VariableAndInit accum = ops::VariableWithInit(s.WithOpName("accum"), {0.5, 0.5});
    Output out = ops::ApplyMomentum(s, var.var, accum.var, 0.1, {1.0, -1.0}, 0.9,
                                    {.use_nesterov = c.nesterov});
    std::unique_ptr<Session> sess = MakeSession(s);
    ASSERT_TRUE(sess->Run({}, {}, std::vector<Node*>{var.initializer, accum.initializer}).ok());
    ASSERT_TRUE(sess->Run({}, {}, {out.node}).ok());
    ExpectNear(Fetch<double>(sess.get(), var.var), c.var, 1e-12);
    ExpectNear(Fetch<double>(sess.get(), accum.var), c.accum, 1e-12);
  }
}

TEST(TrainingOpsTest, ApplyAdam) {
  for (bool nesterov : {false, true}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::VariableAndInit var = ops::VariableWithInit(s.WithOpName("var"), {1.0, 1.0});
    ops::VariableAndInit m = ops::VariableWithInit(s.WithOpName("m"), {0.0, 0.5});
    ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), {0.0, 0.25});
    const double b1p = 0.9, b2p = 0.999, lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const std::vector<double> g = {1.0, -2.0};
    Output out = ops::ApplyAdam(s, var.var, m.var, v.var, b1p, b2p, lr, b1, b2, eps, {g[0], g[1]},
                                {.use_nesterov = nesterov});
    std::unique_ptr<Session> sess = MakeSession(s);
    ASSERT_TRUE(
        sess->Run({}, {}, std::vector<Node*>{var.initializer, m.initializer, v.initializer}).ok());
    ASSERT_TRUE(sess->Run({}, {}, {out.node}).ok());
    // By hand: m = m + (g - m)(1 - b1); v = v + (g^2 - v)(1 - b2).
    const std::vector<double> want_m = {0.1, 0.5 + (-2.0 - 0.5) * 0.1};  // [0.1, 0.25]
    const std::vector<double> want_v = {0.001, 0.25 + (4.0 - 0.25) * 0.001};
    const double lr_t = lr * std::sqrt(1 - b2p) / (1 - b1p);
    std::vector<double> want_var;
    for (int i = 0; i < 2; ++i) {
      const double step = nesterov ? want_m[i] * b1 + (1 - b1) * g[i] : want_m[i];
      want_var.push_back(1.0 - lr_t * step / (std::sqrt(want_v[i]) + eps));
    }
    ExpectNear(Fetch<double>(sess.get(), m.var), want_m, 1e-12);
    ExpectNear(Fetch<double>(sess.get(), v.var), want_v, 1e-12);
    ExpectNear(Fetch<double>(sess.get(), var.var), want_var, 1e-12);
    if (!nesterov) {
      EXPECT_NEAR(Fetch<double>(sess.get(), var.var)[0], 0.99, 1e-6);
    }
  }
}

TEST(TrainingOpsTest, ShapeMismatchAtBuildTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  ops::ApplyGradientDescent(s, w, 0.1f, {1.0f, 2.0f, 3.0f});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find("[2]"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("[3]"), std::string::npos) << s.status();
}

TEST(TrainingOpsTest, NonScalarHyperParameterAtBuildTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output a = ops::Variable(s.WithOpName("a"), TensorShape({2}), DT_FLOAT);
  ops::ApplyMomentum(s, w, a, {0.1f, 0.2f}, {1.0f, 2.0f}, 0.9f);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find("lr must be a scalar"), std::string::npos) << s.status();
}

TEST(TrainingOpsTest, ShapeMismatchAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output grad = ops::Placeholder(s.WithOpName("grad"), DT_FLOAT);
  Output out = ops::ApplyGradientDescent(s, w.var, 0.1f, grad);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  absl::Status status =
      sess->Run({{grad, Tensor::FromVector<float>({1, 2, 3})}}, {}, {out.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("var w has shape [2] but delta has shape [3]"), std::string::npos)
      << status;
}

TEST(TrainingOpsTest, NonScalarHyperParameterAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output alpha = ops::Placeholder(s.WithOpName("alpha"), DT_FLOAT);
  Output out = ops::ApplyGradientDescent(s, w.var, alpha, {1.0f, 1.0f});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  absl::Status status =
      sess->Run({{alpha, Tensor::FromVector<float>({1, 2})}}, {}, {out.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("alpha must be a scalar"), std::string::npos) << status;
}

TEST(TrainingOpsTest, UninitializedIsFailedPrecondition) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output accum = ops::Variable(s.WithOpName("accum"), TensorShape({2}), DT_FLOAT);
  Output out = ops::ApplyMomentum(s, w.var, accum, 0.1f, {1.0f, 1.0f}, 0.9f);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  absl::Status status = sess->Run({}, {}, {out.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("Attempting to use uninitialized value accum"), std::string::npos)
      << status;
  // Nothing was written.
  EXPECT_EQ(Fetch<float>(sess.get(), w.var), (std::vector<float>{1, 2}));
}

TEST(TrainingOpsTest, SlotThatIsTheVariableIsInvalidArgument) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output out = ops::ApplyMomentum(s, w.var, w.var, 0.1f, {1.0f, 1.0f}, 0.9f);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  absl::Status status = sess->Run({}, {}, {out.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("var and accum are the same variable w"), std::string::npos)
      << status;
}

TEST(TrainingOpsTest, ConcurrentStepsAllApply) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {0.0, 0.0});
  ops::VariableAndInit a = ops::VariableWithInit(s.WithOpName("a"), {0.0, 0.0});
  // Momentum 1 with grad 1: each step adds 1 to accum, then accum * lr to var.
  Output out = ops::ApplyMomentum(s, w.var, a.var, 1.0, {1.0, 1.0}, 1.0);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, std::vector<Node*>{w.initializer, a.initializer}).ok());
  constexpr int kThreads = 4, kSteps = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) EXPECT_TRUE(sess->Run({}, {}, {out.node}).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  const double n = kThreads * kSteps;
  EXPECT_EQ(Fetch<double>(sess.get(), a.var), (std::vector<double>{n, n}));
  // var = -(1 + 2 + ... + n) whatever the interleaving.
  EXPECT_EQ(Fetch<double>(sess.get(), w.var),
            (std::vector<double>{-n * (n + 1) / 2, -n * (n + 1) / 2}));
}

// Runs a training kernel directly, to check copy-on-write.
TEST(TrainingKernelsTest, UpdateCopiesOnWriteWhenShared) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output out = ops::ApplyGradientDescent(s, w, 0.5f, {1.0f, 1.0f});
  ASSERT_TRUE(s.ok()) << s.status();
  std::unique_ptr<Device> device = NewCpuDevice({.num_threads = 1});
  absl::StatusOr<Var*> var =
      device->resource_manager()->LookupOrCreateVar("", "w", DT_FLOAT, TensorShape({2}));
  ASSERT_TRUE(var.ok()) << var.status();
  Tensor snapshot = Tensor::FromVector<float>({3, 4});
  {
    absl::MutexLock lock(&(*var)->mu);
    (*var)->tensor = snapshot;  // the reader keeps `snapshot`
    (*var)->initialized = true;
  }
  absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
      BuiltinKernels()->CreateKernel(*out.node, device.get());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<TensorValue> inputs(3);
  inputs[0].ref = *var;
  inputs[1].tensor = Tensor::Scalar<float>(0.5f);
  inputs[2].tensor = Tensor::FromVector<float>({1, 2});
  std::vector<TensorValue> outputs(1);
  OpKernelContext::Params params;
  params.node = out.node;
  params.device = device.get();
  params.inputs = absl::MakeSpan(inputs);
  params.outputs = absl::MakeSpan(outputs);
  OpKernelContext ctx(params);
  ASSERT_TRUE((*kernel)->Compute(&ctx).ok());
  EXPECT_EQ(outputs[0].ref, *var);
  EXPECT_EQ(snapshot.flat<float>()[0], 3);
  EXPECT_EQ(snapshot.flat<float>()[1], 4);
  absl::MutexLock lock(&(*var)->mu);
  EXPECT_FALSE((*var)->tensor.SharesBufferWith(snapshot));
  EXPECT_EQ((*var)->tensor.flat<float>()[0], 2.5f);
  EXPECT_EQ((*var)->tensor.flat<float>()[1], 3.0f);
}

// The hot path: with no reader holding the variable's buffer, a step updates
// it in place and allocates nothing.
TEST(TrainingOpsTest, StepsUpdateInPlaceWithoutAllocating) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(
      s.WithOpName("w"), ops::Const<float>(s, std::vector<float>(1000, 1.0f), TensorShape({1000})));
  Output grad = ops::Const<float>(s, std::vector<float>(1000, 0.5f), TensorShape({1000}));
  Output out = ops::ApplyGradientDescent(s, w.var, 0.1f, grad);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  ASSERT_TRUE(sess->Run({}, {}, {out.node}).ok());
  const int64_t before = sess->DeviceMemoryStats()[0].num_allocs;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sess->Run({}, {}, {out.node}).ok());
  EXPECT_EQ(sess->DeviceMemoryStats()[0].num_allocs, before);
  absl::StatusOr<std::vector<Tensor>> value = sess->Run({}, {w.var}, {});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_NEAR((*value)[0].flat<float>()[999], 1.0f - 11 * 0.05f, 1e-5);
}

}  // namespace
}  // namespace sluice
