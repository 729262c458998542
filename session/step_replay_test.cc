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

#include "absl/strings/match.h"
#include "graph/scope.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "runtime/backend.h"
#include "runtime/capture_arena.h"
#include "runtime/capture_epoch.h"
#include "session/direct_session.h"
#include "ops/collective/collective_ops.h"
#include "runtime/frame_ops.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "session/rec_session_testutil.h"

namespace sluice {
namespace {

using testing_rec::kRec;
using testing_rec::RecStats;

class StepReplayTest : public RecSessionTest {
 protected:
  void SetUp() override {
    RecSessionTest::SetUp();
    ASSERT_TRUE(RegisterCollectiveOps(&ops_).ok());
    RegisterCollectiveKernelsOn(&kernels_, kRec, {DT_FLOAT});
    Finish();
  }

  // w (a variable), x (fed): loss = Sum(w * x) * Size(x), fetched;
  // train: w -= x; init: w = w0 (fed). With `tick`, loss_ticked = loss *
  // (Tick or, with `device_tick`, DeviceTick); with `all_reduce`, w * x
  // goes through a CollectiveReduce of one member.
  GraphDef TrainingGraph(bool peek = false, bool tick = false, bool device_tick = false,
                         bool all_reduce = false) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    Output w = s.WithOpName("w").Op("Var").Finalize1();
    Output x = s.WithOpName("x").Op("Input").Finalize1();
    if (peek) x = s.WithOpName("peek").Op("Peek").Input(x).Finalize1();
    Output wx = s.WithOpName("wx").Op("Mul").Input(w).Input(x).Finalize1();
    if (all_reduce) {
      ops::CollectiveSpec spec{.group_key = 1,
                               .instance_key = 1,
                               .group_devices = {"/job:localhost/replica:0/task:0/device:REC:0"}};
      wx = ops::AllReduce(s.WithOpName("reduced"), wx, ReduceOp::kSum, spec);
    }
    Output sum = s.WithOpName("sum").Op("Sum").Input(wx).Finalize1();
    Output size = s.WithOpName("size").Op("Size").Input(x).Finalize1();
    Output loss = s.WithOpName("loss").Op("Scale").Input(sum).Input(size).Finalize1();
    if (tick) {
      Output t = s.WithOpName("tick").Op(device_tick ? "DeviceTick" : "Tick").Finalize1();
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

  // One training step: the loss, and whether it was a replay.
  static std::pair<float, bool> Step(Session* s, const Tensor& x) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out = s->Run({{"x", x}}, {"loss"}, {"train"}, {}, &md);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {0, false};
    return {(*out)[0].scalar<float>(), md.step_replayed};
  }

  // n_times_z = Sum(z) * n, n = Ones(ToInt(count)) summed: "count" is read
  // in host memory (ToInt's input; Ones reads its count there too), z on the
  // device.
  GraphDef CountGraph() {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    Output count = s.WithOpName("count").Op("Input").Finalize1();
    Output z = s.WithOpName("z").Op("Input").Finalize1();
    Output ones = s.WithOpName("ones").Op("Ones")
                      .Input(s.WithOpName("n").Op("ToInt").Input(count).Finalize1())
                      .Finalize1();
    s.WithOpName("n_times_z").Op("Scale")
        .Input(s.WithOpName("sum_z").Op("Sum").Input(z).Finalize1())
        .Input(s.WithOpName("n_float").Op("Sum").Input(ones).Finalize1())
        .Finalize();
    EXPECT_TRUE(s.ok()) << s.status();
    GraphDef def;
    g.ToGraphDef(&def);
    return def;
  }

