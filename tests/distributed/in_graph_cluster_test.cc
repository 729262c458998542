// examples/in_graph_replication through the launcher (//tools:launch), as a
// user runs it: one client (the chief) and one graph, the variables on the
// /job:ps tasks, one tower per /job:worker task, every task a real process
// on 127.0.0.1 with mutual TLS. The cluster run equals the same towers run
// on local virtual CPUs (both are a step on the whole batch), and the towers
// really run on their tasks.
#include <sys/wait.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"
#include "runtime/tensor.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

const std::vector<std::string> kNpyNames = {"layer1_weights.npy", "layer1_bias.npy",
                                            "layer2_weights.npy", "layer2_bias.npy"};

// --batch=48 divides between 2 and 3 towers.
std::vector<std::string> ExampleFlags(const std::string& dump) {
  return {"--steps=30", "--hidden=32", "--batch=48", "--examples=1024", "--optimizer=momentum",
          "--log_every=10", "--dump_weights=" + dump};
}

// Runs argv to completion (bounded); its output, or a failure naming why.
std::string RunToEnd(std::vector<std::string> argv, const std::string& log) {
  auto p = ChildProcess::Start(std::move(argv), {}, TestTmpPath(log));
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return "";
  std::optional<int> status = (*p)->WaitForExit(absl::Seconds(90));
  EXPECT_TRUE(status.has_value()) << "still running after 90 s:\n" << (*p)->Output();
  if (status.has_value()) {
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "status " << *status << ":\n" << (*p)->Output();
  }
  return (*p)->Output();
}

std::string Launch(int ps, int workers, const std::string& dump) {
  std::vector<std::string> argv = {RunfilePath("tools/launch"), absl::StrCat("--ps=", ps),
                                   absl::StrCat("--workers=", workers), "--grace_period_s=2",
                                   "--", RunfilePath("examples/in_graph_replication")};
  for (std::string& f : ExampleFlags(dump)) argv.push_back(std::move(f));
  return RunToEnd(std::move(argv), absl::StrCat("launch-", ps, "-", workers, ".log"));
}

std::string NewDir(const std::string& name) {
  std::string dir = TestTmpPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// "placement: DEVICE: N nodes, M MatMul, V variables" for `device`: {M, V}.
std::optional<std::pair<int, int>> Placement(const std::string& output, const std::string& device) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    size_t at = line.find(absl::StrCat("placement: ", device, ": "));
    if (at == absl::string_view::npos) continue;
    std::vector<std::string> words = absl::StrSplit(line.substr(at), ' ');
    int matmuls = 0, variables = 0;
    if (words.size() >= 8 && absl::SimpleAtoi(words[4], &matmuls) &&
        absl::SimpleAtoi(words[6], &variables)) {
      return std::make_pair(matmuls, variables);
    }
  }
  return std::nullopt;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  auto fa = a.flat<float>(), fb = b.flat<float>();
  EXPECT_EQ(fa.size(), fb.size());
  float d = 0;
  for (size_t i = 0; i < fa.size() && i < fb.size(); ++i) d = std::max(d, std::abs(fa[i] - fb[i]));
  return d;
}

TEST(InGraphClusterTest, TowersOnWorkerTasksEqualTheLocalTowers) {
  const std::string local_dump = NewDir("local"), cluster_dump = NewDir("cluster");
  std::vector<std::string> local = {RunfilePath("examples/in_graph_replication"), "--towers=2"};
  for (std::string& f : ExampleFlags(local_dump)) local.push_back(std::move(f));
  const std::string local_out = RunToEnd(std::move(local), "local.log");
  const std::string out = Launch(1, 2, cluster_dump);
  ASSERT_TRUE(absl::StrContains(out, "[worker:0] final: loss=")) << out;

  // The towers ran on the workers, the variables (and no MatMul) on the ps.
  auto ps = Placement(out, "/job:ps/replica:0/task:0/device:CPU:0");
  auto w0 = Placement(out, "/job:worker/replica:0/task:0/device:CPU:0");
  auto w1 = Placement(out, "/job:worker/replica:0/task:1/device:CPU:0");
  ASSERT_TRUE(ps && w0 && w1) << out;
  EXPECT_EQ(ps->first, 0);
  EXPECT_EQ(ps->second, 8);  // 4 variables and their momentum slots
  EXPECT_EQ(w0->first, 5);   // 2 forward, 3 backward MatMuls per tower
  EXPECT_EQ(w1->first, 5);
  EXPECT_EQ(w1->second, 0);

  for (const std::string& name : kNpyNames) {
    absl::StatusOr<Tensor> want = ReadNpyFile(local_dump + "/" + name);
    absl::StatusOr<Tensor> got = ReadNpyFile(cluster_dump + "/" + name);
    ASSERT_TRUE(want.ok()) << want.status() << "\n" << local_out;
    ASSERT_TRUE(got.ok()) << got.status() << "\n" << out;
    EXPECT_LT(MaxAbsDiff(*got, *want), 1e-5f) << name;
  }
}

TEST(InGraphClusterTest, VariablesSpreadOverTwoParameterServers) {
  const std::string out = Launch(2, 3, NewDir("two_ps"));
  ASSERT_TRUE(absl::StrContains(out, "[worker:0] final: loss=")) << out;
  for (int i = 0; i < 2; ++i) {
    auto ps = Placement(out, absl::StrCat("/job:ps/replica:0/task:", i, "/device:CPU:0"));
    ASSERT_TRUE(ps) << out;
    EXPECT_EQ(ps->second, 4) << "ps " << i << ": 2 variables and their slots";
  }
  for (int k = 0; k < 3; ++k) {
    auto w = Placement(out, absl::StrCat("/job:worker/replica:0/task:", k, "/device:CPU:0"));
    ASSERT_TRUE(w) << out;
    EXPECT_EQ(w->first, 5) << "worker " << k;
  }
}

}  // namespace
}  // namespace sluice
