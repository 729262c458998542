// The wide & deep example (examples/wide_deep.cc) as a user runs it: 2 ps +
// 2 workers through the launcher on the default click logs (200,000
// examples) and 2^16-row tables, synchronous and asynchronous, each to
// within 0.01 of the planted model's test AUC; and a ps memory budget that holds each table's half but not the
// whole table: the unpartitioned model is refused with a clear error, the
// partitioned one trains.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

class WideDeepTest : public testing::Test {
 protected:
  // Runs the launcher with `launch_flags`, then the example with the shared
  // small-model flags and `flags`; its whole output once it exits.
  static std::string Launch(const std::vector<std::string>& launch_flags,
                            const std::vector<std::string>& flags, const std::string& log,
                            int* exit_status) {
    std::vector<std::string> argv = {RunfilePath("tools/launch")};
    argv.insert(argv.end(), launch_flags.begin(), launch_flags.end());
    argv.push_back("--");
    argv.push_back(RunfilePath("examples/wide_deep"));
    for (const char* f :
         {"--buckets_log2=16", "--dim=8", "--log_every=200", "--eval_every_s=1000"}) {
      argv.push_back(f);
    }
    argv.push_back("--data_dir=" + TestTmpPath("click_logs"));
    argv.insert(argv.end(), flags.begin(), flags.end());
    absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
        argv, {"BUILD_WORKING_DIRECTORY=", "SLUICE_CONFIG=", "SLUICE_SWEEP_DIR="},
        TestTmpPath(log));
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return "";
    std::optional<int> status = (*p)->WaitForExit(absl::Seconds(240));
    EXPECT_TRUE(status.has_value()) << (*p)->Output();
    *exit_status = status.has_value() && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    return (*p)->Output();
  }

  // "final: test AUC a ..." and "planted optimum: test AUC b (gap g)".
  static void ExpectNearTheOptimum(const std::string& out) {
    const size_t final_at = out.rfind("final: test AUC ");
    const size_t planted_at = out.rfind("planted optimum: test AUC ");
    ASSERT_NE(final_at, std::string::npos) << out;
    ASSERT_NE(planted_at, std::string::npos) << out;
    double auc = 0, planted = 0;
    ASSERT_EQ(std::sscanf(out.c_str() + final_at, "final: test AUC %lf", &auc), 1);
    ASSERT_EQ(std::sscanf(out.c_str() + planted_at, "planted optimum: test AUC %lf", &planted), 1);
    EXPECT_GT(planted, 0.7) << out;  // the planted model separates clicks
    EXPECT_GE(auc, planted - 0.01) << out;
    EXPECT_LE(auc, planted + 0.01) << out;
  }
};

TEST_F(WideDeepTest, SynchronousTrainingReachesThePlantedAuc) {
  int status = -1;
  const std::string out = Launch({"--ps=2", "--workers=2"}, {}, "sync.log", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "synchronous training, 2 workers")) << out;
  EXPECT_TRUE(absl::StrContains(out, "in 2 parts each")) << out;
  ExpectNearTheOptimum(out);
  EXPECT_TRUE(absl::StrContains(out, "[launch] ps:1 stopped")) << out;
}

TEST_F(WideDeepTest, AsynchronousTrainingReachesThePlantedAuc) {
  int status = -1;
  const std::string out = Launch({"--ps=2", "--workers=2"}, {"--async"}, "async.log", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "asynchronous training, 2 workers")) << out;
  ExpectNearTheOptimum(out);
}

// Tables of 2^18 x 16 floats: 16 MiB of embeddings and their 16 MiB
// Adagrad slot, 1 MiB of linear weights and 2 MiB of FTRL slots. A budget of
// 24 MiB per ps holds half of that, not all of it.
TEST_F(WideDeepTest, APsMemoryBudgetRefusesAWholeTableAndHoldsItsPart) {
  const std::vector<std::string> launch = {"--ps=2", "--workers=2", "--ps_memory_budget_mb=24"};
  const std::vector<std::string> big = {"--buckets_log2=18", "--dim=16", "--epochs=0.2"};
  int status = -1;
  std::vector<std::string> whole = big;
  whole.push_back("--partitions=1");
  const std::string refused = Launch(launch, whole, "budget_whole.log", &status);
  EXPECT_NE(status, 0) << refused;
  EXPECT_TRUE(absl::StrContains(refused, "dnn/embeddings/part_0")) << refused;
  EXPECT_TRUE(absl::StrContains(refused, "budget")) << refused;

  const std::string split = Launch(launch, big, "budget_split.log", &status);
  EXPECT_EQ(status, 0) << split;
  EXPECT_TRUE(absl::StrContains(split, "final: test AUC")) << split;
}

}  // namespace
}  // namespace sluice
