// A cluster in which every task is a different host: each task runs in its
// own network namespace with its own address (netns_hosts.h), all on port
// 2222, over mutual TLS. The job trains; a task that answers at another
// task's address is refused by name; --insecure is refused across hosts; a
// link that goes down and comes back, and a worker's host that disappears,
// leave the job to finish. Skipped, saying why, where namespaces cannot be
// made (not root, no iproute2).
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/distributed/child_process.h"
#include "tests/distributed/netns_hosts.h"
#include "tests/distributed/test_credentials.h"

namespace sluice {
namespace {

const auto* const kTls = ::testing::AddGlobalTestEnvironment(new TestJobCredentials);

constexpr int kPort = 2222;

// The cluster of hosts 0 (ps), 1 (worker 0, the chief) and 2 (worker 1).
std::string ClusterJson(const NetnsHosts& hosts) {
  return absl::StrCat("{\"ps\": [\"", hosts.address(0), ":", kPort, "\"], \"worker\": [\"",
                      hosts.address(1), ":", kPort, "\", \"", hosts.address(2), ":", kPort,
                      "\"]}");
}

std::string Config(const std::string& cluster, const std::string& job, int index) {
  return absl::StrCat("SLUICE_CONFIG={\"cluster\": ", cluster, ", \"task\": {\"type\": \"", job,
                      "\", \"index\": ", index, "}}");
}

std::vector<std::string> TrainFlags(int steps) {
  return {"--async",         absl::StrCat("--steps=", steps), "--hidden=32", "--examples=2048",
          "--batch=32",      "--log_every=50",                "--learning_rate=0.1",
          "--logdir=" + TestTmpPath(absl::StrCat("netns-logs-", steps, "-", getpid()))};
}

// Global steps the chief logged ("step N: ..."), in order.
std::vector<int64_t> Steps(const std::string& out) {
  std::vector<int64_t> steps;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    int64_t step;
    if (absl::ConsumePrefix(&line, "step ") &&
        absl::SimpleAtoi(line.substr(0, line.find(": loss=")), &step)) {
      steps.push_back(step);
    }
  }
  return steps;
}

// Waits until the chief has logged global step `step` or more.
bool WaitForStep(ChildProcess* chief, int64_t step, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline && chief->Running()) {
    const std::vector<int64_t> steps = Steps(chief->Output());
    if (!steps.empty() && steps.back() >= step) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

class NetnsClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<NetnsHosts>> hosts = NetnsHosts::Create(3);
    if (!hosts.ok()) GTEST_SKIP() << "no cluster of hosts here: " << hosts.status();
    hosts_ = *std::move(hosts);
    cluster_ = ClusterJson(*hosts_);
  }

  // Runs between_graph_mlp as job:index on its host.
  ChildProcess* Start(const std::string& job, int index, int host,
                      const std::vector<std::string>& flags, const std::string& cluster = "") {
    std::vector<std::string> argv = {RunfilePath("examples/between_graph_mlp")};
    argv.insert(argv.end(), flags.begin(), flags.end());
    absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
        hosts_->Wrap(host, argv),
        {Config(cluster.empty() ? cluster_ : cluster, job, index), "SLUICE_INSECURE="},
        TestTmpPath(absl::StrCat("netns-", job, index, "-", ++logs_started_, ".log")));
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return nullptr;
    procs_.push_back(*std::move(p));
    return procs_.back().get();
  }

  ::testing::AssertionResult ExitsZero(ChildProcess* p, absl::Duration timeout) {
    std::optional<int> status = p->WaitForExit(timeout);
    if (!status.has_value()) return ::testing::AssertionFailure() << "still running:\n" << p->Output();
    if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      return ::testing::AssertionFailure() << "status " << *status << ":\n" << p->Output();
    }
    return ::testing::AssertionSuccess();
  }

  std::unique_ptr<NetnsHosts> hosts_;
  std::string cluster_;
  std::vector<std::unique_ptr<ChildProcess>> procs_;  // killed on destruction
  static inline int logs_started_ = 0;  // a log file per process, across tests
};

TEST_F(NetnsClusterTest, AJobOfThreeHostsTrainsOverTls) {
  const std::vector<std::string> flags = TrainFlags(300);
  ASSERT_NE(Start("ps", 0, 0, flags), nullptr);
  ASSERT_NE(Start("worker", 1, 2, flags), nullptr);
  ChildProcess* chief = Start("worker", 0, 1, flags);
  ASSERT_NE(chief, nullptr);
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(90)));
  EXPECT_TRUE(absl::StrContains(chief->Output(), "final: loss=")) << chief->Output();
  EXPECT_TRUE(absl::StrContains(procs_[0]->Output(), hosts_->address(0))) << procs_[0]->Output();
}

