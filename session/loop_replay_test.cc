// Loops recorded whole (runtime/step_replay.h, runtime/step_decisions.h) on
// the fake recording device "REC" (runtime/recording_device_testutil.h): a
// step whose trip counts follow from its feeds' shapes is recorded with
// every iteration's kernels, its TensorArray and its stack, and each replay
// must equal a session that never records; a loop deciding on a fed value
// is recorded for each value that repeats; one deciding on a variable's
// value is never recorded.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/control_flow/control_flow_builders.h"
#include "ops/control_flow/control_flow_ops.h"
#include "ops/control_flow/stack_ops.h"
#include "ops/control_flow/tensor_array_ops.h"
#include "ops/math/check_ops.h"
#include "runtime/backend.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "runtime/step_decisions.h"
#include "runtime/step_replay.h"
#include "session/rec_session_testutil.h"

namespace sluice {
namespace {

using testing_rec::kRec;
using testing_rec::RecordingDevice;

// What decides the loops' trip count.
enum class Bound {
  kShape,     // the element count of x (Size): fixed by the feeds' shapes
  kFedValue,  // x's first value
  kVariable,  // the variable w's first value
};

class LoopReplayTest : public RecSessionTest {
 protected:
  void SetUp() override {
    RecSessionTest::SetUp();
    ASSERT_TRUE(RegisterControlFlowOps(&ops_).ok());
    ASSERT_TRUE(RegisterStackOps(&ops_).ok());
    ASSERT_TRUE(RegisterTensorArrayOps(&ops_).ok());
    RegisterControlFlowDeviceKernels(&kernels_, kRec, {DT_FLOAT});
    RegisterStackDeviceKernels(&kernels_, kRec, {DT_FLOAT});
    RegisterTensorArrayDeviceKernels(&kernels_, kRec, {DT_FLOAT}, &testing_rec::kRecArrayOps);
    ASSERT_TRUE(RegisterCheckOps(&ops_).ok());
    RegisterCheckKernels(&kernels_);
    kernels_.RegisterHostKernels("Assert", kRec, [](const KernelDef&) { return true; });
    Finish();
  }

