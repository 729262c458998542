// examples/between_graph_mlp as a cluster of processes on 127.0.0.1 (one ps,
// two workers, each with its SLUICE_CONFIG): synchronous training equals
// plain training on the W-fold batch, asynchronous training learns, and the
// job survives a killed worker, a killed parameter server (restored from a
// checkpoint) and a parameter server dying in the middle of a checkpoint
// write (the previous checkpoint stays the latest and restores).
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster/launcher.h"
#include "distributed/cluster_session.h"
#include "examples/mlp_model.h"
#include "gtest/gtest.h"
#include "session/direct_session.h"
#include "sluice.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/test_credentials.h"
#include "training/checkpoint/checkpoint_state.h"
#include "training/checkpoint/saver.h"

namespace sluice {
namespace {

// Every process of these tests uses mutual TLS, as a launched job does.
const ::testing::Environment* const kTls =
    ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

// A small model and data set, so that a step takes about a millisecond.
constexpr int kHidden = 32;
constexpr int kExamples = 1024;
constexpr int kBatch = 16;
constexpr int kWorkers = 2;

std::vector<std::string> CommonFlags(int examples = kExamples) {
  return {absl::StrCat("--hidden=", kHidden),
          absl::StrCat("--examples=", examples),
          absl::StrCat("--batch=", kBatch),
          "--learning_rate=0.1",
          "--optimizer=sgd",
          "--seed=1"};
}

MlpConfig TestMlpConfig() {
  MlpConfig config;
  config.layers = {784, kHidden, 10};
  config.learning_rate = 0.1;
  config.optimizer = "sgd";
  config.seed = 1;
  return config;
}

// The example's processes, one per task, each started with its SLUICE_CONFIG.
class ExampleCluster {
 public:
  ExampleCluster() {
    absl::StatusOr<ClusterSpec> spec = LocalCluster(1, kWorkers);
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (spec.ok()) spec_ = *spec;
  }

  const ClusterSpec& spec() const { return spec_; }

  // Starts (or restarts, after killing the previous process) job:task with
  // `flags` and `env` besides SLUICE_CONFIG. nullptr when it cannot start.
  ChildProcess* Start(const std::string& job, int task, std::vector<std::string> flags,
                      std::vector<std::string> env = {}) {
    const std::string key = absl::StrCat(job, task);
    if (auto it = procs_.find(key); it != procs_.end()) it->second->Kill();
    static int runs = 0;
    TaskConfig config{spec_, job, task};
    env.push_back("SLUICE_CONFIG=" + TaskConfigToJson(config));
    flags.insert(flags.begin(), RunfilePath("examples/between_graph_mlp"));
    auto p = ChildProcess::Start(
        flags, env, TestTmpPath(absl::StrCat("example-", key, "-", ++runs, "-", getpid(), ".log")));
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return nullptr;
    ChildProcess* child = p->get();
    procs_[key] = *std::move(p);
    return child;
  }

  // Starts the ps and waits until it serves.
  // `flags` as the launcher passes them to every task (a ps writes the
  // chief's checkpoints only under the --logdir it was given).
  ::testing::AssertionResult StartPs(std::vector<std::string> flags = {},
                                     std::vector<std::string> env = {}) {
    ChildProcess* ps = Start("ps", 0, std::move(flags), std::move(env));
    if (ps == nullptr) return ::testing::AssertionFailure() << "ps did not start";
    if (!ps->WaitForOutput("serving variables", absl::Seconds(10))) {
      return ::testing::AssertionFailure() << "ps not serving:\n" << ps->Output();
    }
    return ::testing::AssertionSuccess();
  }

  ChildProcess* process(const std::string& job, int task) {
    auto it = procs_.find(absl::StrCat(job, task));
    return it == procs_.end() ? nullptr : it->second.get();
  }

