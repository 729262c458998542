// The example programs as a user runs them: the MLP's progress and final
// lines, its saved graph, and one clear error line for each bad flag.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

Result RunProgram(const std::string& name, const std::string& args) {
  const std::string cmd = absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                                       "/examples/", name, " ", args, " 2>&1");
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(ExamplesTest, MlpPrintsProgressAndTheFinalLine) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  Result r = RunProgram("mlp", absl::StrCat("--steps=60 --log_every=20 --hidden=64 --examples=1024",
                                            " --save_graph=", dir, "/mlp.pbtxt"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "step 20: loss=")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "steps/s)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "saved the frozen graph")) << r.out;
  size_t final_at = r.out.rfind("final: loss=");
  ASSERT_NE(final_at, std::string::npos) << r.out;
  float loss = -1, accuracy = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str() + final_at, "final: loss=%f accuracy=%f", &loss, &accuracy), 2);
  EXPECT_GE(accuracy, 0.95f) << r.out;
  EXPECT_LT(loss, 0.5f);
  FILE* f = std::fopen((dir + "/mlp.pbtxt").c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
}

TEST(ExamplesTest, MlpBadFlagsGiveOneClearLine) {
  struct Case {
    const char* args;
    const char* needle;
  };
  for (const Case& c : {Case{"--hidden=12,x", "--hidden: bad layer size 'x'"},
                        Case{"--optimizer=rmsprop --steps=1", "unknown optimizer 'rmsprop'"},
                        Case{"--batch=0", "--batch > 0"},
                        Case{"--steps=1 --save_graph=/nonexistent/dir/g.pb", "/nonexistent/dir/g.pb"}}) {
    Result r = RunProgram("mlp", c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, "mlp: error: ")) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, c.needle)) << c.args << "\n" << r.out;
  }
}

TEST(ExamplesTest, InGraphReplicationTrainsTheMlpOnTwoTowers) {
  Result r = RunProgram("in_graph_replication",
                        "--towers=2 --steps=60 --log_every=20 --hidden=64 --examples=1024");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "over 2 towers")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "step 20: loss=")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "median step: ")) << r.out;
  size_t final_at = r.out.rfind("final: loss=");
  ASSERT_NE(final_at, std::string::npos) << r.out;
  float loss = -1, accuracy = -1;
  ASSERT_EQ(
      std::sscanf(r.out.c_str() + final_at, "final: loss=%f accuracy=%f", &loss, &accuracy), 2);
  EXPECT_GE(accuracy, 0.95f) << r.out;
  EXPECT_LT(loss, 0.5f);

  Result bad = RunProgram("in_graph_replication", "--towers=3 --batch=128");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_TRUE(absl::StrContains(bad.out, "in_graph_replication: error: --batch (128) must be a "
                                         "multiple of --towers (3)")) << bad.out;
}

TEST(ExamplesTest, LinearRegressionFindsTheLine) {
  Result r = RunProgram("linear_regression", "--steps=150 --log_every=50");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  float loss, w, b;
  size_t at = r.out.rfind("final: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "final: loss=%f w=%f b=%f", &loss, &w, &b), 3) << r.out;
  EXPECT_NEAR(w, 3.0f, 0.05f);
  EXPECT_NEAR(b, 2.0f, 0.05f);
}

TEST(ExamplesTest, ModelParallelMlpPutsLayersOnTwoDevices) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  Result r = RunProgram("model_parallel_mlp",
                        absl::StrCat("--steps=60 --log_every=20 --hidden=64 --examples=1024",
                                     " --micro_batches=2 --save_graph=", dir, "/placed.pbtxt"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "placement: layer1 784x64 on "
                                       "/job:localhost/replica:0/task:0/device:CPU:0 (")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "placement: layer2 64x10 on "
                                       "/job:localhost/replica:0/task:0/device:CPU:1 (")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "step 20: loss=")) << r.out;
  size_t final_at = r.out.rfind("final: loss=");
  ASSERT_NE(final_at, std::string::npos) << r.out;
  float loss = -1, accuracy = -1;
  ASSERT_EQ(
      std::sscanf(r.out.c_str() + final_at, "final: loss=%f accuracy=%f", &loss, &accuracy), 2);
  EXPECT_GE(accuracy, 0.95f) << r.out;
  EXPECT_LT(loss, 0.5f);
  FILE* f = std::fopen((dir + "/placed.pbtxt").c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string graph;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) graph.append(buf.data(), n);
  std::fclose(f);
  EXPECT_TRUE(absl::StrContains(graph, "device: \"/job:localhost/replica:0/task:0/device:CPU:1\""));

  Result bad = RunProgram("model_parallel_mlp", "--devices=CPU:0,GPU:7");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_TRUE(absl::StrContains(bad.out, "model_parallel_mlp: error: --devices: no device matches "
                                         "'/device:GPU:7'")) << bad.out;
}

}  // namespace
