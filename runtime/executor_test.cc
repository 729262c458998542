// The executor against a private registry of toy ops and kernels.
#include "runtime/executor.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace {

// Out = In + 1 (float scalars or vectors).
class IncOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->forward_input_or_allocate_output(0, 0, ctx->input(0).shape()));
    const float* in = ctx->input(0).data<float>();
    float* o = out->data<float>();
    for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = in[i] + 1;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class SumOp : public OpKernel {  // out = a + b
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    for (int64_t i = 0; i < out->NumElements(); ++i) {
      out->data<float>()[i] = ctx->input(0).data<float>()[i] + ctx->input(1).data<float>()[i];
    }
    return absl::OkStatus();
  }
};

// Sleeps, records how many run at once.
std::atomic<int> g_running{0};
std::atomic<int> g_max_running{0};
class SlowOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    int now = ++g_running;
    int prev = g_max_running.load();
    while (now > prev && !g_max_running.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --g_running;
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
};

class FailOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext*) override {
    return absl::InvalidArgumentError("deliberate failure");
  }
};

// Finishes later, from another thread: out = in + 10, or an error when the
// input is negative.
class LaterOp : public AsyncOpKernel {
 public:
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::thread([ctx, done = std::move(done)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const float in = ctx->input(0).data<float>()[0];
      if (in < 0) {
        done(absl::OutOfRangeError("negative input"));
        return;
      }
      absl::StatusOr<Tensor*> out = ctx->allocate_output(0, ctx->input(0).shape());
      if (!out.ok()) {
        done(out.status());
        return;
      }
      for (int64_t i = 0; i < (*out)->NumElements(); ++i) {
        (*out)->data<float>()[i] = ctx->input(0).data<float>()[i] + 10;
      }
      done(absl::OkStatus());
    }).detach();
  }
  bool IsExpensive() const override { return false; }
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    RegisterFrameKernels(&kernels_);
    for (const char* op : {"Inc", "Slow", "Fail", "Later"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(op).Input("x: float").Output("y: float")).ok());
    }
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Sum").Input("a: float").Input("b: float").Output("y: float")).ok());
    kernels_.Register<IncOp>(KernelDef("Inc", kDeviceTypeCpu));
    kernels_.Register<SumOp>(KernelDef("Sum", kDeviceTypeCpu));
    kernels_.Register<SlowOp>(KernelDef("Slow", kDeviceTypeCpu));
    kernels_.Register<FailOp>(KernelDef("Fail", kDeviceTypeCpu));
    kernels_.Register<LaterOp>(KernelDef("Later", kDeviceTypeCpu));
    device_ = NewCpuDevice({.num_threads = 2});
  }

  // _Arg(0) -> body -> _Retval(0..n)
  Output Arg(const Scope& s) {
    return s.Op(kArgOp).Attr("T", DT_FLOAT).Attr("index", int64_t{0}).Finalize1();
  }
  void Retval(const Scope& s, Output o, int index) {
    s.Op(kRetvalOp).Input(o).Attr("index", int64_t{index}).Finalize();
  }
  absl::StatusOr<std::vector<Tensor>> RunGraph(std::unique_ptr<Graph> g, Tensor arg, int nret) {
    ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex, Executor::Create(std::move(g), device_.get(), kernels_));
    CallFrame frame;
    frame.args = {arg};
    frame.retvals.resize(nret);
    RETURN_IF_ERROR(ex->Run({.step_id = 1, .call_frame = &frame}));
    return frame.retvals;
  }

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> device_;
};

TEST_F(ExecutorTest, RunsAChainAndReusesBuffers) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  for (int i = 0; i < 100; ++i) x = s.Op("Inc").Input(x).Finalize1();
  Retval(s, x, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(std::move(g), Tensor::FromVector<float>({1, 2}), 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 101);
  EXPECT_EQ((*out)[0].flat<float>()[1], 102);
  // Every Inc forwarded its input: only a handful of allocations for 100 nodes.
  EXPECT_LT(device_->allocator()->GetStats().num_allocs, 5);
}