  // x, y fed (float [n]); n = the bound. The forward loop runs n times:
  // x <- x * y, each value written into a TensorArray and pushed onto a
  // stack; the backward loop runs n times too: p <- p * pop, from p = the
  // forward loop's x. Fetches "x_out" (x * y^n), "all" (the array's
  // elements concatenated) and "p_out" (x_out times every pushed value).
  // The feeds are `feed` ops: "Input" for a session, which makes them
  // _Args; "_Arg" for a graph checked as an executor would get it.
  // With `checked`, x_out waits for an Assert that y's first value is at
  // least 1 (y decides nothing else). With `trains`, "train" subtracts y
  // from the variable w.
  void BuildLoops(Graph* g, Bound bound, const std::string& feed = "Input",
                  bool checked = false, bool trains = false) {
    Scope s = Scope::NewRootScope(g);
    auto fed = [&](const char* name, int index) {
      Scope f = s.WithOpName(name);
      if (feed == "Input") return f.Op("Input").Finalize1();
      return f.Op(feed).Attr("T", DT_FLOAT).Attr("index", int64_t{index}).Finalize1();
    };
    Output w = s.WithOpName("w").Op("Var").Finalize1();
    Output x = fed("x", 0);
    Output y = fed("y", 1);
    Output n;
    switch (bound) {
      case Bound::kShape:
        n = s.WithOpName("n").Op("ToInt").Input(s.Op("Size").Input(x).Finalize1()).Finalize1();
        break;
      case Bound::kFedValue:
        n = s.WithOpName("n").Op("ToInt").Input(x).Finalize1();
        break;
      case Bound::kVariable:
        n = s.WithOpName("n").Op("ToInt").Input(w).Finalize1();
        break;
    }
    Output zero = s.WithOpName("zero").Op("IntConst").Attr("value", int64_t{0}).Finalize1();
    Output unbounded = s.WithOpName("unbounded").Op("IntConst").Attr("value", int64_t{-1}).Finalize1();
    ops::TensorArrayOutputs ta = ops::TensorArrayV3(s.WithOpName("ta"), n, DT_FLOAT);
    Output stack = s.WithOpName("stack")
                       .Op("StackV2")
                       .Input(unbounded)
                       .Attr("elem_type", DT_FLOAT)
                       .Attr("stack_name", std::string("values"))
                       .Finalize1();
    auto less_than_n = [n](const Scope& c, const Output& i) {
      return c.Op("IntLess").Input(i).Input(n).Finalize1();
    };
    auto plus_one = [](const Scope& b, const Output& i) {
      Output one = b.Op("IntConst").Attr("value", int64_t{1}).Finalize1();
      return b.Op("IntAdd").Input(i).Input(one).Finalize1();
    };
    absl::StatusOr<std::vector<Output>> forward = ops::WhileLoop(
        s, {zero, x, ta.flow},
        [&](const Scope& c, absl::Span<const Output> v) { return less_than_n(c, v[0]); },
        [&](const Scope& b, absl::Span<const Output> v) {
          Output next = b.Op("Mul").Input(v[1]).Input(y).Finalize1();
          Output flow = ops::TensorArrayWriteV3(b, ta.handle, v[0], next, v[2]);
          Output pushed = b.Op("StackPushV2").Input(stack).Input(next).Finalize1();
          return std::vector<Output>{plus_one(b, v[0]), pushed, flow};
        },
        {.name = "forward"});
    ASSERT_TRUE(forward.ok()) << forward.status();
    Scope out = s;
    if (checked) {
      Output y0 = s.WithOpName("y0").Op("ToInt").Input(y).Finalize1();
      Node* positive = ops::Assert(s.WithOpName("positive"),
                                   s.Op("IntLess").Input(zero).Input(y0).Finalize1(), {y0});
      out = s.WithControlDependencies(absl::Span<Node* const>(&positive, 1));
    }
    Output x_out = out.WithOpName("x_out").Op("Identity").Input((*forward)[1]).Finalize1();
    ops::TensorArrayConcatV3(s.WithOpName("all"), ta.handle, (*forward)[2], DT_FLOAT);
    // p first: the backward loop's iterations wait for the forward loop.
    absl::StatusOr<std::vector<Output>> backward = ops::WhileLoop(
        s, {x_out, zero},
        [&](const Scope& c, absl::Span<const Output> v) { return less_than_n(c, v[1]); },
        [&](const Scope& b, absl::Span<const Output> v) {
          Output top = b.Op("StackPopV2").Input(stack).Attr("elem_type", DT_FLOAT).Finalize1();
          return std::vector<Output>{b.Op("Mul").Input(v[0]).Input(top).Finalize1(),
                                     plus_one(b, v[1])};
        },
        {.name = "backward"});
    ASSERT_TRUE(backward.ok()) << backward.status();
    s.WithOpName("p_out").Op("Identity").Input((*backward)[0]).Finalize();
    Output w0 = s.WithOpName("w0").Op("Input").Finalize1();
    s.WithOpName("init").Op("Assign").Input(w).Input(w0).Finalize();
    if (trains) {
      s.WithOpName("train").Op("Sub").Input(w).Input(y).Finalize();
      s.WithOpName("w_value").Op("Identity").Input(w).Finalize();
    }
    ASSERT_TRUE(s.ok()) << s.status();
  }

  std::unique_ptr<Session> NewRecSession(Bound bound, bool capture, bool checked = false,
                                         bool trains = false) {
    Graph g(&ops_);
    BuildLoops(&g, bound, "Input", checked, trains);
    GraphDef def;
    g.ToGraphDef(&def);
    return RecSessionTest::NewRecSession(def, capture);
  }

