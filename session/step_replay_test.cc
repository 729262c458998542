// Recording and replaying steps (runtime/step_replay.h) without a GPU: a fake
// "REC" device whose kernels queue closures, as a GPU's queue launches. While
// it records, the closures are kept instead of run (and its allocations come
// from a CaptureArena); a replay runs them again on the same memory. So a
// replay is right only if the session hands it the feeds, fetches and
// variables the way a CUDA graph needs them: these tests compare every step
// with a session that never records.
#include "runtime/step_replay.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/scope.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "runtime/backend.h"
#include "runtime/capture_arena.h"
#include "runtime/capture_epoch.h"
#include "session/direct_session.h"
#include "runtime/fake_device_memory.h"
#include "runtime/frame_ops.h"
#include "runtime/session.h"

namespace sluice {
namespace {

constexpr char kRec[] = "REC";

class RecordedWork : public CapturedWork {
 public:
  RecordedWork(std::vector<std::function<void()>> queue, std::shared_ptr<CaptureArena> arena)
      : queue_(std::move(queue)), arena_(std::move(arena)) {}
  ~RecordedWork() override { arena_->Release(); }
  absl::Status Replay() override {
    for (const auto& fn : queue_) fn();
    return absl::OkStatus();
  }

 private:
  std::vector<std::function<void()>> queue_;
  std::shared_ptr<CaptureArena> arena_;
};

class RecordingDevice : public Device {
 public:
  RecordingDevice() : Device("/job:localhost/replica:0/task:0/device:REC:0", kRec) {}
  Allocator* allocator() override {
    if (arena_ != nullptr) return arena_.get();
    return device_.get();
  }
  ThreadPool* thread_pool() override { return &pool_; }
  bool has_device_memory() const override { return true; }
  Allocator* host_allocator() override { return host_.get(); }
  absl::StatusOr<Tensor> CopyToHost(const Tensor& t) override {
    if (!t.on_device()) return t;
    if (recording_) return absl::FailedPreconditionError("copying to the host while recording");
    return Copy(t, host_.get());
  }
  absl::StatusOr<Tensor> CopyFromHost(const Tensor& t) override {
    if (t.on_device()) return t;
    return Copy(t, allocator());  // while recording: an upload the recording reads
  }
  absl::Status CopyWithinDevice(const Tensor& src, Tensor* dst) override {
    if (recording_ && !(src.on_device() && dst->on_device())) {
      return absl::FailedPreconditionError("a host copy while recording");
    }
    const void* from = src.raw_data();
    void* to = dst->raw_data();
    const size_t bytes = src.TotalBytes();
    Enqueue([=] { std::memcpy(to, from, bytes); });
    return absl::OkStatus();
  }
  bool can_capture() const override { return true; }
  absl::Status BeginCapture() override {
    if (recording_) return absl::FailedPreconditionError("already recording");
    recording_ = true;
    arena_ = std::make_shared<CaptureArena>(device_.get());
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> EndCapture() override {
    recording_ = false;
    auto work = std::make_unique<RecordedWork>(std::move(recorded_), std::move(arena_));
    recorded_.clear();
    arena_ = nullptr;
    ++recordings;
    return std::unique_ptr<CapturedWork>(std::move(work));
  }

  // What a kernel queues: run now, or kept while recording.
  void Enqueue(std::function<void()> fn) {
    if (recording_) {
      recorded_.push_back(std::move(fn));
    } else {
      fn();
    }
  }

  std::atomic<int> recordings{0};

 private:
  static absl::StatusOr<Tensor> Copy(const Tensor& t, Allocator* a) {
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a, t.dtype(), t.shape()));
    std::memcpy(out.raw_data(), t.raw_data(), t.TotalBytes());
    return out;
  }

