// Resource variables (VarHandleOp, ReadVariableOp, AssignVariableOp,
// AssignSubVariableOp) in recorded steps (runtime/step_replay.h), on the
// fake recording device "REC" (runtime/recording_device_testutil.h). Their
// kernels are stateful, and replay right only because the recorder tracks
// the device's variables: every step must equal a session that never
// records, whether the update stays in place, copies on write (the read is
// fetched), or replaces the variable's buffer (an assignment).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/scope.h"
#include "gtest/gtest.h"
#include "ops/state/resource_variable_ops.h"
#include "ops/state/state_kernels.h"
#include "runtime/recording_device_testutil.h"
#include "runtime/session.h"
#include "session/rec_session_testutil.h"

namespace sluice {
namespace {

using testing_rec::kRec;
using testing_rec::RecordingDevice;
using testing_rec::RecStats;

// AssignAdd/SubVariableOp's arithmetic on REC: queued like its kernels'.
struct RecAssignImpl {
  template <typename T>
  static absl::Status AssignUpdate(OpKernelContext* ctx, T* var, const T* value, int64_t n,
                                   bool add) {
    static_cast<RecordingDevice*>(ctx->device())->Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) var[i] += add ? value[i] : -value[i];
    });
    return absl::OkStatus();
  }
};

// How a step changes w after reading it into r and computing y = r * x.
enum class Update {
  kSubInPlace,   // AssignSubVariableOp(w, y): nobody else holds w's buffer
  kSubFetched,   // the same, with r fetched: the update copies on write
  kAssign,       // AssignVariableOp(w, y): y is fetched, so it is copied into w
};

class ResourceVariableReplayTest : public RecSessionTest {
 protected:
  void SetUp() override {
    RecSessionTest::SetUp();
    ASSERT_TRUE(RegisterResourceVariableOps(&ops_).ok());
    RegisterResourceVariableDeviceKernels(&kernels_, kRec, {DT_FLOAT});
    RegisterResourceAssignUpdateFor<RecAssignImpl, float>(&kernels_, kRec);
    Finish();
  }

  // w: a resource variable, float [3]; init: w = w0 (fed). The step reads
  // r = w, computes y = r * x (x fed) and updates w by `update` ("train").
  GraphDef StepGraph(Update update) {
    Graph g(&ops_);
    Scope s = Scope::NewRootScope(&g);
    Output w = ops::VarHandleOp(s.WithOpName("w"), DT_FLOAT, TensorShape({3}));
    Output w0 = s.WithOpName("w0").Op("Input").Finalize1();
    ops::AssignVariableOp(s.WithOpName("init"), w, w0);
    Output r = ops::ReadVariableOp(s.WithOpName("r"), w, DT_FLOAT);
    Output x = s.WithOpName("x").Op("Input").Finalize1();
    Output y = s.WithOpName("y").Op("Mul").Input(r).Input(x).Finalize1();
    if (update == Update::kAssign) {
      ops::AssignVariableOp(s.WithOpName("train"), w, y);
    } else {
      ops::AssignSubVariableOp(s.WithOpName("train"), w, y);
    }
    EXPECT_TRUE(s.ok()) << s.status();
    GraphDef def;
    g.ToGraphDef(&def);
    return def;
  }

  // One step's fetches (y, and r for kSubFetched), and whether it replayed.
  static std::pair<std::vector<Tensor>, bool> Step(Session* s, Update update, const Tensor& x) {
    std::vector<std::string> fetches = {"y"};
    if (update == Update::kSubFetched) fetches.push_back("r");
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out = s->Run({{"x", x}}, fetches, {"train"}, {}, &md);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    return {*std::move(out), md.step_replayed};
  }

  static std::vector<float> Values(const Tensor& t) {
    return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
  }
};

TEST_F(ResourceVariableReplayTest, StepsReadingAndUpdatingAResourceVariableReplayLikeTheExecutor) {
  for (Update update : {Update::kSubInPlace, Update::kSubFetched, Update::kAssign}) {
    SCOPED_TRACE(static_cast<int>(update));
    const GraphDef def = StepGraph(update);
    auto [replaying, plain] = NewSessionPair(def, {1, 2, 3});
    ASSERT_NE(replaying, nullptr);
    const int mul_before = RecStats().mul_computes.load();
    int replays = 0;
    constexpr int kSteps = 8;
    for (int step = 0; step < kSteps; ++step) {
      // |1 - x| < 1 keeps w finite and changing under subtraction; the
      // assignment multiplies by x.
      const Tensor x = Floats({0.5f, 0.25f + 0.05f * step, -0.5f});
      auto [got, replayed] = Step(replaying.get(), update, x);
      auto [want, plain_replayed] = Step(plain.get(), update, x);
      ASSERT_EQ(got.size(), want.size()) << "step " << step;
      EXPECT_FALSE(plain_replayed);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(Values(got[i]), Values(want[i])) << "step " << step << ", fetch " << i;
      }
      replays += replayed ? 1 : 0;
    }
    // Two runs through the executor, then recorded and replayed.
    EXPECT_EQ(replays, kSteps - 2);
    // Replays run no kernel: Mul runs in the executor's runs only (both
    // sessions' first two steps, the plain session's others) and in the
    // recording, which runs twice when the first attempt moved w's buffer:
    // only when the fetched read keeps the update from running in place (the
    // assignment of the fetched y copies into w's own buffer).
    const int recording_runs = update == Update::kSubFetched ? 2 : 1;
    EXPECT_EQ(RecStats().mul_computes.load() - mul_before, kSteps + 2 + recording_runs);
    // w itself, read by a step of its own, agrees too.
    absl::StatusOr<std::vector<Tensor>> w = replaying->Run({}, {"r"}, {});
    absl::StatusOr<std::vector<Tensor>> w_plain = plain->Run({}, {"r"}, {});
    ASSERT_TRUE(w.ok() && w_plain.ok()) << w.status() << w_plain.status();
    EXPECT_EQ(Values((*w)[0]), Values((*w_plain)[0]));
  }
}