// TLS names tasks, not addresses: a chief told that the ps is at worker 1's
// real address reaches a task of the job there, and refuses it by name.
TEST_F(NetnsClusterTest, ATaskAtAnotherTasksAddressIsRefusedByName) {
  ASSERT_NE(Start("worker", 1, 2, TrainFlags(100)), nullptr);
  // A valid spec, but wrong: the ps "is" where worker 1 listens, and worker
  // 1 somewhere else.
  const std::string wrong = absl::StrCat(
      "{\"ps\": [\"", hosts_->address(2), ":", kPort, "\"], \"worker\": [\"", hosts_->address(1),
      ":", kPort, "\", \"", hosts_->address(2), ":", kPort + 1, "\"]}");
  ChildProcess* chief = Start("worker", 0, 1, TrainFlags(100), wrong);
  ASSERT_NE(chief, nullptr);
  std::optional<int> status = chief->WaitForExit(absl::Seconds(60));
  ASSERT_TRUE(status.has_value()) << chief->Output();
  EXPECT_FALSE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << chief->Output();
  EXPECT_TRUE(absl::StrContains(chief->Output(),
                                "the peer is '/job:worker/replica:0/task:1', not "
                                "'/job:ps/replica:0/task:0'"))
      << chief->Output();
}

// Plaintext is for loopback: a task whose cluster has real addresses
// refuses --insecure (the flag, and SLUICE_INSECURE), naming the address.
TEST_F(NetnsClusterTest, InsecureIsRefusedAcrossHosts) {
  for (const std::vector<std::string>& how :
       {std::vector<std::string>{"--insecure"}, std::vector<std::string>{}}) {
    std::vector<std::string> argv = {RunfilePath("tools/server"),
                                     absl::StrCat("--cluster=ps=", hosts_->address(0), ":", kPort,
                                                  ",worker=", hosts_->address(1), ":", kPort),
                                     "--job=ps", "--task=0"};
    argv.insert(argv.end(), how.begin(), how.end());
    absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
        hosts_->Wrap(0, argv), {how.empty() ? "SLUICE_INSECURE=1" : "SLUICE_INSECURE=", "SLUICE_TLS_DIR="},
        TestTmpPath(absl::StrCat("netns-insecure-", how.size(), ".log")));
    ASSERT_TRUE(p.ok()) << p.status();
    std::optional<int> status = (*p)->WaitForExit(absl::Seconds(10));
    ASSERT_TRUE(status.has_value()) << (*p)->Output();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << (*p)->Output();
    EXPECT_TRUE(absl::StrContains((*p)->Output(), "10.77.")) << (*p)->Output();
    EXPECT_FALSE(absl::StrContains((*p)->Output(), "listening on")) << (*p)->Output();
  }
}

// The ps's link goes down for two seconds mid-training and comes back: TCP
// holds the connections, the calls in flight finish late, and training
// goes on to its last step.
TEST_F(NetnsClusterTest, AJobSurvivesALinkGoingDownAndComingBack) {
  const std::vector<std::string> flags = TrainFlags(1500);
  ASSERT_NE(Start("ps", 0, 0, flags), nullptr);
  ASSERT_NE(Start("worker", 1, 2, flags), nullptr);
  ChildProcess* chief = Start("worker", 0, 1, flags);
  ASSERT_NE(chief, nullptr);
  ASSERT_TRUE(WaitForStep(chief, 200, absl::Seconds(60))) << chief->Output();
  ASSERT_TRUE(hosts_->SetLinkUp(0, false).ok());
  absl::SleepFor(absl::Seconds(2));
  const size_t during = Steps(chief->Output()).size();
  ASSERT_TRUE(hosts_->SetLinkUp(0, true).ok());
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(120)));
  const std::vector<int64_t> steps = Steps(chief->Output());
  EXPECT_GT(steps.size(), during + 2) << chief->Output();
  EXPECT_TRUE(absl::StrContains(chief->Output(), "final: loss=")) << chief->Output();
}

// Worker 1's host vanishes (its link deleted, its process gone): the
// asynchronous job goes on with the chief alone and finishes.
TEST_F(NetnsClusterTest, AJobSurvivesAWorkersHostDisappearing) {
  const std::vector<std::string> flags = TrainFlags(1000);
  ASSERT_NE(Start("ps", 0, 0, flags), nullptr);
  ChildProcess* worker1 = Start("worker", 1, 2, flags);
  ASSERT_NE(worker1, nullptr);
  ChildProcess* chief = Start("worker", 0, 1, flags);
  ASSERT_NE(chief, nullptr);
  ASSERT_TRUE(WaitForStep(chief, 200, absl::Seconds(60))) << chief->Output();
  ASSERT_TRUE(hosts_->RemoveHost(2).ok());
  worker1->Kill();
  ASSERT_TRUE(ExitsZero(chief, absl::Seconds(120)));
  EXPECT_TRUE(absl::StrContains(chief->Output(), "final: loss=")) << chief->Output();
}

}  // namespace
}  // namespace sluice