  // Runs CountGraph with each of `counts` (and z = {i, 2} at step i) on a
  // recording and a plain session, checks every value, and returns the
  // number of replays.
  int RunCounts(const std::vector<float>& counts) {
    const GraphDef def = CountGraph();
    std::unique_ptr<Session> replaying = NewRecSession(def, true);
    std::unique_ptr<Session> plain = NewRecSession(def, false);
    if (replaying == nullptr || plain == nullptr) return -1;
    int replays = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      // z changes at every step and is not keyed: replays read its new value.
      const std::vector<std::pair<std::string, Tensor>> feeds = {
          {"count", Floats({counts[i]})},
          {"z", Floats({1.0f * i, 2.0f})}};
      RunMetadata md;
      absl::StatusOr<std::vector<Tensor>> got = replaying->Run(feeds, {"n_times_z"}, {}, {}, &md);
      absl::StatusOr<std::vector<Tensor>> want = plain->Run(feeds, {"n_times_z"}, {});
      EXPECT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
      if (!got.ok() || !want.ok()) return -1;
      EXPECT_EQ((*got)[0].scalar<float>(), counts[i] * (i + 2.0f)) << "step " << i;
      EXPECT_EQ((*got)[0].scalar<float>(), (*want)[0].scalar<float>()) << "step " << i;
      replays += md.step_replayed ? 1 : 0;
    }
    return replays;
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
};

TEST_F(StepReplayTest, ReplaysMatchTheExecutorStepByStep) {
  auto [replaying, plain] = NewSessionPair(TrainingGraph(), {1, 2, 3});
  ASSERT_NE(replaying, nullptr);
  int mul_computes_while_replaying = 0;
  RecStats().copies_on_write = 0;
  for (int step = 0; step < 8; ++step) {
    // New values every step, same shape.
    Tensor x = Floats({0.5f + step, -1.0f * step, 0.25f});
    const int before = RecStats().mul_computes.load();
    auto [loss, replayed] = Step(replaying.get(), x);
    if (step > 2) mul_computes_while_replaying += RecStats().mul_computes.load() - before;
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
  EXPECT_EQ(RecStats().copies_on_write.load(), 0);
  Tensor probe = Floats({1, 1, 1});
  EXPECT_EQ(ReadW(replaying.get(), probe), ReadW(plain.get(), probe));
}

TEST_F(StepReplayTest, CopyOnWriteUpdatesAreRecordedWithACopyBack) {
  // As when a reader not ordered before the update still holds w's value:
  // every update copies.
  RecStats().always_copy = true;
  auto [replaying, plain] = NewSessionPair(TrainingGraph(), {1, 2, 3});
  ASSERT_NE(replaying, nullptr);
  RecStats().copies_on_write = 0;
  for (int step = 0; step < 6; ++step) {
    Tensor x = Floats({1.0f + step, 2, -0.5f * step});
    auto [loss, replayed] = Step(replaying.get(), x);
    auto [want, unused] = Step(plain.get(), x);
    EXPECT_EQ(loss, want) << "step " << step;
    EXPECT_EQ(replayed, step >= 2) << "step " << step;
  }
  EXPECT_GT(RecStats().copies_on_write.load(), 0);
  Tensor probe = Floats({1, 1, 1});
  EXPECT_EQ(ReadW(replaying.get(), probe), ReadW(plain.get(), probe));
  RecStats().always_copy = false;
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

// A step that fetches a variable's value from before its update (read,
// then updated: the update copies on write, and the recording copies it
// back into the buffer the fetch points at) gets that value from its
// replays too, not the updated one.
TEST_F(StepReplayTest, AFetchedReadOfAnUpdatedVariableIsTheValueBeforeTheUpdate) {
  Graph g(&ops_);
  Scope sc = Scope::NewRootScope(&g);
  Output w = sc.WithOpName("w").Op("Var").Finalize1();
  Output x = sc.WithOpName("x").Op("Input").Finalize1();
  Output read = sc.WithOpName("read").Op("Identity").Input(w).Finalize1();
  sc.WithOpName("train").Op("Sub").Input(w).Input(x).ControlInput(read.node).Finalize();
  Output w0 = sc.WithOpName("w0").Op("Input").Finalize1();
  sc.WithOpName("init").Op("Assign").Input(w).Input(w0).Finalize();
  ASSERT_TRUE(sc.ok()) << sc.status();
  GraphDef def;
  g.ToGraphDef(&def);
  std::unique_ptr<Session> s = NewRecSession(def, true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1, 2})}}, {}, {"init"}).ok());
  std::vector<float> want = {1, 2};
  for (int step = 0; step < 6; ++step) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out =
        s->Run({{"x", Floats({1.0f, 0.5f})}}, {"read"}, {"train"}, {}, &md);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(md.step_replayed, step >= 2) << "step " << step;
    const Tensor& got = (*out)[0];
    ASSERT_EQ(got.NumElements(), 2);
    EXPECT_EQ(std::vector<float>(got.data<float>(), got.data<float>() + 2), want)
        << "step " << step;
    want = {want[0] - 1.0f, want[1] - 0.5f};
  }
}

// A replay that fails fails its step, and is never tried again: the
// signature's later steps run through the executor.
TEST_F(StepReplayTest, AFailedReplayStopsRecording) {
  auto [s, plain] = NewSessionPair(TrainingGraph(), {1, 2});
  ASSERT_NE(s, nullptr);
  const Tensor x = Floats({0.5f, 0.25f});
  for (int i = 0; i < 3; ++i) {
    auto [loss, replayed] = Step(s.get(), x);
    EXPECT_EQ(loss, Step(plain.get(), x).first) << "step " << i;
    EXPECT_EQ(replayed, i == 2) << "step " << i;
  }
  RecStats().fail_replays = true;
  absl::StatusOr<std::vector<Tensor>> failed = s->Run({{"x", x}}, {"loss"}, {"train"});
  RecStats().fail_replays = false;
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal) << failed.status();
  EXPECT_TRUE(absl::StrContains(failed.status().message(), "replay failed")) << failed.status();
  // The fake device's failed replay ran none of the step.
  for (int i = 0; i < 4; ++i) {
    auto [loss, replayed] = Step(s.get(), x);
    EXPECT_EQ(loss, Step(plain.get(), x).first) << "step " << i;
    EXPECT_FALSE(replayed) << "step " << i;
  }
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