 private:
  ClusterSpec spec_;
  std::map<std::string, std::unique_ptr<ChildProcess>> procs_;  // killed on destruction
};

// Waits for a process to exit 0 within `timeout`.
::testing::AssertionResult ExitsZero(ChildProcess* p, absl::Duration timeout) {
  std::optional<int> status = p->WaitForExit(timeout);
  if (!status.has_value()) {
    return ::testing::AssertionFailure() << "still running after " << timeout << ":\n"
                                         << p->Output();
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return ::testing::AssertionFailure() << DescribeStatus(*status) << ":\n" << p->Output();
  }
  return ::testing::AssertionSuccess();
}

// "final: loss=<x> accuracy=<y>".
bool ParseFinal(const std::string& out, float* loss, float* accuracy) {
  size_t at = out.rfind("final: loss=");
  return at != std::string::npos &&
         std::sscanf(out.c_str() + at, "final: loss=%f accuracy=%f", loss, accuracy) == 2;
}

// "trained to global step N in S s (R steps/s, C recoveries)": N and C.
bool ParseTrained(const std::string& out, int64_t* reached, int* recoveries) {
  size_t at = out.rfind("trained to global step ");
  if (at == std::string::npos) return false;
  long long n = -1;
  if (std::sscanf(out.c_str() + at, "trained to global step %lld", &n) != 1) return false;
  *reached = n;
  size_t rec = out.find(" recoveries)", at);
  size_t comma = out.rfind(", ", rec);
  if (rec == std::string::npos || comma == std::string::npos || comma < at) return false;
  return absl::SimpleAtoi(out.substr(comma + 2, rec - comma - 2), recoveries);
}

// "done after N local steps" of a non-chief worker; -1 when absent.
int64_t ParseLocalSteps(const std::string& out) {
  size_t at = out.rfind("done after ");
  long long n = -1;
  if (at == std::string::npos || std::sscanf(out.c_str() + at, "done after %lld", &n) != 1)
    return -1;
  return n;
}

// The N of every "step N: loss=" progress line, in order.
std::vector<int64_t> LoggedSteps(const std::string& out) {
  std::vector<int64_t> steps;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::StartsWith(line, "step ")) continue;
    size_t colon = line.find(": loss=");
    int64_t n;
    if (colon != absl::string_view::npos && absl::SimpleAtoi(line.substr(5, colon - 5), &n)) {
      steps.push_back(n);
    }
  }
  return steps;
}

// Waits until `p` has logged a progress line for a step >= `step`.
bool WaitForStep(ChildProcess* p, int64_t step, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline && p->Running()) {
    std::vector<int64_t> steps = LoggedSteps(p->Output());
    if (!steps.empty() && steps.back() >= step) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::vector<int64_t> steps = LoggedSteps(p->Output());
  return !steps.empty() && steps.back() >= step;
}