  static std::vector<float> Values(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
  }
};

TEST_F(LoopReplayTest, LoopsFixedByTheFeedsShapesAreRecordedWhole) {
  std::unique_ptr<Session> replaying = NewRecSession(Bound::kShape, true);
  std::unique_ptr<Session> plain = NewRecSession(Bound::kShape, false);
  ASSERT_NE(replaying, nullptr);
  ASSERT_NE(plain, nullptr);
  for (int step = 0; step < 9; ++step) {
    // New values every step; three elements (three trips), then four.
    const float a = 1.0f + 0.125f * step;
    const Tensor x = step < 5 ? Floats({a, -a, 0.5f}) : Floats({a, 2.0f, -0.5f, a});
    const Tensor y = step < 5 ? Floats({0.5f, a, 2.0f}) : Floats({a, 0.5f, 1.5f, -1.0f});
    const Fetched got = Step(replaying.get(), x, y);
    const Fetched want = Step(plain.get(), x, y);
    EXPECT_FALSE(want.replayed);
    EXPECT_EQ(got.values, want.values) << "step " << step;
    // Two runs of a shape through the executor, then recorded (and
    // replayed at once); a new shape starts over.
    EXPECT_EQ(got.replayed, (step >= 2 && step < 5) || step >= 7) << "step " << step;
    // x * y^n, n = the element count.
    ASSERT_EQ(got.values.size(), 3u);
    const int64_t n = x.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      float want_x = x.data<float>()[i];
      for (int64_t k = 0; k < n; ++k) want_x *= y.data<float>()[i];
      EXPECT_FLOAT_EQ(got.values[0][i], want_x) << "step " << step << ", element " << i;
    }
    // Every iteration's value, in order, then x_out times all of them.
    ASSERT_EQ(got.values[1].size(), static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i) {
      float p = got.values[0][i];
      for (int64_t k = 0; k < n; ++k) p *= got.values[1][k * n + i];
      EXPECT_FLOAT_EQ(got.values[2][i], p) << "step " << step << ", element " << i;
    }
  }
}

TEST_F(LoopReplayTest, ALoopDecidingOnAFedValueIsRecordedForEachValue) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kFedValue, true);
  std::unique_ptr<Session> plain = NewRecSession(Bound::kFedValue, false);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(plain, nullptr);
  // x (whose first value is the trip count) is fed 2 four times, 3 four
  // times, 2 twice, then 4 and 5 in turn; y is new at every step.
  const std::vector<int> trips = {2, 2, 2, 2, 3, 3, 3, 3, 2, 2, 4, 5, 4, 5, 4, 5, 4, 5};
  // Each value's third run records it (and replays at once); the recordings
  // of 2 and 3 are kept (StepReplayOptions::max_recordings) while 4 and 5
  // come in.
  const std::vector<bool> want_replayed = {false, false, true,  true,  false, false,
                                           true,  true,  true,  true,  false, false,
                                           false, false, true,  true,  true,  true};
  const int recordings_before = testing_rec::RecStats().recordings;
  for (int step = 0; step < static_cast<int>(trips.size()); ++step) {
    const float b = 1.0f + 0.125f * step;
    const Tensor x = Floats({static_cast<float>(trips[step]), 1.5f, -1.0f});
    const Tensor y = Floats({b, 2.0f, -b});
    const Fetched got = Step(s.get(), x, y);
    const Fetched want = Step(plain.get(), x, y);
    EXPECT_EQ(got.values, want.values) << "step " << step;
    EXPECT_EQ(got.replayed, want_replayed[step]) << "step " << step;
    ASSERT_EQ(got.values.size(), 3u);
    EXPECT_EQ(got.values[1].size(), 3u * trips[step]) << "step " << step;  // n elements
    float want_x = x.data<float>()[1];
    for (int k = 0; k < trips[step]; ++k) want_x *= 2.0f;
    EXPECT_FLOAT_EQ(got.values[0][1], want_x) << "step " << step;
  }
  EXPECT_EQ(testing_rec::RecStats().recordings - recordings_before, 4);  // 2, 3, 4, 5
}