// A stateful kernel whose state advances in device memory (as a GPU random
// op's Philox counter) replays right: the step is recorded, and every
// replay moves the counter on, as the executor would.
TEST_F(StepReplayTest, StatefulKernelsThatReplayRightAreRecorded) {
  auto [s, plain] =
      NewSessionPair(TrainingGraph(/*peek=*/false, /*tick=*/true, /*device_tick=*/true), {1});
  ASSERT_NE(s, nullptr);
  std::vector<float> losses;
  int replays = 0;
  for (int i = 0; i < 6; ++i) {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out =
        s->Run({{"x", Floats({1})}}, {"loss_ticked"}, {"train"}, {}, &md);
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Tensor>> want =
        plain->Run({{"x", Floats({1})}}, {"loss_ticked"}, {"train"});
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ((*out)[0].scalar<float>(), (*want)[0].scalar<float>()) << "step " << i;
    replays += md.step_replayed ? 1 : 0;
    losses.push_back((*out)[0].scalar<float>());
  }
  EXPECT_EQ(replays, 4);
  // w = 1, 0, -1, ... times the device counter 1, 2, 3, ...
  EXPECT_EQ(losses, (std::vector<float>{1, 0, -3, -8, -15, -24}));
}

// Mirrored training on one device: its all-reduces have one member, which
// only hands its input on, so the step is recorded and replayed.
TEST_F(StepReplayTest, StepsWithACollectiveOfOneMemberAreRecorded) {
  auto [s, plain] = NewSessionPair(
      TrainingGraph(/*peek=*/false, /*tick=*/false, /*device_tick=*/false, /*all_reduce=*/true),
      {1, 2});
  ASSERT_NE(s, nullptr);
  int replays = 0;
  for (int i = 0; i < 6; ++i) {
    const Tensor x = Floats({0.5f * i, 1.0f});
    auto [loss, replayed] = Step(s.get(), x);
    auto [want, unused] = Step(plain.get(), x);
    EXPECT_EQ(loss, want) << "step " << i;
    replays += replayed ? 1 : 0;
  }
  EXPECT_EQ(replays, 4);
}

TEST_F(StepReplayTest, AStepThatReadsDeviceValuesOnTheHostFallsBackToTheExecutor) {
  auto [s, plain] = NewSessionPair(TrainingGraph(/*peek=*/true), {1, 2});
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 6; ++i) {
    const Tensor x = Floats({1.0f + i, 0.5f});
    auto [loss, replayed] = Step(s.get(), x);
    auto [want, unused] = Step(plain.get(), x);
    EXPECT_FALSE(replayed);
    // The failed recording ran nothing: each update happened once.
    EXPECT_EQ(loss, want) << "step " << i;
  }
}

// A feed read in host memory without deciding anything (a GPU's int32
// shape arithmetic: a fed count or batch size into Fill's dims) is recorded
// per value: what the host computed from it is frozen into a recording.
// Before, it was uploaded to the device for the recording, the host's read
// then failed the recording, and no step of the session was recorded again.
TEST_F(StepReplayTest, AFeedReadOnTheHostIsRecordedPerValue) {
  // Each count: two runs through the executor, then recorded; 3 is still
  // recorded when it comes back.
  EXPECT_EQ(RunCounts({3, 3, 3, 3, 5, 5, 5, 5, 3, 3}), 2 + 2 + 2);
}

// Keyed values that never come again (int32 labels read on the host) are
// never recorded; after kMaxRunsWithoutRepeat such runs in a row recording
// stops for good (so that runs no longer queue behind one another), not
// one run sooner.
TEST_F(StepReplayTest, KeyedValuesThatNeverRepeatStopRecording) {
  const int k = StepReplay::kMaxRunsWithoutRepeat;
  std::vector<float> counts;
  for (int i = 0; i < k - 2; ++i) counts.push_back(100.0f + i);
  for (int i = 0; i < 4; ++i) counts.push_back(3);
  // k - 1 runs without a repeat, then 3 repeats: recorded at its third run
  // (which replays the recording) and replayed at its fourth.
  EXPECT_EQ(RunCounts(counts), 2);
  counts.insert(counts.begin(), 99.0f);
  // k runs without a repeat: nothing is recorded from then on.
  EXPECT_EQ(RunCounts(counts), 0);
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