// A fresh directory under TEST_TMPDIR.
std::string FreshDir(const std::string& name) {
  const std::string dir = TestTmpPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string NpyName(const std::string& variable) {
  return absl::StrCat(absl::StrReplaceAll(variable, {{"/", "_"}}), ".npy");
}

// --- synchronous training equals the W-fold batch ------------------------------

// The weights after `steps` plain steps of the model on the W-fold batches
// Batch(data, s*W*B, W*B), in the order of model.weights.
std::vector<Tensor> WFoldReference(const MlpModel& model, int64_t steps, int examples) {
  absl::StatusOr<std::unique_ptr<Session>> session =
      NewSession(BuiltinSessionConfig(), *model.scope.graph());
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  Session* s = session->get();
  EXPECT_TRUE(s->Run({}, {}, {model.init->name()}).ok());
  Dataset data = MakeSyntheticDataset({.examples = examples});
  for (int64_t step = 0; step < steps; ++step) {
    Dataset b = Batch(data, step * kWorkers * kBatch, kWorkers * kBatch);
    absl::Status st = s->Run({{"x", b.x}, {"labels", b.y}}, {}, {model.train->name()}).status();
    EXPECT_TRUE(st.ok()) << st;
  }
  std::vector<std::string> names;
  for (const Output& w : model.weights) names.push_back(w.node->name());
  absl::StatusOr<std::vector<Tensor>> out = s->Run({}, names, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

struct SyncRun {
  bool in_step = false;     // worker 1 took one token per applied step
  double worst_error = -1;  // max |got - want| / max(|want|, 1e-3) over all weights
  int64_t reached = -1;
  std::string note;  // one line
  std::string logs;  // the workers' output
};

// One synchronous run of `steps` on a fresh cluster; hard failures (exit
// codes, missing files) are test failures, `in_step` / `worst_error` are for
// the caller to judge.
SyncRun RunSyncOnce(int attempt, int steps, int examples) {
  SyncRun run;
  const std::string dump = FreshDir(absl::StrCat("sync-weights-", attempt));
  ExampleCluster cluster;
  EXPECT_TRUE(cluster.StartPs());
  // The model is initialized on the ps from here (same graph and seed as the
  // example's init), so the chief finds it ready and starts at once.
  absl::StatusOr<MlpModel> model = BuildMlp(TestMlpConfig());
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return run;
  {
    absl::StatusOr<ClusterSpec> ps_only =
        ClusterSpec::FromJobs({{"ps", {*cluster.spec().Address("ps", 0)}}});
    absl::StatusOr<GraphDef> def = model->scope.ToGraphDef();
    EXPECT_TRUE(ps_only.ok() && def.ok());
    if (!ps_only.ok() || !def.ok()) return run;
    ClusterSessionOptions options;
    options.session.default_device = "/job:ps/task:0";
    absl::StatusOr<std::unique_ptr<Session>> session = NewClusterSession(*ps_only, *def, options);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return run;
    absl::Status init = (*session)->Run({}, {}, {model->init->name()}).status();
    EXPECT_TRUE(init.ok()) << init;
  }
  std::vector<std::string> flags = CommonFlags(examples);
  for (const char* f : {"--sync", "--logdir=", "--log_every=4"}) flags.push_back(f);
  flags.push_back(absl::StrCat("--steps=", steps));
  ChildProcess* worker1 = cluster.Start("worker", 1, flags);
  absl::SleepFor(absl::Milliseconds(300));
  flags.push_back("--dump_weights=" + dump);
  ChildProcess* chief = cluster.Start("worker", 0, flags);
  EXPECT_TRUE(worker1 != nullptr && chief != nullptr);
  if (worker1 == nullptr || chief == nullptr) return run;
  ::testing::AssertionResult chief_ok = ExitsZero(chief, absl::Seconds(40));
  ::testing::AssertionResult worker1_ok = ExitsZero(worker1, absl::Seconds(10));
  EXPECT_TRUE(chief_ok);
  EXPECT_TRUE(worker1_ok);
  if (!chief_ok || !worker1_ok) return run;

  int recoveries = -1;
  EXPECT_TRUE(ParseTrained(chief->Output(), &run.reached, &recoveries)) << chief->Output();
  EXPECT_EQ(recoveries, 0);
  // The last step may have been opened before the workers saw `steps`.
  EXPECT_GE(run.reached, steps);
  EXPECT_LE(run.reached, steps + 2);
  // In step: worker 1 took a token of every applied step (plus at most one
  // for a step that was never applied).
  const int64_t local = ParseLocalSteps(worker1->Output());
  run.in_step = local == run.reached || local == run.reached + 1;
  run.note = absl::StrCat("attempt ", attempt, ": worker 1 made ", local, " local steps for ",
                          run.reached, " global steps");

  const std::vector<Tensor> want = WFoldReference(*model, run.reached, examples);
  EXPECT_EQ(want.size(), model->weights.size());
  if (want.size() != model->weights.size()) return run;
  run.worst_error = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string name = model->weights[i].node->name();
    absl::StatusOr<Tensor> got = ReadNpyFile(absl::StrCat(dump, "/", NpyName(name)));
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return run;
    EXPECT_EQ(got->NumElements(), want[i].NumElements()) << name;
    if (got->NumElements() != want[i].NumElements()) return run;
    absl::Span<const float> g = got->flat<float>(), w = want[i].flat<float>();
    for (size_t j = 0; j < g.size(); ++j) {
      const double err = std::abs(double(g[j]) - w[j]) / std::max(1e-3, std::abs(double(w[j])));
      run.worst_error = std::max(run.worst_error, err);
    }
  }
  absl::StrAppend(&run.note, ", worst relative error ", run.worst_error);
  run.logs = absl::StrCat("chief:\n", chief->Output(), "worker 1:\n", worker1->Output());
  return run;
}

// Synchronous training over W workers of batch B equals plain training on
// the W-fold batch. With a data set of exactly B examples every worker's
// batch is the whole set, so the result does not depend on which worker
// contributed to a step: averaging, stale gradients and step counting are
// checked deterministically.
TEST(BetweenGraphTest, SyncTrainingOnIdenticalShardsEqualsOneSession) {
  // Enough steps for worker 1 to join: the chief may run the first ones
  // alone while worker 1 connects.
  SyncRun run = RunSyncOnce(/*attempt=*/0, /*steps=*/60, /*examples=*/kBatch);
  if (HasFailure()) return;
  std::printf("identical shards: %s\n", run.note.c_str());
  EXPECT_GE(run.worst_error, 0);
  EXPECT_LE(run.worst_error, 1e-4) << run.note << "\n" << run.logs;
}

// The same with distinct shards: worker k at global step s trains on rows
// (s*W + k)*B of the data, the W-fold batch Batch(data, s*W*B, W*B). Each
// worker has a token queue of its own (SyncReplicasOptions::replica_index),
// so every worker contributes exactly once per step.
TEST(BetweenGraphTest, SyncTrainingEqualsTheWFoldBatchOnOneSession) {
  constexpr int kSteps = 12;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    SyncRun run = RunSyncOnce(attempt, kSteps, kExamples);
    if (HasFailure()) return;
    std::printf("distinct shards: %s\n", run.note.c_str());
    EXPECT_TRUE(run.in_step) << run.note << "\n" << run.logs;
    EXPECT_GE(run.worst_error, 0);
    EXPECT_LE(run.worst_error, 1e-4) << run.note << "\n" << run.logs;
  }
}

// --- asynchronous training ---------------------------------------------------------

TEST(BetweenGraphTest, AsyncTrainingReachesTheStepsAndLearns) {
  ExampleCluster cluster;
  ASSERT_TRUE(cluster.StartPs());
  std::vector<std::string> flags = CommonFlags();
  for (const char* f : {"--async", "--steps=200", "--logdir=", "--log_every=50"})
    flags.push_back(f);
  ChildProcess* chief = cluster.Start("worker", 0, flags);
  ChildProcess* worker1 = cluster.Start("worker", 1, flags);
  ASSERT_TRUE(chief != nullptr && worker1 != nullptr);
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(40)));
  ASSERT_TRUE(ExitsZero(worker1, absl::Seconds(10)));
  float loss = -1, accuracy = -1;
  ASSERT_TRUE(ParseFinal(chief->Output(), &loss, &accuracy)) << chief->Output();
  EXPECT_GT(accuracy, 0.8f) << chief->Output();
  int64_t reached = -1;
  int recoveries = -1;
  ASSERT_TRUE(ParseTrained(chief->Output(), &reached, &recoveries)) << chief->Output();
  EXPECT_GE(reached, 200);
  EXPECT_LT(reached, 200 + 10);
  EXPECT_TRUE(absl::StrContains(worker1->Output(), "done after")) << worker1->Output();
}