// An Assert decides too (whether the step fails): it does not keep the
// step from being recorded, the feed its condition reads (y, which decides
// nothing else) keys the recording, and so a value that fails it is not
// replayed.
TEST_F(LoopReplayTest, AnAssertDecidesLikeALoop) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kShape, true, /*checked=*/true);
  ASSERT_NE(s, nullptr);
  const Tensor x = Floats({2.0f, 1.5f, -1.0f});
  const Tensor passes = Floats({1.5f, 2.0f, 0.5f});
  for (int step = 0; step < 4; ++step) {
    const Fetched got = Step(s.get(), x, passes);
    EXPECT_EQ(got.replayed, step >= 2) << "step " << step;
    ASSERT_EQ(got.values.size(), 3u);
    EXPECT_FLOAT_EQ(got.values[0][1], 1.5f * 8.0f) << "step " << step;  // three trips
  }
  for (int step = 0; step < 3; ++step) {
    // The same shapes and fetches as the recorded steps.
    absl::StatusOr<std::vector<Tensor>> failed = s->Run(
        {{"x", x}, {"y", Floats({0.5f, 2.0f, 0.5f})}}, {"x_out", "all", "p_out"}, {});
    EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument) << failed.status();
    EXPECT_TRUE(absl::StrContains(failed.status().message(), "assertion failed: [0]"))
        << failed.status();
  }
  const Fetched again = Step(s.get(), x, passes);
  EXPECT_TRUE(again.replayed);
  ASSERT_EQ(again.values.size(), 3u);
  EXPECT_FLOAT_EQ(again.values[0][1], 1.5f * 8.0f);
}

// A step that updates a variable, recorded for two values in turn: with
// the update in place, both recordings update the variable's one buffer and
// both stay replayable. With every update copying on write, each run
// through the executor gives the variable a new buffer, so a recording is
// dropped once another value has run through the executor; the values
// still match a session that never records.
TEST_F(LoopReplayTest, RecordingsOfTwoValuesUpdateTheSameVariable) {
  for (const bool copy_on_write : {false, true}) {
    SCOPED_TRACE(copy_on_write ? "updates copy on write" : "updates in place");
    testing_rec::RecStats().always_copy = copy_on_write;
    std::unique_ptr<Session> s = NewRecSession(Bound::kFedValue, true, false, /*trains=*/true);
    std::unique_ptr<Session> plain =
        NewRecSession(Bound::kFedValue, false, false, /*trains=*/true);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(plain, nullptr);
    for (Session* session : {s.get(), plain.get()}) {
      ASSERT_TRUE(session->Run({{"w0", Floats({0, 0, 0})}}, {}, {"init"}).ok());
    }
    const std::vector<int> trips = {2, 2, 2, 3, 3, 3, 2, 3, 2, 3};
    const std::vector<bool> want_replayed =
        copy_on_write
            ? std::vector<bool>{false, false, true, false, false, true, false, false, false, false}
            : std::vector<bool>{false, false, true, false, false, true, true, true, true, true};
    for (size_t step = 0; step < trips.size(); ++step) {
      const Tensor x = Floats({static_cast<float>(trips[step]), 1.5f, -1.0f});
      const Tensor y = Floats({1.0f + step, 0.5f, -0.25f});
      std::vector<std::vector<float>> got, want;
      for (auto [session, out] : {std::pair{s.get(), &got}, std::pair{plain.get(), &want}}) {
        RunMetadata md;
        absl::StatusOr<std::vector<Tensor>> fetched =
            session->Run({{"x", x}, {"y", y}}, {"x_out", "all", "p_out"}, {"train"}, {}, &md);
        ASSERT_TRUE(fetched.ok()) << fetched.status();
        for (const Tensor& t : *fetched) out->push_back(Values(t));
        if (session == s.get()) EXPECT_EQ(md.step_replayed, want_replayed[step]) << "step " << step;
      }
      EXPECT_EQ(got, want) << "step " << step;
    }
    absl::StatusOr<std::vector<Tensor>> w = s->Run({}, {"w_value"}, {});
    absl::StatusOr<std::vector<Tensor>> w_plain = plain->Run({}, {"w_value"}, {});
    ASSERT_TRUE(w.ok() && w_plain.ok());
    EXPECT_EQ(Values((*w)[0]), Values((*w_plain)[0]));
    EXPECT_EQ(Values((*w)[0])[0], -55.0f);  // minus 1 + 2 + ... + 10
  }
  testing_rec::RecStats().always_copy = false;
}