  std::shared_ptr<FakeDeviceMemory> device_ = std::make_shared<FakeDeviceMemory>("rec_device");
  std::shared_ptr<CpuAllocator> host_ = std::make_shared<CpuAllocator>("rec_host");
  ThreadPool pool_{"rec", 1};
  // Touched by the one thread that runs a recorded step.
  bool recording_ = false;
  std::shared_ptr<CaptureArena> arena_;
  std::vector<std::function<void()>> recorded_;
};

RecordingDevice* Rec(OpKernelContext* ctx) { return static_cast<RecordingDevice*>(ctx->device()); }

std::atomic<int> g_mul_computes{0};
std::atomic<int> g_copies_on_write{0};
std::atomic<bool> g_always_copy{false};

// y = a * b, element-wise (same shapes).
class MulOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ++g_mul_computes;
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, a.shape()));
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y->data<float>();
    const int64_t n = a.NumElements();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) py[i] = pa[i] * pb[i];
    });
    return absl::OkStatus();
  }
};

// y = x * s, s a scalar.
class ScaleOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    const float* px = x.data<float>();
    const float* ps = ctx->input(1).data<float>();
    float* py = y->data<float>();
    const int64_t n = x.NumElements();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) py[i] = px[i] * ps[0];
    });
    return absl::OkStatus();
  }
};

// A scalar: the sum of x.
class SumOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    const float* px = x.data<float>();
    float* py = y->data<float>();
    const int64_t n = x.NumElements();
    Rec(ctx)->Enqueue([=] {
      float s = 0;
      for (int64_t i = 0; i < n; ++i) s += px[i];
      py[0] = s;
    });
    return absl::OkStatus();
  }
};

// The element count of x as a float scalar in host memory (reads only the
// shape, as a GPU's Shape kernel does).
class SizeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    y->data<float>()[0] = static_cast<float>(ctx->input(0).NumElements());
    return absl::OkStatus();
  }
};

// A variable of the device.
class VarOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * v, ctx->resource_manager()->LookupOrCreateVar(
                                  "", ctx->node().name(), DT_FLOAT, TensorShape({-1})));
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// ref = value, taking the value's buffer (as Assign does when it can).
class AssignOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    Var* v = ctx->input_ref(0);
    absl::MutexLock lock(&v->mu);
    v->tensor = ctx->input(1);
    v->initialized = true;
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// ref -= delta: in place when nobody else holds the variable's buffer, else
// into a fresh copy that the variable takes (copy-on-write, as the real
// update kernels do).
class SubOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    Var* v = ctx->input_ref(0);
    absl::MutexLock lock(&v->mu);
    if (!v->tensor.RefCountIsOne() || g_always_copy) {
      ASSIGN_OR_RETURN(Tensor fresh, Tensor::Allocate(ctx->device()->allocator(), DT_FLOAT,
                                                      v->tensor.shape()));
      RETURN_IF_ERROR(ctx->device()->CopyWithinDevice(v->tensor, &fresh));
      v->tensor = fresh;
      ++g_copies_on_write;
    }
    float* pv = v->tensor.data<float>();
    const int64_t n = v->tensor.NumElements();
    const float* pd = ctx->input(1).data<float>();
    Rec(ctx)->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) pv[i] -= pd[i];
    });
    ctx->set_output(0, Tensor());
    ctx->set_output_ref(0, v);
    return absl::OkStatus();
  }
};

// Reads its input on the host (a step that cannot be recorded).
class PeekOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor host, ctx->device()->CopyToHost(ctx->input(0)));
    ctx->set_output(0, ctx->input(0));
    return absl::OkStatus();
  }
};

// Stateful: a counter on the host.
class TickOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, TensorShape({})));
    const float value = static_cast<float>(++ticks_);
    float* py = y->data<float>();
    Rec(ctx)->Enqueue([=] { py[0] = value; });
    return absl::OkStatus();
  }

 private:
  int ticks_ = 0;
};

class RecBackend : public Backend {
 public:
  std::string device_type() const override { return kRec; }
  absl::StatusOr<std::vector<std::unique_ptr<Device>>> CreateDevices(
      const LocalDevicesOptions&) const override {
    std::vector<std::unique_ptr<Device>> out;
    out.push_back(std::make_unique<RecordingDevice>());
    return out;
  }
  void RegisterKernels(KernelRegistry* kernels) const override {
    kernels->Register<MulOp>(KernelDef("Mul", kRec));
    kernels->Register<ScaleOp>(KernelDef("Scale", kRec));
    kernels->Register<SumOp>(KernelDef("Sum", kRec));
    kernels->Register<SizeOp>(KernelDef("Size", kRec).HostMemory("y"));
    kernels->Register<VarOp>(KernelDef("Var", kRec));
    kernels->Register<AssignOp>(KernelDef("Assign", kRec));
    kernels->Register<SubOp>(KernelDef("Sub", kRec));
    kernels->Register<PeekOp>(KernelDef("Peek", kRec));
    kernels->Register<TickOp>(KernelDef("Tick", kRec));
    RegisterHostMemoryFrameKernels(kernels, kRec, {DT_FLOAT});
  }
};

class StepReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(backends_.Add(std::make_unique<RecBackend>()).ok());
    ASSERT_TRUE(RegisterFrameOps(&ops_).ok());
    for (const char* binary : {"Mul", "Scale"}) {
      ASSERT_TRUE(
          ops_.Register(OpDefBuilder(binary).Input("a: float").Input("b: float").Output("y: float"))
              .ok());
    }
    for (const char* unary : {"Sum", "Size", "Peek"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(unary).Input("x: float").Output("y: float")).ok());
    }
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Input").Output("y: float")).ok());  // always fed
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Tick").Output("y: float").SetIsStateful()).ok());
    ASSERT_TRUE(ops_.Register(OpDefBuilder("Var")
                                  .Output("ref: Ref(float)")
                                  .SetIsStateful()
                                  .SetIsVariable())
                    .ok());
    for (const char* update : {"Assign", "Sub"}) {
      ASSERT_TRUE(ops_.Register(OpDefBuilder(update)
                                    .Input("ref: Ref(float)")
                                    .Input("value: float")
                                    .Output("out: Ref(float)"))
                      .ok());
    }
    backends_.RegisterKernels(&kernels_);
  }

  // w (a variable), x (fed): loss = Sum(w * x) * Size(x), fetched;
  // train: w -= x; init: w = w0 (fed).
  GraphDef TrainingGraph(bool peek = false, bool tick = false) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    Output w = s.WithOpName("w").Op("Var").Finalize1();
    Output x = s.WithOpName("x").Op("Input").Finalize1();
    if (peek) x = s.WithOpName("peek").Op("Peek").Input(x).Finalize1();
    Output wx = s.WithOpName("wx").Op("Mul").Input(w).Input(x).Finalize1();
    Output sum = s.WithOpName("sum").Op("Sum").Input(wx).Finalize1();
    Output size = s.WithOpName("size").Op("Size").Input(x).Finalize1();
    Output loss = s.WithOpName("loss").Op("Scale").Input(sum).Input(size).Finalize1();
    if (tick) {
      Output t = s.WithOpName("tick").Op("Tick").Finalize1();
      loss = s.WithOpName("loss_ticked").Op("Scale").Input(loss).Input(t).Finalize1();
    }
    s.WithOpName("train").Op("Sub").Input(w).Input(x).ControlInput(loss.node).Finalize();
    Output w0 = s.WithOpName("w0").Op("Input").Finalize1();
    s.WithOpName("init").Op("Assign").Input(w).Input(w0).Finalize();
    EXPECT_TRUE(s.ok()) << s.status();
    GraphDef def;
    g.ToGraphDef(&def);
    return def;
  }

  std::unique_ptr<Session> NewRecSession(const GraphDef& def, bool capture) {
    SessionConfig options;
    options.ops = &ops_;
    options.kernels = &kernels_;
    options.backends = &backends_;
    options.default_device = "/device:REC:0";
    options.capture_steps = capture;
    absl::StatusOr<std::unique_ptr<Session>> session = NewSession(options, def);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

  static Tensor Floats(std::vector<float> v) {
    Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(v.size())}));
    for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
    return t;
  }

  // One training step: the loss, and whether it was a replay.
  static std::pair<float, bool> Step(Session* s, const Tensor& x) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out = s->Run({{"x", x}}, {"loss"}, {"train"}, {}, &md);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {0, false};
    return {(*out)[0].scalar<float>(), md.step_replayed};
  }

  static std::vector<float> ReadW(Session* s, const Tensor& x) {
    // Fetching w itself: a one-node signature of its own.
    absl::StatusOr<std::vector<Tensor>> out = s->Run({{"x", x}}, {"wx"}, {});
    EXPECT_TRUE(out.ok()) << out.status();
    std::vector<float> w;
    if (!out.ok()) return w;
    for (int64_t i = 0; i < (*out)[0].NumElements(); ++i) {
      w.push_back((*out)[0].data<float>()[i] / x.data<float>()[i]);
    }
    return w;
  }

  BackendRegistry backends_;
  OpRegistry ops_;
  KernelRegistry kernels_;
};

