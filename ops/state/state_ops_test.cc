#include "ops/state/state_ops.h"

#include <memory>
#include <thread>
#include <vector>

#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
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
std::vector<T> Values(const Tensor& t) {
  absl::Span<T> v = t.flat<T>();
  return std::vector<T>(v.begin(), v.end());
}

// Runs `fetch` (no feeds) and returns its values.
template <typename T>
std::vector<T> Fetch(Session* sess, const Output& fetch) {
  absl::StatusOr<std::vector<Tensor>> out = sess->Run({}, {fetch}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return Values<T>((*out)[0]);
}

TEST(StateOpsTest, VariableWithInitAssignsAndReads) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f, 3.0f});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(w.var.node->name(), "w");
  EXPECT_EQ(w.var.node->op(), "VariableV2");
  EXPECT_EQ(w.var.dtype(), DT_FLOAT_REF);
  EXPECT_EQ(w.var.shape(), TensorShape({3}));
  EXPECT_EQ(w.initializer->name(), "w/Assign");
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), w.var), (std::vector<float>{1, 2, 3}));
}

TEST(StateOpsTest, AssignAddAndSubPersistAcrossRuns) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0, 2.0});
  Output add = ops::AssignAdd(s, w.var, {0.5, 0.25});
  Output sub = ops::AssignSub(s, w.var, {1.0, 1.0});
  EXPECT_EQ(add.shape(), TensorShape({2}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<double>(sess.get(), add), (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ(Fetch<double>(sess.get(), add), (std::vector<double>{2.0, 2.5}));
  EXPECT_EQ(Fetch<double>(sess.get(), sub), (std::vector<double>{1.0, 1.5}));
  EXPECT_EQ(Fetch<double>(sess.get(), w.var), (std::vector<double>{1.0, 1.5}));
  // Re-running the initializer resets the value.
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<double>(sess.get(), w.var), (std::vector<double>{1.0, 2.0}));
}

TEST(StateOpsTest, Int64CounterIncrements) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit step = ops::VariableWithInit(s.WithOpName("step"), Input(int64_t{0}));
  Output inc = ops::AssignAdd(s, step.var, Input(int64_t{1}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {step.initializer}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sess->Run({}, {}, {inc.node}).ok());
  EXPECT_EQ(Fetch<int64_t>(sess.get(), step.var), (std::vector<int64_t>{3}));
}

TEST(StateOpsTest, Int32AssignSub) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), {10, 20});
  Output sub = ops::AssignSub(s, v.var, {1, 2});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {v.initializer}).ok());
  EXPECT_EQ(Fetch<int32_t>(sess.get(), sub), (std::vector<int32_t>{9, 18}));
}

TEST(StateOpsTest, UninitializedUpdateIsFailedPrecondition) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output add = ops::AssignAdd(s, w, {1.0f, 1.0f});
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::Status status = sess->Run({}, {}, {add.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("Attempting to use uninitialized value w"), std::string::npos)
      << status;
}

TEST(StateOpsTest, IsVariableInitialized) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 1.0f);
  Output is_init = ops::IsVariableInitialized(s, w.var);
  EXPECT_EQ(is_init.dtype(), DT_BOOL);
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(Fetch<bool>(sess.get(), is_init), (std::vector<bool>{false}));
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<bool>(sess.get(), is_init), (std::vector<bool>{true}));
}

TEST(StateOpsTest, AssignShapeMismatchAtBuildTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  ops::Assign(s, w, {1.0f, 2.0f, 3.0f});
  absl::Status status = s.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("[2]"), std::string::npos) << status;
  EXPECT_NE(status.message().find("[3]"), std::string::npos) << status;
}

