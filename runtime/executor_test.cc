// The executor against a private registry of toy ops and kernels, control
// flow included (runtime/executor_testutil.h).
#include "runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "runtime/executor_testutil.h"
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

// Forwards its input and records where it ran: node, frame and iteration.
struct TraceEvent {
  std::string node;
  uint64_t frame_id;
  int64_t iter;
};
absl::Mutex g_trace_mu;
std::vector<TraceEvent> g_trace ABSL_GUARDED_BY(g_trace_mu);
class TraceOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    absl::MutexLock lock(&g_trace_mu);
    g_trace.push_back({ctx->node().name(), ctx->frame_iter().frame_id, ctx->frame_iter().iter});
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};
std::vector<TraceEvent> TraceOf(const std::string& node) {
  absl::MutexLock lock(&g_trace_mu);
  std::vector<TraceEvent> out;
  for (const TraceEvent& e : g_trace) {
    if (e.node == node) out.push_back(e);
  }
  return out;
}

class ZeroOp : public OpKernel {  // out = 0, shaped like in
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, ctx->input(0).shape()));
    for (int64_t i = 0; i < out->NumElements(); ++i) out->data<float>()[i] = 0;
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    RegisterFrameKernels(&kernels_);
    ASSERT_TRUE(RegisterTestControlFlowOps(&ops_).ok());
    RegisterTestControlFlowKernels(&kernels_);
    for (const char* op : {"Inc", "Slow", "Fail", "Later", "Trace", "Zero"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(op).Input("x: float").Output("y: float")).ok());
    }
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Sum").Input("a: float").Input("b: float").Output("y: float")).ok());
    kernels_.Register<IncOp>(KernelDef("Inc", kDeviceTypeCpu));
    kernels_.Register<SumOp>(KernelDef("Sum", kDeviceTypeCpu));
    kernels_.Register<SlowOp>(KernelDef("Slow", kDeviceTypeCpu));
    kernels_.Register<FailOp>(KernelDef("Fail", kDeviceTypeCpu));
    kernels_.Register<LaterOp>(KernelDef("Later", kDeviceTypeCpu));
    kernels_.Register<TraceOp>(KernelDef("Trace", kDeviceTypeCpu));
    kernels_.Register<ZeroOp>(KernelDef("Zero", kDeviceTypeCpu));
    device_ = NewCpuDevice({.num_threads = 2});
    absl::MutexLock lock(&g_trace_mu);
    g_trace.clear();
  }

  // _Arg(0) -> body -> _Retval(0..n)
  Output Arg(const Scope& s, int index = 0) {
    return s.Op(kArgOp).Attr("T", DT_FLOAT).Attr("index", int64_t{index}).Finalize1();
  }
  void Retval(const Scope& s, Output o, int index) {
    s.Op(kRetvalOp).Input(o).Attr("index", int64_t{index}).Finalize();
  }
  absl::StatusOr<std::vector<Tensor>> RunGraph(std::unique_ptr<Graph> g, Tensor arg, int nret) {
    return RunGraphWithArgs(std::move(g), {arg}, nret);
  }
  absl::StatusOr<std::vector<Tensor>> RunGraphWithArgs(std::unique_ptr<Graph> g,
                                                       std::vector<Tensor> args, int nret) {
    ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex, Executor::Create(std::move(g), device_.get(), kernels_));
    CallFrame frame;
    frame.args = std::move(args);
    frame.retvals.resize(nret);
    RETURN_IF_ERROR(ex->Run({.step_id = 1, .call_frame = &frame}));
    return frame.retvals;
  }

  absl::StatusOr<std::vector<Tensor>> RunWith(std::unique_ptr<Graph> g, float x, float limit,
                                              int nret) {
    return RunGraphWithArgs(std::move(g), {Tensor::Scalar<float>(x), Tensor::Scalar<float>(limit)},
                            nret);
  }
  Output Inc(const Scope& s, const Output& x) { return s.Op("Inc").Input(x).Finalize1(); }
  // Switch(x, x < limit) of _Arg 0 and _Arg 1: output 1 is live when x < limit.
  std::vector<Output> SwitchOnLess(const Scope& s) {
    const Output x = Arg(s, 0);
    return s.WithOpName("sw").Op("Switch").Input(x).Input(Less(s, x, Arg(s, 1))).FinalizeAll();
  }
  // while (x < 6) { Slow(x); x = Inc(x); }: Slow is off the loop's carried
  // path, so its iterations may overlap up to parallel_iterations. Returns
  // the most Slow kernels (one per iteration) that ran at once.
  int MaxSlowInFlight(int64_t parallel_iterations);

  OpRegistry ops_;
  KernelRegistry kernels_;
  std::unique_ptr<Device> device_;
};

std::vector<Output> Vec(std::initializer_list<Output> v) { return v; }

Output LessFirstTwo(const Scope& c, absl::Span<const Output> v) { return Less(c, v[0], v[1]); }

