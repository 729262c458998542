#include "tests/distributed/multi_worker_testutil.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "distributed/cluster/launcher.h"

namespace sluice {

MultiWorkerCluster::MultiWorkerCluster(int workers) {
  absl::StatusOr<ClusterSpec> spec = LocalCluster(0, workers);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (spec.ok()) spec_ = *spec;
}

ChildProcess* MultiWorkerCluster::Start(int task, std::vector<std::string> flags) {
  if (auto it = procs_.find(task); it != procs_.end()) it->second->Kill();
  TaskConfig config{spec_, "worker", task};
  std::vector<std::string> env = {"SLUICE_CONFIG=" + TaskConfigToJson(config)};
  flags.insert(flags.begin(), RunfilePath("examples/multi_worker_mlp"));
  static int runs = 0;  // log names unique across clusters of one test process
  auto p = ChildProcess::Start(
      flags, env, TestTmpPath(absl::StrCat("worker", task, "-", ++runs, "-", getpid(), ".log")));
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  ChildProcess* child = p->get();
  procs_[task] = *std::move(p);
  return child;
}

ChildProcess* MultiWorkerCluster::process(int task) {
  auto it = procs_.find(task);
  return it == procs_.end() ? nullptr : it->second.get();
}

std::string MultiWorkerCluster::AllOutputs() const {
  std::string all;
  for (const auto& [task, p] : procs_) {
    absl::StrAppend(&all, "---- worker ", task, " ----\n", p->Output(), "\n");
  }
  return all;
}

::testing::AssertionResult ExitsZero(ChildProcess* p, absl::Duration timeout) {
  if (p == nullptr) return ::testing::AssertionFailure() << "no process";
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

bool ParseFinal(const std::string& out, float* loss, float* accuracy) {
  size_t at = out.rfind("final: loss=");
  return at != std::string::npos &&
         std::sscanf(out.c_str() + at, "final: loss=%f accuracy=%f", loss, accuracy) == 2;
}

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

bool WaitForStep(ChildProcess* p, int64_t step, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::vector<int64_t> steps = LoggedSteps(p->Output());
    if (!steps.empty() && steps.back() >= step) return true;
    if (absl::Now() >= deadline || !p->Running()) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

std::vector<std::string> LinesWith(const std::string& out, const std::string& needle) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StrContains(line, needle)) lines.emplace_back(line);
  }
  return lines;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = TestTmpPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace sluice