// Recordings hold device memory. Out of it while recording, with other
// recordings kept, the step drops them and is recorded again, instead of
// giving up recording.
TEST_F(LoopReplayTest, OutOfMemoryWhileRecordingDropsTheOtherRecordings) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kFedValue, true);
  std::unique_ptr<Session> plain = NewRecSession(Bound::kFedValue, false);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(plain, nullptr);
  testing_rec::RecCounters& stats = testing_rec::RecStats();
  const int64_t before = stats.capture_bytes;
  // Two signatures of the same size: three trips each.
  const Tensor a = Floats({3.0f, 1.5f, -1.0f});
  const Tensor b = Floats({3.0f, 2.5f, -1.0f});
  const Tensor y = Floats({1.0f, 2.0f, 0.5f});
  auto expect_step = [&](const Tensor& x, bool replayed, const char* what) {
    const Fetched got = Step(s.get(), x, y);
    EXPECT_EQ(got.values, Step(plain.get(), x, y).values) << what;
    EXPECT_EQ(got.replayed, replayed) << what;
  };
  expect_step(a, false, "a, first run");
  expect_step(a, false, "a, second run");
  expect_step(a, true, "a, recorded");
  const int64_t one = stats.capture_bytes - before;
  ASSERT_GT(one, 0);
  stats.capture_bytes_limit = before + one * 3 / 2;  // room for one recording
  expect_step(b, false, "b, first run");
  expect_step(b, false, "b, second run");
  expect_step(b, true, "b, recorded after dropping a's recording");
  EXPECT_LE(stats.capture_bytes - before, one * 3 / 2);
  expect_step(b, true, "b, replayed");
  // a's recording was dropped: it runs twice as often before it is
  // recorded again.
  for (int i = 0; i < 4; ++i) expect_step(a, false, "a, through the executor");
  expect_step(a, true, "a, recorded again after dropping b's");
  expect_step(a, true, "a, replayed");
  stats.capture_bytes_limit = 0;
}

// Five signatures in turn, one more than the recordings kept: each
// recording made drops another, whose signature then runs more often
// through the executor before it is recorded again, so the cycle settles
// into mostly replays instead of recording at every step (which it would,
// 50 times over these 60 steps, if a dropped signature were recorded again
// at once).
TEST_F(LoopReplayTest, ACycleOfMoreSignaturesThanRecordingsSettles) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kFedValue, true);
  std::unique_ptr<Session> plain = NewRecSession(Bound::kFedValue, false);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(plain, nullptr);
  const int recordings_before = testing_rec::RecStats().recordings;
  int replays = 0;
  for (int round = 0; round < 12; ++round) {
    for (int trips = 2; trips <= 6; ++trips) {
      const Tensor x = Floats({static_cast<float>(trips), 1.5f, -1.0f});
      const Tensor y = Floats({1.0f + 0.125f * round, 1.0f, 0.5f});
      const Fetched got = Step(s.get(), x, y);
      EXPECT_EQ(got.values, Step(plain.get(), x, y).values) << "round " << round;
      replays += got.replayed ? 1 : 0;
    }
  }
  const int recordings = testing_rec::RecStats().recordings - recordings_before;
  EXPECT_LE(recordings, 10);
  EXPECT_GE(replays, 35);
  std::printf("5 signatures in turn over 60 steps: %d recordings, %d replays\n", recordings,
              replays);
}

TEST_F(LoopReplayTest, ADecidingFeedTooLargeToKeyOnIsNeverRecorded) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kFedValue, true);
  ASSERT_NE(s, nullptr);
  std::vector<float> x(StepReplay::kMaxDecidingFeedBytes / sizeof(float) + 1, 0.5f);
  x[0] = 2.0f;  // the trip count
  for (int step = 0; step < 5; ++step) {
    const Fetched got = Step(s.get(), Floats(x), Floats(std::vector<float>(x.size(), 3.0f)));
    EXPECT_FALSE(got.replayed) << "step " << step;
    ASSERT_EQ(got.values.size(), 3u);
    EXPECT_FLOAT_EQ(got.values[0][1], 0.5f * 9.0f) << "step " << step;
  }
}

TEST_F(LoopReplayTest, ALoopDecidingOnAVariableIsNeverRecorded) {
  std::unique_ptr<Session> s = NewRecSession(Bound::kVariable, true);
  ASSERT_NE(s, nullptr);
  for (int step = 0; step < 6; ++step) {
    // The variable (the trip count) goes 1, 2, 3, ... between steps.
    ASSERT_TRUE(s->Run({{"w0", Floats({1.0f + step})}}, {}, {"init"}).ok());
    const Fetched got = Step(s.get(), Floats({1, 1}), Floats({2, 3}));
    EXPECT_FALSE(got.replayed) << "step " << step;
    ASSERT_EQ(got.values.size(), 3u);
    EXPECT_EQ(got.values[0], (std::vector<float>{std::pow(2.0f, 1.0f + step),
                                                 std::pow(3.0f, 1.0f + step)}))
        << "step " << step;
  }
}