int ExecutorTest::MaxSlowInFlight(int64_t parallel_iterations) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  absl::StatusOr<std::vector<Output>> out = BuildTestLoop(
      s, {Arg(s, 0)}, {Arg(s, 1)}, LessFirstTwo,
      [](const Scope& b, absl::Span<const Output> v) {
        b.Op("Slow").Input(v[0]).Finalize();
        return Vec({b.Op("Inc").Input(v[0]).Finalize1()});
      },
      {.parallel_iterations = parallel_iterations});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return -1;
  Retval(s, (*out)[0], 0);
  g_running = 0;
  g_max_running = 0;
  absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), 0, 6, 1);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return -1;
  EXPECT_EQ((*r)[0].scalar<float>(), 6);
  return g_max_running.load();
}

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

// ---- Control flow ------------------------------------------------------------

// while (x < limit) x = Inc(Trace(x)); then Trace in the root frame.
TEST_F(ExecutorTest, WhileLoopRunsItsBodyOncePerIterationInOneFrame) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  absl::StatusOr<std::vector<Output>> out = BuildTestLoop(
      s, {Arg(s, 0)}, {Arg(s, 1)}, LessFirstTwo, [](const Scope& b, absl::Span<const Output> v) {
        return Vec({b.Op("Inc").Input(b.WithOpName("body").Op("Trace").Input(v[0]).Finalize1())
                        .Finalize1()});
      });
  ASSERT_TRUE(out.ok()) << out.status();
  Retval(s, s.WithOpName("after").Op("Trace").Input((*out)[0]).Finalize1(), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), 0, 3, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 3);
  // The body ran in iterations 0, 1 and 2 of one loop frame (not the root's).
  std::vector<TraceEvent> body = TraceOf("body");
  ASSERT_EQ(body.size(), 3u);
  std::vector<int64_t> iters;
  for (const TraceEvent& e : body) {
    EXPECT_NE(e.frame_id, 0u);
    EXPECT_EQ(e.frame_id, body[0].frame_id);
    iters.push_back(e.iter);
  }
  std::sort(iters.begin(), iters.end());
  EXPECT_EQ(iters, (std::vector<int64_t>{0, 1, 2}));
  // After the Exit: the root frame, once.
  std::vector<TraceEvent> after = TraceOf("after");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].frame_id, 0u);
  EXPECT_EQ(after[0].iter, 0);
}

TEST_F(ExecutorTest, WhileLoopOfNoIterationRunsNoBody) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  absl::StatusOr<std::vector<Output>> out = BuildTestLoop(
      s, {Arg(s, 0)}, {Arg(s, 1)}, LessFirstTwo, [](const Scope& b, absl::Span<const Output> v) {
        return Vec({b.WithOpName("body").Op("Trace").Input(v[0]).Finalize1()});
      });
  ASSERT_TRUE(out.ok()) << out.status();
  Retval(s, (*out)[0], 0);
  absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), 5, 3, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 5);
  EXPECT_TRUE(TraceOf("body").empty());  // dead in iteration 0: it did not run
}

// for (i = 0; i < 3; ++i) for (j = 0; j < 2; ++j) ++total;
TEST_F(ExecutorTest, NestedWhileLoopStartsAnInnerFrameInEachOuterIteration) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  const Output zero = Arg(s, 0);
  absl::StatusOr<std::vector<Output>> out = BuildTestLoop(
      s, {zero, zero}, {Arg(s, 1), Arg(s, 2)},
      [](const Scope& c, absl::Span<const Output> v) { return Less(c, v[0], v[2]); },
      [](const Scope& b, absl::Span<const Output> v) {
        // v: i, total, outer limit, inner limit.
        const Output i = b.WithOpName("outer_body").Op("Trace").Input(v[0]).Finalize1();
        absl::StatusOr<std::vector<Output>> inner = BuildTestLoop(
            b, {b.Op("Zero").Input(i).Finalize1(), v[1]}, {v[3]},
            [](const Scope& c, absl::Span<const Output> w) { return Less(c, w[0], w[2]); },
            [](const Scope& c, absl::Span<const Output> w) {
              const Output j = c.WithOpName("inner_body").Op("Trace").Input(w[0]).Finalize1();
              return Vec({c.Op("Inc").Input(j).Finalize1(), c.Op("Inc").Input(w[1]).Finalize1()});
            },
            {.frame = "inner"});
        if (!inner.ok()) {
          b.UpdateStatus(inner.status());
          return std::vector<Output>{};
        }
        return Vec({b.Op("Inc").Input(i).Finalize1(), (*inner)[1]});
      },
      {.frame = "outer"});
  ASSERT_TRUE(out.ok()) << out.status();
  Retval(s, (*out)[0], 0);
  Retval(s, (*out)[1], 1);
  absl::StatusOr<std::vector<Tensor>> r = RunGraphWithArgs(
      std::move(g), {Tensor::Scalar<float>(0), Tensor::Scalar<float>(3), Tensor::Scalar<float>(2)},
      2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 3);
  EXPECT_EQ((*r)[1].scalar<float>(), 6);
  std::vector<TraceEvent> outer = TraceOf("outer_body");
  ASSERT_EQ(outer.size(), 3u);
  // One inner frame per outer iteration, each with iterations 0 and 1.
  std::map<uint64_t, std::vector<int64_t>> inner;  // iterations by frame
  for (const TraceEvent& e : TraceOf("inner_body")) inner[e.frame_id].push_back(e.iter);
  ASSERT_EQ(inner.size(), 3u);
  for (auto& [frame_id, iters] : inner) {
    EXPECT_NE(frame_id, outer[0].frame_id);
    std::sort(iters.begin(), iters.end());
    EXPECT_EQ(iters, (std::vector<int64_t>{0, 1}));
  }
}