// --- faults --------------------------------------------------------------------------

TEST(BetweenGraphTest, KilledWorkerLeavesTheChiefRunningAndRejoins) {
  ExampleCluster cluster;
  ASSERT_TRUE(cluster.StartPs());
  std::vector<std::string> flags = CommonFlags();
  for (const char* f : {"--async", "--steps=5000", "--logdir=", "--log_every=100"}) {
    flags.push_back(f);
  }
  ChildProcess* chief = cluster.Start("worker", 0, flags);
  ChildProcess* worker1 = cluster.Start("worker", 1, flags);
  ASSERT_TRUE(chief != nullptr && worker1 != nullptr);
  ASSERT_TRUE(WaitForStep(worker1, 300, absl::Seconds(20))) << worker1->Output();

  worker1->Signal(SIGKILL);
  ASSERT_TRUE(worker1->WaitForExit(absl::Seconds(5)).has_value());
  std::vector<int64_t> at_kill = LoggedSteps(chief->Output());
  ASSERT_FALSE(at_kill.empty());
  // The chief goes on alone.
  ASSERT_TRUE(WaitForStep(chief, at_kill.back() + 500, absl::Seconds(20))) << chief->Output();

  ChildProcess* again = cluster.Start("worker", 1, flags);
  ASSERT_NE(again, nullptr);
  // Rejoined: it logs progress past the point where its predecessor died.
  ASSERT_TRUE(WaitForStep(again, at_kill.back() + 100, absl::Seconds(20)))
      << again->Output() << "\nchief:\n"
      << chief->Output();
  ASSERT_TRUE(chief->Running()) << "the run was too short to see the rejoin:\n" << chief->Output();

  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(45)));
  float loss = -1, accuracy = -1;
  ASSERT_TRUE(ParseFinal(chief->Output(), &loss, &accuracy)) << chief->Output();
  int64_t reached = -1;
  int recoveries = -1;
  ASSERT_TRUE(ParseTrained(chief->Output(), &reached, &recoveries)) << chief->Output();
  EXPECT_GE(reached, 5000);
  EXPECT_TRUE(ExitsZero(again, absl::Seconds(10)));
}