TEST(StateOpsTest, AssignShapeMismatchAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output assign = ops::Assign(s, w, x);
  std::unique_ptr<Session> sess = MakeSession(s);
  absl::Status status =
      sess->Run({{x, Tensor::FromVector<float>({1, 2, 3})}}, {}, {assign.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("does not match"), std::string::npos) << status;
  EXPECT_NE(status.message().find("[3]"), std::string::npos) << status;
  // The right shape works.
  EXPECT_TRUE(sess->Run({{x, Tensor::FromVector<float>({1, 2})}}, {}, {assign.node}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), w), (std::vector<float>{1, 2}));
}

TEST(StateOpsTest, AssignWithoutValidateShapeChangesShape) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output assign = ops::Assign(s, w, {1.0f, 2.0f, 3.0f}, {.validate_shape = false});
  EXPECT_EQ(assign.shape(), TensorShape({3}));
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(Fetch<float>(sess.get(), assign), (std::vector<float>{1, 2, 3}));
}

TEST(StateOpsTest, UpdateShapeMismatchAtRunTime) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output add = ops::AssignAdd(s, w.var, x);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  absl::Status status =
      sess->Run({{x, Tensor::FromVector<float>({1, 2, 3})}}, {}, {add.node}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("[2]"), std::string::npos) << status;
  EXPECT_NE(status.message().find("[3]"), std::string::npos) << status;
}

TEST(StateOpsTest, SharedNameSharesStorage) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a =
      ops::Variable(s.WithOpName("a"), TensorShape({1}), DT_FLOAT, {.shared_name = "shared"});
  Output b =
      ops::Variable(s.WithOpName("b"), TensorShape({1}), DT_FLOAT, {.shared_name = "shared"});
  Output assign = ops::Assign(s, a, {7.0f});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {assign.node}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), b), (std::vector<float>{7}));
}

TEST(StateOpsTest, GlobalVariablesInitializerFindsEveryInitializer) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit a = ops::VariableWithInit(s.WithOpName("a"), 1.0f);
  ops::VariableAndInit b = ops::VariableWithInit(s.NewSubScope("layer").WithOpName("b"), 2.0f);
  EXPECT_EQ(b.var.node->name(), "layer/b");
  EXPECT_EQ(b.initializer->name(), "layer/b/Assign");
  Node* init = ops::GlobalVariablesInitializer(s);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->name(), "init");
  EXPECT_EQ(init->in_edges().size(), 2u);
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {init}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), a.var), (std::vector<float>{1}));
  EXPECT_EQ(Fetch<float>(sess.get(), b.var), (std::vector<float>{2}));
}

TEST(StateOpsTest, GroupDepsRunsEveryDependency) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit a = ops::VariableWithInit(s.WithOpName("a"), 1.0f);
  ops::VariableAndInit b = ops::VariableWithInit(s.WithOpName("b"), 2.0f);
  Node* group = ops::GroupDeps(s, {a.initializer, b.initializer});
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->op(), "NoOp");
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {group}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), b.var), (std::vector<float>{2}));
}

TEST(StateOpsTest, VariableWithInitFromOutput) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output c = ops::Const<float>(s, {1, 2, 3, 4}, TensorShape({2, 2}));
  ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), c);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(w.var.shape(), TensorShape({2, 2}));
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {w.initializer}).ok());
  EXPECT_EQ(Fetch<float>(sess.get(), w.var), (std::vector<float>{1, 2, 3, 4}));
}

TEST(StateOpsTest, ConcurrentUpdatesAreAtomic) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), {0.0, 0.0});
  Output add = ops::AssignAdd(s, v.var, {1.0, 2.0});
  std::unique_ptr<Session> sess = MakeSession(s);
  ASSERT_TRUE(sess->Run({}, {}, {v.initializer}).ok());
  constexpr int kThreads = 4, kSteps = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i) EXPECT_TRUE(sess->Run({}, {}, {add.node}).ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(Fetch<double>(sess.get(), v.var),
            (std::vector<double>{kThreads * kSteps, 2.0 * kThreads * kSteps}));
}