// A fetched read is the value before the step's update, replays included.
TEST_F(ResourceVariableReplayTest, AFetchedReadIsTheValueBeforeTheUpdate) {
  std::unique_ptr<Session> s = NewRecSession(StepGraph(Update::kSubFetched), /*capture=*/true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Run({{"w0", Floats({1, 2, 3})}}, {}, {"init"}).ok());
  std::vector<float> w = {1, 2, 3};
  const Tensor x = Floats({0.5f, 0.5f, 0.5f});
  int replays = 0;
  for (int step = 0; step < 6; ++step) {
    auto [out, replayed] = Step(s.get(), Update::kSubFetched, x);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Values(out[1]), w) << "step " << step;  // r
    for (float& v : w) v *= 0.5f;                     // w -= w * 0.5
    replays += replayed ? 1 : 0;
  }
  EXPECT_EQ(replays, 4);
}

// c := w, then w -= w * x in place: c must keep w's value from before the
// update, in the executor and in every replay. (An assignment that took the
// read's buffer made c share w's; when the recording copied w's update back
// before c's, into that shared buffer, replays gave c the value after the
// update. The copy-back's order is the resource manager's hash order, so
// that showed in some runs only; resource_variable_ops_test's
// AnAssignmentCopiesAValueOthersHold checks the sharing itself.)
TEST_F(ResourceVariableReplayTest, AVariableAssignedFromAnotherKeepsItsOwnBuffer) {
  Graph g(&ops_);
  Scope s = Scope::NewRootScope(&g);
  Output w = ops::VarHandleOp(s.WithOpName("w"), DT_FLOAT, TensorShape({3}));
  Output c = ops::VarHandleOp(s.WithOpName("c"), DT_FLOAT, TensorShape({3}));
  Output w0 = s.WithOpName("w0").Op("Input").Finalize1();
  ops::AssignVariableOp(s.WithOpName("init_w"), w, w0);
  ops::AssignVariableOp(s.WithOpName("init_c"), c, w0);
  Output r = ops::ReadVariableOp(s.WithOpName("r"), w, DT_FLOAT);
  Node* copy = ops::AssignVariableOp(s.WithOpName("copy"), c, r);
  Output x = s.WithOpName("x").Op("Input").Finalize1();
  Output y = s.WithOpName("y").Op("Mul").Input(r).Input(x).Finalize1();
  ops::AssignSubVariableOp(
      s.WithOpName("train").WithControlDependencies(std::vector<Node*>{copy}), w, y);
  ops::ReadVariableOp(s.WithOpName("w_value"), w, DT_FLOAT);
  ops::ReadVariableOp(s.WithOpName("c_value"), c, DT_FLOAT);
  ASSERT_TRUE(s.ok()) << s.status();
  GraphDef def;
  g.ToGraphDef(&def);

  auto [replaying, plain] = NewSessionPair(def, {1, 2, 3}, {"init_w", "init_c"});
  ASSERT_NE(replaying, nullptr);
  std::vector<float> w_before = {1, 2, 3};
  int replays = 0;
  for (int step = 0; step < 6; ++step) {
    const Tensor half = Floats({0.5f, 0.5f, 0.5f});
    for (Session* sess : {replaying.get(), plain.get()}) {
      RunMetadata md;
      absl::StatusOr<std::vector<Tensor>> out = sess->Run({{"x", half}}, {}, {"train"}, {}, &md);
      ASSERT_TRUE(out.ok()) << out.status();
      if (sess == replaying.get()) replays += md.step_replayed ? 1 : 0;
      absl::StatusOr<std::vector<Tensor>> values =
          sess->Run({}, std::vector<std::string>{"w_value", "c_value"}, {});
      ASSERT_TRUE(values.ok()) << values.status();
      EXPECT_EQ(Values((*values)[1]), w_before)
          << "step " << step << (sess == replaying.get() ? " (replaying)" : " (plain)");
      std::vector<float> w_after = w_before;
      for (float& v : w_after) v *= 0.5f;
      EXPECT_EQ(Values((*values)[0]), w_after) << "step " << step;
    }
    for (float& v : w_before) v *= 0.5f;
  }
  EXPECT_EQ(replays, 4);
}

// VarIsInitializedOp reads the host's flag: its kernel keeps a step with it
// from being recorded (StepReplay::Create refuses such a step).
TEST_F(ResourceVariableReplayTest, OnlyTheVariableKernelsReplayRight) {
  Graph g(&ops_);
  Scope s = Scope::NewRootScope(&g);
  Output w = ops::VarHandleOp(s.WithOpName("w"), DT_FLOAT, TensorShape({3}));
  ops::VarIsInitializedOp(s.WithOpName("ready"), w);
  ASSERT_TRUE(s.ok()) << s.status();
  RecordingDevice device;
  for (const char* name : {"w", "ready"}) {
    absl::StatusOr<std::unique_ptr<OpKernel>> k =
        kernels_.CreateKernel(*g.FindNode(name), &device);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->ReplaysRight(), std::string(name) == "w") << name;
  }
}

}  // namespace
}  // namespace sluice