TEST(BetweenGraphTest, KilledPsIsRestoredFromTheLatestCheckpoint) {
  const std::string logdir = FreshDir("ps-kill-logdir");
  ExampleCluster cluster;
  ASSERT_TRUE(cluster.StartPs({"--logdir=" + logdir}));
  std::vector<std::string> flags = CommonFlags();
  for (const char* f : {"--async", "--steps=3000", "--checkpoint_steps=100", "--log_every=50"}) {
    flags.push_back(f);
  }
  flags.push_back("--logdir=" + logdir);
  ChildProcess* chief = cluster.Start("worker", 0, flags);
  ChildProcess* worker1 = cluster.Start("worker", 1, flags);
  ASSERT_TRUE(chief != nullptr && worker1 != nullptr);
  ASSERT_TRUE(WaitForStep(chief, 600, absl::Seconds(20))) << chief->Output();
  absl::StatusOr<std::string> before = LatestCheckpoint(logdir);
  ASSERT_TRUE(before.ok()) << before.status();

  cluster.process("ps", 0)->Signal(SIGKILL);
  ASSERT_TRUE(cluster.process("ps", 0)->WaitForExit(absl::Seconds(5)).has_value());
  const std::vector<int64_t> at_kill = LoggedSteps(chief->Output());
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_TRUE(cluster.StartPs({"--logdir=" + logdir}));

  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(45)));
  EXPECT_TRUE(ExitsZero(worker1, absl::Seconds(15)));
  const std::string out = chief->Output();
  float loss = -1, accuracy = -1;
  ASSERT_TRUE(ParseFinal(out, &loss, &accuracy)) << out;
  int64_t reached = -1;
  int recoveries = -1;
  ASSERT_TRUE(ParseTrained(out, &reached, &recoveries)) << out;
  EXPECT_GE(reached, 3000);
  EXPECT_GE(recoveries, 1) << out;
  // The global step went back to a checkpoint, not to 0: after the kill,
  // every logged step is at least that of the checkpoint seen before it.
  const std::vector<int64_t> steps = LoggedSteps(out);
  ASSERT_GT(steps.size(), at_kill.size()) << out;
  const int64_t restored_floor = 100;
  for (size_t i = at_kill.size(); i < steps.size(); ++i) {
    EXPECT_GE(steps[i], restored_floor) << "step " << steps[i] << " logged after the restart:\n"
                                        << out;
  }
  absl::StatusOr<std::string> after = LatestCheckpoint(logdir);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(*after, *before);
}