TEST_F(StepReplayTest, ReplaysMatchTheExecutorStepByStep) {
  const GraphDef def = TrainingGraph();
  std::unique_ptr<Session> replaying = NewRecSession(def, true);
  std::unique_ptr<Session> plain = NewRecSession(def, false);
  ASSERT_NE(replaying, nullptr);
  ASSERT_NE(plain, nullptr);
  for (Session* s : {replaying.get(), plain.get()}) {
    ASSERT_TRUE(s->Run({{"w0", Floats({1, 2, 3})}}, {}, {"init"}).ok());
  }
  int mul_computes_while_replaying = 0;
  g_copies_on_write = 0;
  for (int step = 0; step < 8; ++step) {
    // New values every step, same shape.
    Tensor x = Floats({0.5f + step, -1.0f * step, 0.25f});
    const int before = g_mul_computes.load();
    auto [loss, replayed] = Step(replaying.get(), x);
    if (step > 2) mul_computes_while_replaying += g_mul_computes.load() - before;
    auto [want, plain_replayed] = Step(plain.get(), x);
    EXPECT_FALSE(plain_replayed);
    EXPECT_EQ(loss, want) << "step " << step;
    // Two runs through the executor, then the third is recorded (and
    // replayed at once), the rest replayed.
    EXPECT_EQ(replayed, step >= 2) << "step " << step;
  }
  // Replays queue the recorded work without running any kernel's Compute.
  EXPECT_EQ(mul_computes_while_replaying, 0);
  // The update ran after every read of w: in place, recorded too.
  EXPECT_EQ(g_copies_on_write.load(), 0);
  Tensor probe = Floats({1, 1, 1});
  EXPECT_EQ(ReadW(replaying.get(), probe), ReadW(plain.get(), probe));
}

TEST_F(StepReplayTest, CopyOnWriteUpdatesAreRecordedWithACopyBack) {
  // As when a reader not ordered before the update still holds w's value:
  // every update copies.
  g_always_copy = true;
  const GraphDef def = TrainingGraph();
  std::unique_ptr<Session> replaying = NewRecSession(def, true);
  std::unique_ptr<Session> plain = NewRecSession(def, false);
  ASSERT_NE(replaying, nullptr);
  ASSERT_NE(plain, nullptr);
  for (Session* s : {replaying.get(), plain.get()}) {
    ASSERT_TRUE(s->Run({{"w0", Floats({1, 2, 3})}}, {}, {"init"}).ok());
  }
  g_copies_on_write = 0;
  for (int step = 0; step < 6; ++step) {
    Tensor x = Floats({1.0f + step, 2, -0.5f * step});
    auto [loss, replayed] = Step(replaying.get(), x);
    auto [want, unused] = Step(plain.get(), x);
    EXPECT_EQ(loss, want) << "step " << step;
    EXPECT_EQ(replayed, step >= 2) << "step " << step;
  }
  EXPECT_GT(g_copies_on_write.load(), 0);
  Tensor probe = Floats({1, 1, 1});
  EXPECT_EQ(ReadW(replaying.get(), probe), ReadW(plain.get(), probe));
  g_always_copy = false;
}