// y = x < limit ? Inc(Inc(Trace(x))) : Inc(Trace(x))
TEST_F(ExecutorTest, CondRunsOnlyTheTakenBranch) {
  for (const float x : {1.0f, 7.0f}) {
    auto g = std::make_unique<Graph>(&ops_);
    Scope s = Scope::NewRootScope(g.get());
    const std::vector<Output> sw = SwitchOnLess(s);
    const Output no = s.WithOpName("else").Op("Trace").Input(sw[0]).Finalize1();
    const Output yes = s.WithOpName("then").Op("Trace").Input(sw[1]).Finalize1();
    const std::vector<Output> merge =
        s.Op("Merge")
            .InputList(std::vector<Output>{s.Op("Inc").Input(no).Finalize1(),
                                           Inc(s, Inc(s, yes))})
            .FinalizeAll();
    Retval(s, merge[0], 0);
    s.Op(kRetvalOp).Input(merge[1]).Attr("index", int64_t{1}).Finalize();
    ASSERT_TRUE(s.ok()) << s.status();
    {
      absl::MutexLock lock(&g_trace_mu);
      g_trace.clear();
    }
    absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), x, 5, 2);
    ASSERT_TRUE(r.ok()) << r.status();
    const bool taken = x < 5;
    EXPECT_EQ((*r)[0].scalar<float>(), taken ? x + 2 : x + 1);
    EXPECT_EQ((*r)[1].scalar<int32_t>(), taken ? 1 : 0);  // Merge's value_index
    EXPECT_EQ(TraceOf("then").size(), taken ? 1u : 0u);
    EXPECT_EQ(TraceOf("else").size(), taken ? 0u : 1u);
  }
}

// A dead tensor flows through every op downstream of the untaken branch
// (a two-input op with one dead input too) and stops at the Merge.
TEST_F(ExecutorTest, DeadTensorsPropagateThroughOpsAndStopAtMerge) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  const std::vector<Output> sw = SwitchOnLess(s);
  // sw[0] is dead (x < limit): dead1 -> dead2 -> Sum(dead2, x) -> Merge.
  const Output d1 = s.WithOpName("dead1").Op("Trace").Input(sw[0]).Finalize1();
  const Output d2 = s.WithOpName("dead2").Op("Trace").Input(d1).Finalize1();
  const Output d3 = s.Op("Sum").Input(d2).Input(Arg(s, 0)).Finalize1();
  const Output live = s.WithOpName("live").Op("Trace").Input(sw[1]).Finalize1();
  const Output merged = s.Op("Merge").InputList(std::vector<Output>{d3, live}).Finalize1();
  Retval(s, s.WithOpName("after").Op("Trace").Input(merged).Finalize1(), 0);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), 2, 5, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 2);
  EXPECT_TRUE(TraceOf("dead1").empty());
  EXPECT_TRUE(TraceOf("dead2").empty());
  EXPECT_EQ(TraceOf("live").size(), 1u);
  EXPECT_EQ(TraceOf("after").size(), 1u);
}

TEST_F(ExecutorTest, FetchingADeadTensorIsAnError) {
  auto g = std::make_unique<Graph>(&ops_);
  Scope s = Scope::NewRootScope(g.get());
  Retval(s, SwitchOnLess(s)[0], 0);
  absl::StatusOr<std::vector<Tensor>> r = RunWith(std::move(g), 2, 5, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("sw:0 was not computed"), std::string::npos) << r.status();
}

TEST_F(ExecutorTest, ParallelIterationsLetIterationsOverlap) {
  // Two pool threads: at most two Slow kernels at once.
  EXPECT_EQ(MaxSlowInFlight(4), 2);
}

TEST_F(ExecutorTest, OneParallelIterationSerializesIterations) {
  // Iteration i + 1 starts only when every node of iteration i has run.
  EXPECT_EQ(MaxSlowInFlight(1), 1);
}

}  // namespace
}  // namespace sluice
