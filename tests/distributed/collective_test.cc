// Ring all-reduce across three real //tools:server processes on 127.0.0.1:
// one graph with a CollectiveReduce on each task's CPU:0, run through
// NewClusterSession. Sums of 1, 1000 and 1<<20 floats are exact and equal on
// every task, three times over; a task killed with SIGKILL (or stopped with
// SIGSTOP, so that it neither answers nor refuses) fails the next step
// within a bound, with an error naming it.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster/launcher.h"
#include "distributed/cluster_session.h"
#include "gtest/gtest.h"
#include "tests/distributed/test_credentials.h"
#include "ops/collective/collective_ops.h"
#include "sluice.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

// Every process of these tests uses mutual TLS, as a launched job does.
const ::testing::Environment* const kTls =
    ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

constexpr int kTasks = 3;
constexpr float kCollectiveTimeoutS = 5;

std::string TaskName(int t) { return absl::StrCat("/job:worker/replica:0/task:", t); }
std::string Cpu(int t) { return TaskName(t) + "/device:CPU:0"; }

// x<t> fed on task t, y<t> = the sum of every x.
GraphDef AllReduceGraph() {
  Scope root = Scope::NewRootScope(BuiltinOps());
  ops::CollectiveSpec spec;
  spec.group_key = 1;
  spec.instance_key = 1;
  for (int t = 0; t < kTasks; ++t) spec.group_devices.push_back(Cpu(t));
  spec.timeout_seconds = kCollectiveTimeoutS;
  for (int t = 0; t < kTasks; ++t) {
    Scope on = root.WithDevice(Cpu(t));
    Output x = ops::Placeholder(on.WithOpName(absl::StrCat("x", t)), DT_FLOAT);
    ops::AllReduce(on.WithOpName(absl::StrCat("y", t)), x, ReduceOp::kSum, spec);
  }
  EXPECT_TRUE(root.ok()) << root.status();
  GraphDef def;
  root.graph()->ToGraphDef(&def);
  return def;
}

// The worker job's server processes.
class Servers {
 public:
  ::testing::AssertionResult Start() {
    absl::StatusOr<ClusterSpec> spec = LocalCluster(0, kTasks);
    if (!spec.ok()) return ::testing::AssertionFailure() << spec.status();
    spec_ = *spec;
    for (int t = 0; t < kTasks; ++t) {
      absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
          {RunfilePath("tools/server"), "--cluster=" + spec_.ToJson(), "--job=worker",
           absl::StrCat("--task=", t), "--threads=2"},
          {}, TestTmpPath(absl::StrCat("collective-server-", t, "-", getpid(), ".log")));
      if (!p.ok()) return ::testing::AssertionFailure() << p.status();
      procs_.push_back(*std::move(p));
    }
    for (auto& p : procs_) {
      if (!p->WaitForOutput("listening on", absl::Seconds(10))) {
        return ::testing::AssertionFailure() << "server not ready:\n" << p->Output();
      }
    }
    return ::testing::AssertionSuccess();
  }

  const ClusterSpec& spec() const { return spec_; }
  ChildProcess* process(int t) { return procs_[t].get(); }
  std::string Logs() const {
    std::string out;
    for (const auto& p : procs_) absl::StrAppend(&out, p->Output());
    return out;
  }

 private:
  ClusterSpec spec_;
  std::vector<std::unique_ptr<ChildProcess>> procs_;  // killed on destruction
};

class CollectiveClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(servers_.Start());
    ClusterSessionOptions options;
    options.wait_for_cluster_ms = 10000;
    options.session.step_timeout_ms = 6000;
    options.rpc.connect_timeout_ms = 1000;
    options.rpc.call_timeout_ms = 3000;
    absl::StatusOr<std::unique_ptr<Session>> s =
        NewClusterSession(servers_.spec(), AllReduceGraph(), options);
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = *std::move(s);
  }

  // Feeds task t with integer-valued floats (their sums are exact in any
  // order); returns the fetched y0..y2 and checks them against the sum.
  void RunAndCheck(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> value(-1000, 1000);
    std::vector<std::pair<std::string, Tensor>> feeds;
    std::vector<float> sum(n, 0.0f);
    for (int t = 0; t < kTasks; ++t) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(value(rng));
        sum[i] += x[i];
      }
      feeds.emplace_back(absl::StrCat("x", t, ":0"), Tensor::FromVector<float>(x));
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<Tensor>> out = session_->Run(feeds, {"y0:0", "y1:0", "y2:0"}, {});
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(out.ok()) << out.status() << "\n" << servers_.Logs();
    std::printf("all-reduce of %lld floats over %d processes: %.1f ms\n",
                static_cast<long long>(n), kTasks, absl::ToDoubleMilliseconds(took));
    ASSERT_EQ(out->size(), static_cast<size_t>(kTasks));
    for (int t = 0; t < kTasks; ++t) {
      const Tensor& y = (*out)[t];
      ASSERT_EQ(y.dtype(), DT_FLOAT);
      ASSERT_EQ(y.NumElements(), n) << "y" << t;
      ASSERT_EQ(std::memcmp(y.raw_data(), sum.data(), n * sizeof(float)), 0)
          << "y" << t << " differs from the exact sum; first element " << y.flat<float>()[0]
          << " vs " << sum[0];
    }
  }

  // Runs a step that must fail; returns its status and duration.
  absl::Status FailingStep(absl::Duration* took) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (int t = 0; t < kTasks; ++t) {
      feeds.emplace_back(absl::StrCat("x", t, ":0"),
                         Tensor::FromVector<float>(std::vector<float>(1000, 1.0f)));
    }
    const absl::Time start = absl::Now();
    absl::Status s = session_->Run(feeds, {"y0:0", "y1:0", "y2:0"}, {}).status();
    *took = absl::Now() - start;
    std::printf("failing step: %.0f ms: %s\n", absl::ToDoubleMilliseconds(*took),
                s.ToString().c_str());
    return s;
  }

  Servers servers_;
  std::unique_ptr<Session> session_;
};

TEST_F(CollectiveClusterTest, SumsAreExactOnEveryTask) {
  uint32_t seed = 1;
  for (int rep = 0; rep < 3; ++rep) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
      RunAndCheck(n, seed++);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(CollectiveClusterTest, KilledTaskFailsTheStepInTimeNamingIt) {
  RunAndCheck(1000, 7);
  ASSERT_FALSE(HasFatalFailure());
  servers_.process(2)->Signal(SIGKILL);
  ASSERT_TRUE(servers_.process(2)->WaitForExit(absl::Seconds(5)).has_value());
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::Duration took;
    absl::Status s = FailingStep(&took);
    ASSERT_FALSE(s.ok());
    EXPECT_LT(took, absl::Seconds(15));
    EXPECT_TRUE(absl::StrContains(s.message(), TaskName(2))) << s;
  }
}

// A stopped task keeps its port open but never answers: the survivors' probes
// (and pushes) time out, so their collectives fail naming it long before the
// collective's own deadline would have passed for every chunk.
TEST_F(CollectiveClusterTest, StoppedTaskFailsTheStepInTimeNamingIt) {
  RunAndCheck(1000, 9);
  ASSERT_FALSE(HasFatalFailure());
  servers_.process(2)->Signal(SIGSTOP);
  ASSERT_TRUE(servers_.process(2)->WaitUntilStopped(absl::Seconds(5)));
  absl::Duration took;
  absl::Status s = FailingStep(&took);
  servers_.process(2)->Signal(SIGKILL);
  ASSERT_FALSE(s.ok());
  // The survivors name task 2 after about 2 s; the master ends the step half
  // a second later, not when its own call to task 2 passes its deadline
  // (the 6 s step timeout + 2 s).
  EXPECT_LT(took, absl::Milliseconds(7500));
  EXPECT_TRUE(absl::StrContains(s.message(), TaskName(2))) << s;
}

}  // namespace
}  // namespace sluice