// Runs one kernel directly on a variable, to see buffers.
class KernelHarness {
 public:
  explicit KernelHarness(const Node& node)
      : device_(NewCpuDevice({.num_threads = 1})), node_(node) {}

  Var* MakeVar(const std::string& name, Tensor value) {
    Var* var =
        *device_->resource_manager()->LookupOrCreateVar("", name, value.dtype(), value.shape());
    absl::MutexLock lock(&var->mu);
    var->tensor = std::move(value);
    var->initialized = true;
    return var;
  }

  absl::Status Run(std::vector<TensorValue> inputs) {
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        BuiltinKernels()->CreateKernel(node_, device_.get());
    if (!kernel.ok()) return kernel.status();
    std::vector<TensorValue> outputs(node_.num_outputs());
    OpKernelContext::Params params;
    params.node = &node_;
    params.device = device_.get();
    params.inputs = absl::MakeSpan(inputs);
    params.outputs = absl::MakeSpan(outputs);
    OpKernelContext ctx(params);
    absl::Status status = (*kernel)->Compute(&ctx);
    if (status.ok()) {
      EXPECT_NE(outputs[0].ref, nullptr);
    }
    return status;
  }

 private:
  std::unique_ptr<Device> device_;
  const Node& node_;
};

TEST(StateKernelsTest, AssignAddWritesInPlaceWhenUnshared) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output add = ops::AssignAdd(s, w, {1.0f, 1.0f});
  ASSERT_TRUE(s.ok()) << s.status();
  KernelHarness harness(*add.node);
  Var* var = harness.MakeVar("w", Tensor::FromVector<float>({1, 2}));
  void* before;
  {
    absl::MutexLock lock(&var->mu);
    before = var->tensor.raw_data();
  }
  ASSERT_TRUE(harness.Run({{.ref = var}, {.tensor = Tensor::FromVector<float>({1, 1})}}).ok());
  absl::MutexLock lock(&var->mu);
  EXPECT_EQ(var->tensor.raw_data(), before);
  EXPECT_EQ(Values<float>(var->tensor), (std::vector<float>{2, 3}));
}

TEST(StateKernelsTest, AssignAddCopiesOnWriteWhenShared) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output add = ops::AssignAdd(s, w, {1.0f, 1.0f});
  ASSERT_TRUE(s.ok()) << s.status();
  KernelHarness harness(*add.node);
  Var* var = harness.MakeVar("w", Tensor::FromVector<float>({1, 2}));
  Tensor snapshot;
  {
    absl::MutexLock lock(&var->mu);
    snapshot = var->tensor;  // a reader still holds the value
  }
  ASSERT_TRUE(harness.Run({{.ref = var}, {.tensor = Tensor::FromVector<float>({1, 1})}}).ok());
  EXPECT_EQ(Values<float>(snapshot), (std::vector<float>{1, 2}));
  absl::MutexLock lock(&var->mu);
  EXPECT_FALSE(var->tensor.SharesBufferWith(snapshot));
  EXPECT_EQ(Values<float>(var->tensor), (std::vector<float>{2, 3}));
}

TEST(StateKernelsTest, AssignCopiesSharedValue) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DT_FLOAT);
  Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT);
  Output assign = ops::Assign(s, w, x);
  ASSERT_TRUE(s.ok()) << s.status();
  KernelHarness harness(*assign.node);
  Var* var = harness.MakeVar("w", Tensor::FromVector<float>({0, 0}));
  Tensor value = Tensor::FromVector<float>({5, 6});
  ASSERT_TRUE(harness.Run({{.ref = var}, {.tensor = value}}).ok());
  value.flat<float>()[0] = 100;  // the caller's tensor stays the caller's
  absl::MutexLock lock(&var->mu);
  EXPECT_FALSE(var->tensor.SharesBufferWith(value));
  EXPECT_EQ(Values<float>(var->tensor), (std::vector<float>{5, 6}));
}

}  // namespace
}  // namespace sluice