// What DecidingFeeds says of the graphs above as an executor gets them
// (feeds as _Args).
TEST_F(LoopReplayTest, DecidingFeedsAreThoseWhoseValuesReachADecision) {
  Graph by_shape(&ops_);
  BuildLoops(&by_shape, Bound::kShape, "_Arg");
  absl::StatusOr<std::vector<int>> feeds = DecidingFeeds(by_shape);
  ASSERT_TRUE(feeds.ok()) << feeds.status();
  EXPECT_TRUE(feeds->empty());

  Graph by_feed(&ops_);
  BuildLoops(&by_feed, Bound::kFedValue, "_Arg");
  feeds = DecidingFeeds(by_feed);
  ASSERT_TRUE(feeds.ok()) << feeds.status();
  EXPECT_EQ(*feeds, std::vector<int>{0});  // x, not y

  Graph by_variable(&ops_);
  BuildLoops(&by_variable, Bound::kVariable, "_Arg");
  absl::Status s = DecidingFeeds(by_variable).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "decides on a variable's value, 'w' (Var)")) << s;

  // A TensorArray that may grow: its size is not fixed.
  Graph dynamic(&ops_);
  Scope d = Scope::NewRootScope(&dynamic);
  Output size = d.Op("IntConst").Attr("value", int64_t{2}).Finalize1();
  ops::TensorArrayOutputs ta =
      ops::TensorArrayV3(d.WithOpName("grows"), size, DT_FLOAT, {.dynamic_size = true});
  Output bound = ops::TensorArraySizeV3(d, ta.handle, ta.flow);
  Output zero = d.Op("IntConst").Attr("value", int64_t{0}).Finalize1();
  ops::LoopCond(d.WithOpName("cond"), d.Op("IntLess").Input(zero).Input(bound).Finalize1());
  ASSERT_TRUE(d.ok()) << d.status();
  s = DecidingFeeds(dynamic).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "a TensorArray of dynamic size, 'grows'")) << s;
}

// Host reads add the feeds they derive from, stop at what may change
// without failing, and leave out fetches and handles.
TEST_F(LoopReplayTest, FeedsReadOnTheHostAreKeyedToo) {
  Graph g(&ops_);
  Scope s = Scope::NewRootScope(&g);
  auto fed = [&](const char* name, int index) {
    return s.WithOpName(name).Op("_Arg").Attr("T", DT_FLOAT).Attr("index", int64_t{index})
        .Finalize1();
  };
  Output a = fed("a", 0), b = fed("b", 1), c = fed("c", 2), d = fed("d", 3);
  Output w = s.WithOpName("w").Op("Var").Finalize1();
  s.WithOpName("read_a").Op("ToInt").Input(a).Finalize();
  s.WithOpName("read_w").Op("ToInt").Input(w).Finalize();
  s.WithOpName("on_device").Op("Mul").Input(b).Input(c).Finalize();
  s.WithOpName("fetch_d").Op("_Retval").Attr("T", DT_FLOAT).Attr("index", int64_t{0})
      .Input(d).Finalize();
  ASSERT_TRUE(s.ok()) << s.status();
  // ToInt takes its input in host memory (as on REC); so does the fetch,
  // which is left out all the same (it reads no value).
  auto reads_on_host = [](const Node& n, int) {
    return n.op() == "ToInt" || n.op() == "_Retval";
  };
  absl::StatusOr<std::vector<int>> feeds = DecidingFeeds(g, reads_on_host);
  ASSERT_TRUE(feeds.ok()) << feeds.status();  // w's read stops the walk, fails nothing
  EXPECT_EQ(*feeds, std::vector<int>{0});    // a; not b, c (device) nor d (fetched)
  // Without host reads, nothing decides.
  feeds = DecidingFeeds(g);
  ASSERT_TRUE(feeds.ok()) << feeds.status();
  EXPECT_TRUE(feeds->empty());
}

}  // namespace
}  // namespace sluice