TEST_F(StepReplayTest, NewShapesRunThroughTheExecutorThenAreRecordedAgain) {
  const GraphDef def = TrainingGraph();
  std::unique_ptr<Session> s = NewRecSession(def, true);
  std::unique_ptr<Session> plain = NewRecSession(def, false);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(plain, nullptr);
  // Size(x) is a host value baked into each recording: a new shape needs a
  // new recording, and the value must follow.
  const std::vector<std::vector<float>> xs = {{1, 2}, {1, 2}, {1, 2}, {1, 2},      // n = 2
                                              {1, 2, 3}, {1, 2, 3}, {1, 2, 3},    // n = 3
                                              {3, 4}};                            // n = 2 again
  const std::vector<bool> want_replayed = {false, false, true, true, false, false, true, false};
  for (Session* session : {s.get(), plain.get()}) {
    ASSERT_TRUE(session->Run({{"w0", Floats({1, 1})}}, {}, {"init"}).ok());
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].size() != xs[i > 0 ? i - 1 : 0].size()) {
      // w follows x's shape.
      for (Session* session : {s.get(), plain.get()}) {
        ASSERT_TRUE(
            session->Run({{"w0", Floats(std::vector<float>(xs[i].size(), 1))}}, {}, {"init"}).ok());
      }
    }
    auto [loss, replayed] = Step(s.get(), Floats(xs[i]));
    auto [want, unused] = Step(plain.get(), Floats(xs[i]));
    EXPECT_EQ(loss, want) << "run " << i;
    EXPECT_EQ(replayed, want_replayed[i]) << "run " << i;
  }
}

TEST_F(StepReplayTest, AVariableGivenANewBufferStopsReplayUntilRecordedAgain) {
  const GraphDef def = TrainingGraph();
  std::unique_ptr<Session> s = NewRecSession(def, true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1, 1})}}, {}, {"init"}).ok());
  const Tensor x = Floats({1, 2});
  for (int i = 0; i < 4; ++i) Step(s.get(), x);
  EXPECT_TRUE(Step(s.get(), x).second);
  // Another signature gives w a new buffer (w = [10, 10]): the recording
  // would keep updating the old one.
  ASSERT_TRUE(s->Run({{"w0", Floats({10, 10})}}, {}, {"init"}).ok());
  auto [loss, replayed] = Step(s.get(), x);
  EXPECT_FALSE(replayed);
  EXPECT_EQ(loss, (10 * 1 + 10 * 2) * 2.0f);
  // Recorded again at the third run with the new buffer.
  EXPECT_FALSE(Step(s.get(), x).second);  // w = [9, 8], then [8, 6]
  auto [again, replayed_again] = Step(s.get(), x);
  EXPECT_TRUE(replayed_again);
  EXPECT_EQ(again, (8 * 1 + 6 * 2) * 2.0f);
}

// A process-wide setting read by kernels on the host (the GPU MatMul
// precision) changed: recordings made before are not replayed.
TEST_F(StepReplayTest, ANewCaptureEpochDropsTheRecording) {
  std::unique_ptr<Session> s = NewRecSession(TrainingGraph(), true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1})}}, {}, {"init"}).ok());
  for (int i = 0; i < 3; ++i) Step(s.get(), Floats({0}));
  EXPECT_TRUE(Step(s.get(), Floats({0})).second);
  AdvanceCaptureEpoch();
  EXPECT_FALSE(Step(s.get(), Floats({0})).second);
  EXPECT_FALSE(Step(s.get(), Floats({0})).second);
  EXPECT_TRUE(Step(s.get(), Floats({0})).second);  // recorded again
}

TEST_F(StepReplayTest, StatefulOpsAreNeverRecorded) {
  std::unique_ptr<Session> s = NewRecSession(TrainingGraph(/*peek=*/false, /*tick=*/true), true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1})}}, {}, {"init"}).ok());
  std::vector<float> losses;
  for (int i = 0; i < 5; ++i) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out =
        s->Run({{"x", Floats({1})}}, {"loss_ticked"}, {"train"}, {}, &md);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_FALSE(md.step_replayed);
    losses.push_back((*out)[0].scalar<float>());
  }
  // The counter moves every step: w = 1, 0, -1, ... times tick 1, 2, 3, ...
  EXPECT_EQ(losses, (std::vector<float>{1, 0, -3, -8, -15}));
}