TEST(BetweenGraphTest, CrashInACheckpointWriteKeepsThePreviousCheckpoint) {
  const std::string logdir = FreshDir("crash-logdir");
  ExampleCluster cluster;
  // The ps dies in the middle of writing its part of the third checkpoint:
  // each checkpoint is three files on the ps (its part's data file and
  // index, then the merged index), so the 7th file it writes.
  ASSERT_TRUE(cluster.StartPs({"--logdir=" + logdir}, {"SLUICE_TEST_CRASH_IN_ATOMIC_WRITE=7"}));
  std::vector<std::string> flags = CommonFlags();
  for (const char* f : {"--async", "--steps=2500", "--checkpoint_steps=100", "--log_every=50"}) {
    flags.push_back(f);
  }
  flags.push_back("--logdir=" + logdir);
  ChildProcess* chief = cluster.Start("worker", 0, flags);
  ChildProcess* worker1 = cluster.Start("worker", 1, flags);
  ASSERT_TRUE(chief != nullptr && worker1 != nullptr);
  ChildProcess* ps = cluster.process("ps", 0);
  std::optional<int> ps_status = ps->WaitForExit(absl::Seconds(30));
  ASSERT_TRUE(ps_status.has_value()) << "the failpoint did not fire:\n" << chief->Output();
  ASSERT_TRUE(WIFEXITED(*ps_status) && WEXITSTATUS(*ps_status) == 86)
      << DescribeStatus(*ps_status) << "\n"
      << ps->Output();

  // The latest checkpoint is still the second one, whole; the third left
  // only a partial temporary file in its "_temp" directory.
  absl::StatusOr<std::string> latest = LatestCheckpoint(logdir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  int64_t saved_step = -1;
  {
    size_t dash = latest->rfind('-');
    ASSERT_TRUE(absl::SimpleAtoi(latest->substr(dash + 1), &saved_step)) << *latest;
  }
  EXPECT_GE(saved_step, 200);
  int whole = 0, partial = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(logdir)) {
    const std::string name = entry.path().filename().string();
    if (absl::StrContains(name, ".tmp-"))
      ++partial;
    else if (absl::EndsWith(name, ".index"))
      ++whole;
  }
  EXPECT_EQ(whole, 2) << "two checkpoints written whole";
  EXPECT_EQ(partial, 1) << "one partial data file left by the crash";

  // It restores in a process of its own.
  {
    absl::StatusOr<MlpModel> model = BuildMlp(TestMlpConfig());
    ASSERT_TRUE(model.ok()) << model.status();
    absl::StatusOr<std::unique_ptr<Saver>> saver = Saver::Build(model->scope, {});
    ASSERT_TRUE(saver.ok()) << saver.status();
    absl::StatusOr<std::unique_ptr<Session>> session =
        NewSession(BuiltinSessionConfig(), *model->scope.graph());
    ASSERT_TRUE(session.ok()) << session.status();
    absl::Status restored = (*saver)->Restore(session->get(), *latest);
    ASSERT_TRUE(restored.ok()) << restored;
    absl::StatusOr<std::vector<Tensor>> step = (*session)->Run({}, {model->global_step}, {});
    ASSERT_TRUE(step.ok()) << step.status();
    // Asynchronous workers go on while the ps saves: the saved global step
    // may be a little past the one the checkpoint is named after.
    EXPECT_GE((*step)[0].scalar<int64_t>(), saved_step);
    EXPECT_LT((*step)[0].scalar<int64_t>(), saved_step + 50);
  }

  // And the job: the ps comes back (without the failpoint) and the chief
  // restores and finishes.
  ASSERT_TRUE(cluster.StartPs({"--logdir=" + logdir}));
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(45)));
  EXPECT_TRUE(ExitsZero(worker1, absl::Seconds(15)));
  float loss = -1, accuracy = -1;
  ASSERT_TRUE(ParseFinal(chief->Output(), &loss, &accuracy)) << chief->Output();
  const std::vector<int64_t> steps = LoggedSteps(chief->Output());
  ASSERT_FALSE(steps.empty());
  EXPECT_GE(steps.back(), 2500 - 50);
}

// The pid of `task` ("ps:0") in the launcher's "[launch] started ps:0 (pid N)"
// lines: the latest start's; -1 when none.
pid_t LaunchedPid(const std::string& out, const std::string& task) {
  pid_t pid = -1;
  const std::string needle = absl::StrCat("[launch] started ", task, " (pid ");
  for (size_t at = out.find(needle); at != std::string::npos; at = out.find(needle, at + 1)) {
    pid = static_cast<pid_t>(std::atoi(out.c_str() + at + needle.size()));
  }
  return pid;
}

// Steps the chief logged through the launcher ("[worker:0] step N: ..."),
// in order, and the last of them (-1: none).
std::vector<int64_t> ChiefSteps(const std::string& out) {
  std::string chief;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, "[worker:0] ")) absl::StrAppend(&chief, line, "\n");
  }
  return LoggedSteps(chief);
}

int64_t ChiefStep(const std::string& out) {
  std::vector<int64_t> steps = ChiefSteps(out);
  return steps.empty() ? -1 : steps.back();
}