TEST_F(ExecutorTest, DiamondAndFanOut) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  Output a = s.Op("Inc").Input(x).Finalize1();
  Output b = s.Op("Inc").Input(a).Finalize1();
  Output c = s.Op("Sum").Input(a).Input(b).Finalize1();  // (x+1) + (x+2)
  Retval(s, c, 0);
  Retval(s, a, 1);
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(std::move(g), Tensor::Scalar<float>(10), 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 23);
  EXPECT_EQ((*out)[1].scalar<float>(), 11);  // a was not clobbered by b's in-place Inc
}

TEST_F(ExecutorTest, IndependentExpensiveNodesRunInParallel) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  for (int i = 0; i < 4; ++i) Retval(s, s.Op("Slow").Input(x).Finalize1(), i);
  ASSERT_TRUE(s.ok());
  g_max_running = 0;
  ASSERT_TRUE(RunGraph(std::move(g), Tensor::Scalar<float>(1), 4).ok());
  EXPECT_GE(g_max_running.load(), 2);
}

TEST_F(ExecutorTest, RunInlineRunsOneNodeAtATime) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  for (int i = 0; i < 3; ++i) Retval(s, s.Op("Slow").Input(x).Finalize1(), i);
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(std::move(g), device_.get(), kernels_);
  ASSERT_TRUE(ex.ok());
  CallFrame frame;
  frame.args = {Tensor::Scalar<float>(4)};
  frame.retvals.resize(3);
  g_max_running = 0;
  ASSERT_TRUE((*ex)->Run({.call_frame = &frame, .run_inline = true}).ok());
  EXPECT_EQ(g_max_running.load(), 1);
  EXPECT_EQ(frame.retvals[2].scalar<float>(), 4);
}

TEST_F(ExecutorTest, FirstErrorStopsTheStepAndNamesTheNode) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  Output bad = s.WithOpName("breaker").Op("Fail").Input(x).Finalize1();
  Retval(s, s.Op("Inc").Input(bad).Finalize1(), 0);
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(std::move(g), Tensor::Scalar<float>(1), 1);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("'breaker' (Fail)"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("deliberate failure"), std::string::npos);
}

TEST_F(ExecutorTest, MissingKernelIsAClearError) {
  ASSERT_TRUE(ops_.Register(OpDefBuilder("NoKernel").Input("x: float").Output("y: float")).ok());
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  s.WithOpName("lonely").Op("NoKernel").Input(Arg(s)).Finalize();
  absl::StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(std::move(g), device_.get(), kernels_);
  EXPECT_EQ(ex.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(ex.status().message().find("'lonely' (NoKernel)"), std::string::npos);
}

TEST_F(ExecutorTest, ConcurrentRunsAreIndependent) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  for (int i = 0; i < 50; ++i) x = s.Op("Inc").Input(x).Finalize1();
  Retval(s, x, 0);
  absl::StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(std::move(g), device_.get(), kernels_);
  ASSERT_TRUE(ex.ok());
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        CallFrame frame;
        frame.args = {Tensor::Scalar<float>(t * 1000 + k)};
        frame.retvals.resize(1);
        if ((*ex)->Run({.call_frame = &frame}).ok() &&
            frame.retvals[0].scalar<float>() == t * 1000 + k + 50) {
          ++good;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 200);
}

TEST_F(ExecutorTest, AsyncKernelsHoldNoThreadAndFeedTheirConsumers) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output x = Arg(s);
  // Two async nodes in a chain, and eight side by side: with two pool
  // threads the executor must not block one per waiting kernel.
  Output chain = s.Op("Later").Input(s.Op("Later").Input(x).Finalize1()).Finalize1();
  Retval(s, s.Op("Inc").Input(chain).Finalize1(), 0);
  for (int i = 0; i < 8; ++i) Retval(s, s.Op("Later").Input(x).Finalize1(), i + 1);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(std::move(g), Tensor::FromVector<float>({1}), 9);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 22);
  for (int i = 1; i <= 8; ++i) EXPECT_EQ((*out)[i].flat<float>()[0], 11);
}

TEST_F(ExecutorTest, AsyncKernelErrorNamesTheNode) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Output y = s.WithOpName("late").Op("Later").Input(Arg(s)).Finalize1();
  Retval(s, s.Op("Inc").Input(y).Finalize1(), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(std::move(g), Tensor::FromVector<float>({-1}), 1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("late"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("negative input"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace sluice