TEST_F(StepReplayTest, AStepThatReadsDeviceValuesOnTheHostFallsBackToTheExecutor) {
  const GraphDef def = TrainingGraph(/*peek=*/true);
  std::unique_ptr<Session> s = NewRecSession(def, true);
  std::unique_ptr<Session> plain = NewRecSession(def, false);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(plain, nullptr);
  for (Session* session : {s.get(), plain.get()}) {
    ASSERT_TRUE(session->Run({{"w0", Floats({1, 2})}}, {}, {"init"}).ok());
  }
  for (int i = 0; i < 6; ++i) {
    const Tensor x = Floats({1.0f + i, 0.5f});
    auto [loss, replayed] = Step(s.get(), x);
    auto [want, unused] = Step(plain.get(), x);
    EXPECT_FALSE(replayed);
    // The failed recording ran nothing: each update happened once.
    EXPECT_EQ(loss, want) << "step " << i;
  }
}

TEST_F(StepReplayTest, TracedStepsRunThroughTheExecutor) {
  std::unique_ptr<Session> s = NewRecSession(TrainingGraph(), true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1})}}, {}, {"init"}).ok());
  for (int i = 0; i < 4; ++i) Step(s.get(), Floats({0}));
  EXPECT_TRUE(Step(s.get(), Floats({0})).second);
  RunOptions traced;
  traced.trace = true;
  RunMetadata md;
  ASSERT_TRUE(s->Run({{"x", Floats({0})}}, {"loss"}, {"train"}, traced, &md).ok());
  EXPECT_FALSE(md.step_replayed);
  EXPECT_FALSE(md.step_stats.nodes.empty());
}

// Steps of several signatures from several threads while one of them
// records: the recording waits for no step (it is skipped while others
// run) and no step's work lands in another's recording, so every thread's
// results match a session that never records.
TEST_F(StepReplayTest, ConcurrentStepsOfOtherSignaturesStayOutOfARecording) {
  const GraphDef def = TrainingGraph();
  std::unique_ptr<Session> s = NewRecSession(def, true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1, 2, 3})}}, {}, {"init"}).ok());
  constexpr int kThreads = 4, kRuns = 50;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0}, failed{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        // Fetching wx: reads w, updates nothing; its value follows w, which
        // only the training thread (t == 0) changes, by whole steps.
        const Tensor x = Floats({1, 1, 1});
        absl::StatusOr<std::vector<Tensor>> out =
            t == 0 ? s->Run({{"x", Floats({0, 0, 0})}}, {"loss"}, {"train"})
                   : s->Run({{"x", x}}, {"sum"}, {});
        if (!out.ok()) {
          ++failed;
          continue;
        }
        // w stays [1, 2, 3]: the training thread's x is all zeros.
        if ((*out)[0].scalar<float>() != (t == 0 ? 0.0f : 6.0f)) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  // And the training signature does get recorded and replayed afterwards.
  bool replayed = false;
  for (int i = 0; i < 4 && !replayed; ++i) replayed = Step(s.get(), Floats({0, 0, 0})).second;
  EXPECT_TRUE(replayed);
}

TEST(CaptureArenaTest, HoldsFreedBlocksUntilReleaseThenPassesFreesOn) {
  CpuAllocator base("base");
  auto arena = std::make_shared<CaptureArena>(&base);
  {
    absl::StatusOr<Tensor> a = Tensor::Allocate(arena.get(), DT_FLOAT, TensorShape({4}));
    absl::StatusOr<Tensor> b = Tensor::Allocate(arena.get(), DT_FLOAT, TensorShape({8}));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(base.GetStats().bytes_in_use, 4 * 4 + 8 * 4);
  }
  // Both freed, both held: a recording may still write them.
  EXPECT_EQ(arena->num_held(), 2u);
  EXPECT_EQ(base.GetStats().bytes_in_use, 4 * 4 + 8 * 4);
  absl::StatusOr<Tensor> late = Tensor::Allocate(arena.get(), DT_FLOAT, TensorShape({2}));
  ASSERT_TRUE(late.ok());
  arena->Release();
  EXPECT_EQ(base.GetStats().bytes_in_use, 2 * 4);
  *late = Tensor();  // after Release: straight back
  EXPECT_EQ(base.GetStats().bytes_in_use, 0);
  EXPECT_EQ(arena->num_held(), 0u);
}

}  // namespace
}  // namespace sluice