bool WaitForChiefStep(ChildProcess* launcher, int64_t step, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline && launcher->Running()) {
    if (ChiefStep(launcher->Output()) >= step) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

// As a user would: the launcher runs the job, a ps, a worker and then the
// chief are killed with SIGKILL; the launcher starts each again at its
// address and the chief's recovery finishes the training. (Before: "ps:0 failed; the
// other tasks go on", and the workers waited without a word.)
TEST(BetweenGraphTest, LauncherRestartsKilledTasksAndTrainingFinishes) {
  const std::string logdir = FreshDir("launcher-restarts");
  std::vector<std::string> argv = {RunfilePath("tools/launch"), "--ps=1", "--workers=2", "--",
                                   RunfilePath("examples/between_graph_mlp")};
  for (const std::string& f : CommonFlags()) argv.push_back(f);
  for (const char* f : {"--async", "--steps=3000", "--checkpoint_steps=100", "--log_every=50"}) {
    argv.push_back(f);
  }
  argv.push_back("--logdir=" + logdir);
  absl::StatusOr<std::unique_ptr<ChildProcess>> launcher =
      ChildProcess::Start(argv, {"BUILD_WORKING_DIRECTORY=", "SLUICE_CONFIG="},
                          TestTmpPath(absl::StrCat("launcher-", getpid(), ".log")));
  ASSERT_TRUE(launcher.ok()) << launcher.status();
  ChildProcess* l = launcher->get();
  ASSERT_TRUE(WaitForChiefStep(l, 300, absl::Seconds(30))) << l->Output();

  const pid_t ps = LaunchedPid(l->Output(), "ps:0");
  ASSERT_GT(ps, 0) << l->Output();
  ASSERT_EQ(kill(ps, SIGKILL), 0);
  ASSERT_TRUE(
      l->WaitForOutput("[launch] ps:0 failed; restarting in 1s (1 of 3)", absl::Seconds(10)))
      << l->Output();
  ASSERT_TRUE(l->WaitForOutputCount("[launch] started ps:0", 2, absl::Seconds(10))) << l->Output();
  const int64_t after_ps = ChiefStep(l->Output());
  ASSERT_TRUE(WaitForChiefStep(l, after_ps + 200, absl::Seconds(60))) << l->Output();

  const pid_t worker = LaunchedPid(l->Output(), "worker:1");
  ASSERT_GT(worker, 0) << l->Output();
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  ASSERT_TRUE(l->WaitForOutputCount("[launch] started worker:1", 2, absl::Seconds(10)))
      << l->Output();

  // The chief too: started again, it finds the model on the ps (or in the
  // newest checkpoint) and goes on from the global step it had, not from 0.
  const int64_t chief_at_kill = ChiefStep(l->Output());
  const size_t chief_lines_at_kill = ChiefSteps(l->Output()).size();
  const pid_t chief = LaunchedPid(l->Output(), "worker:0");
  ASSERT_GT(chief, 0) << l->Output();
  ASSERT_EQ(kill(chief, SIGKILL), 0);
  ASSERT_TRUE(
      l->WaitForOutput("[launch] worker:0 failed; restarting in 1s (1 of 3)", absl::Seconds(10)))
      << l->Output();
  ASSERT_TRUE(l->WaitForOutputCount("[launch] started worker:0", 2, absl::Seconds(10)))
      << l->Output();
  ASSERT_TRUE(WaitForChiefStep(l, chief_at_kill + 100, absl::Seconds(60))) << l->Output();
  const std::vector<int64_t> chief_steps = ChiefSteps(l->Output());
  ASSERT_GT(chief_steps.size(), chief_lines_at_kill) << l->Output();
  EXPECT_GE(chief_steps[chief_lines_at_kill], chief_at_kill - 100) << l->Output();

  std::optional<int> status = l->WaitForExit(absl::Seconds(120));
  ASSERT_TRUE(status.has_value()) << "still running:\n" << l->Output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << DescribeStatus(*status) << ":\n"
                                                               << l->Output();
  float loss = -1, accuracy = -1;
  ASSERT_TRUE(ParseFinal(l->Output(), &loss, &accuracy)) << l->Output();
  EXPECT_GT(accuracy, 0.8f) << l->Output();
}

}  // namespace
}  // namespace sluice
