// The main job's programs as a user runs them, on a small stand-in for
// Fashion-MNIST written as IDX files (the CNN learns it within seconds):
// one process, 1 ps + 2 workers through the launcher, all-reduce over two
// workers; the progress lines, the final test accuracy, the launcher
// reporting the stopped tasks as stopped, no sweep lines; the exported
// SavedModel classifying the test set through the runner as the final
// evaluation did; and the error line for missing data.
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/io/idx_file.h"
#include "runtime/npy.h"
#include "tests/distributed/child_process.h"

namespace sluice {
namespace {

// n images of 28x28: class c is a bright 6x6 block at one of ten places,
// over noise. Written as plain IDX under the names Debian's package uses.
void WriteSplit(const std::string& dir, const std::string& split, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Tensor images(DT_UINT8, TensorShape({n, 28, 28}));
  Tensor labels(DT_UINT8, TensorShape({n}));
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>(rng() % 10);
    labels.flat<uint8_t>()[i] = static_cast<uint8_t>(c);
    uint8_t* img = images.flat<uint8_t>().data() + i * 784;
    for (int p = 0; p < 784; ++p) img[p] = static_cast<uint8_t>(rng() % 60);
    const int top = 2 + (c / 5) * 13, left = 1 + (c % 5) * 5;
    for (int y = top; y < top + 6; ++y) {
      for (int x = left; x < left + 6 && x < 28; ++x) img[y * 28 + x] = 220;
    }
  }
  ASSERT_TRUE(WriteIdxFile(images, absl::StrCat(dir, "/", split, "-images-idx3-ubyte.gz")).ok());
  ASSERT_TRUE(WriteIdxFile(labels, absl::StrCat(dir, "/", split, "-labels-idx1-ubyte.gz")).ok());
}

class FashionMnistTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    source_ = new std::string(TestTmpPath("fmnist-source"));
    std::filesystem::create_directories(*source_);
    WriteSplit(*source_, "train", 2048, 1);
    WriteSplit(*source_, "t10k", 500, 2);
  }

  // Flags every run shares: the stand-in data, a fresh records directory.
  static std::vector<std::string> DataFlags(const std::string& name) {
    const std::string records = TestTmpPath(absl::StrCat("records-", name));
    std::filesystem::remove_all(records);
    return {"--source_dir=" + *source_, "--data_dir=" + records, "--log_every=10",
            "--eval_every_s=2", "--batch=64"};
  }

  static std::unique_ptr<ChildProcess> Run(std::vector<std::string> argv, const std::string& log) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> p = ChildProcess::Start(
        argv, {"BUILD_WORKING_DIRECTORY=", "SLUICE_CONFIG=", "SLUICE_SWEEP_DIR="},
        TestTmpPath(log));
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *std::move(p) : nullptr;
  }

  static double FinalAccuracy(const std::string& out) {
    const size_t at = out.rfind("final: test accuracy ");
    if (at == std::string::npos) return -1;
    double a = -1;
    std::sscanf(out.c_str() + at, "final: test accuracy %lf", &a);
    return a;
  }

  // The SavedModel the run exported, classified by the runner: the share
  // of the test set it gets right.
  static double ServedAccuracy(const std::string& out, const std::string& export_dir) {
    const std::string marker = "exported the model as a SavedModel: ";
    const size_t at = out.find(marker);
    if (at == std::string::npos) return -1;
    const size_t end = out.find(' ', at + marker.size());
    const std::string model = out.substr(at + marker.size(), end - at - marker.size());
    const std::string classified = TestTmpPath("classified");
    std::filesystem::remove_all(classified);
    std::unique_ptr<ChildProcess> runner =
        Run({RunfilePath("tools/runner"), "--saved_model=" + model,
             "--input=images=" + export_dir + "/test_images.npy", "--out_dir=" + classified},
            "runner.log");
    if (runner == nullptr) return -1;
    std::optional<int> status = runner->WaitForExit(absl::Seconds(60));
    if (!status.has_value() || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
      ADD_FAILURE() << runner->Output();
      return -1;
    }
    absl::StatusOr<Tensor> classes = ReadNpyFile(classified + "/classes.npy");
    absl::StatusOr<Tensor> labels = ReadNpyFile(export_dir + "/test_labels.npy");
    if (!classes.ok() || !labels.ok() || classes->NumElements() != labels->NumElements()) {
      ADD_FAILURE() << "no classes or labels";
      return -1;
    }
    int64_t right = 0;
    for (int64_t i = 0; i < labels->NumElements(); ++i) {
      right += classes->flat<int64_t>()[i] == labels->flat<int64_t>()[i];
    }
    return static_cast<double>(right) / static_cast<double>(labels->NumElements());
  }

  static std::string* source_;
};

std::string* FashionMnistTest::source_ = nullptr;

TEST_F(FashionMnistTest, OneProcessTrainsFromRecordsAndReportsTestAccuracy) {
  const std::string export_dir = TestTmpPath("model-local");
  std::vector<std::string> argv = {RunfilePath("examples/fashion_mnist_cnn"), "--epochs=4",
                                   "--export_dir=" + export_dir};
  for (const std::string& f : DataFlags("local")) argv.push_back(f);
  std::unique_ptr<ChildProcess> p = Run(argv, "local.log");
  ASSERT_NE(p, nullptr);
  std::optional<int> status = p->WaitForExit(absl::Seconds(240));
  ASSERT_TRUE(status.has_value()) << p->Output();
  const std::string out = p->Output();
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "examples/s  input wait")) << out;
  EXPECT_TRUE(absl::StrContains(out, "test accuracy")) << out;
  EXPECT_GE(FinalAccuracy(out), 0.9) << out;
  EXPECT_FALSE(absl::StrContains(out, "SLUICE_SWEEP")) << out;
  // The exported SavedModel classifies the test set as the final evaluation did.
  EXPECT_NEAR(ServedAccuracy(out, export_dir), FinalAccuracy(out), 1e-4) << out;
}

TEST_F(FashionMnistTest, OnePsTwoWorkersThroughTheLauncher) {
  const std::string export_dir = TestTmpPath("model-ps");
  std::vector<std::string> argv = {RunfilePath("tools/launch"),
                                   "--ps=1",
                                   "--workers=2",
                                   "--",
                                   RunfilePath("examples/fashion_mnist_cnn"),
                                   "--epochs=4",
                                   "--export_dir=" + export_dir};
  for (const std::string& f : DataFlags("ps")) argv.push_back(f);
  std::unique_ptr<ChildProcess> p = Run(argv, "ps.log");
  ASSERT_NE(p, nullptr);
  std::optional<int> status = p->WaitForExit(absl::Seconds(300));
  ASSERT_TRUE(status.has_value()) << p->Output();
  const std::string out = p->Output();
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "batch 32 of 64; 2 workers train synchronously")) << out;
  // 4 epochs of 2048 examples at 64 per global step.
  EXPECT_TRUE(absl::StrContains(out, "(4.0 epochs, 128 global steps)")) << out;
  EXPECT_GE(FinalAccuracy(out), 0.9) << out;
  EXPECT_TRUE(absl::StrContains(out, "[launch] ps:0 stopped")) << out;
  EXPECT_NEAR(ServedAccuracy(out, export_dir), FinalAccuracy(out), 1e-4) << out;
  EXPECT_FALSE(absl::StrContains(out, "killed by signal")) << out;
  EXPECT_FALSE(absl::StrContains(out, "SLUICE_SWEEP")) << out;
}

TEST_F(FashionMnistTest, AllReduceOverTwoWorkers) {
  std::vector<std::string> argv = {RunfilePath("tools/launch"),
                                   "--workers=2",
                                   "--",
                                   RunfilePath("examples/fashion_mnist_allreduce"),
                                   "--epochs=4",
                                   "--checkpoint_dir=" + TestTmpPath("allreduce-ckpt")};
  for (const std::string& f : DataFlags("allreduce")) argv.push_back(f);
  std::unique_ptr<ChildProcess> p = Run(argv, "allreduce.log");
  ASSERT_NE(p, nullptr);
  std::optional<int> status = p->WaitForExit(absl::Seconds(300));
  ASSERT_TRUE(status.has_value()) << p->Output();
  const std::string out = p->Output();
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << out;
  EXPECT_GE(FinalAccuracy(out), 0.9) << out;
}

TEST_F(FashionMnistTest, MissingDataIsOneClearLine) {
  std::unique_ptr<ChildProcess> p =
      Run({RunfilePath("examples/fashion_mnist_cnn"), "--source_dir=/nonexistent/fmnist",
           "--data_dir=" + TestTmpPath("records-missing")},
          "missing.log");
  ASSERT_NE(p, nullptr);
  std::optional<int> status = p->WaitForExit(absl::Seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << p->Output();
  EXPECT_TRUE(absl::StrContains(p->Output(),
                                "fashion_mnist_cnn: error: no Fashion-MNIST in "
                                "/nonexistent/fmnist"))
      << p->Output();
  EXPECT_TRUE(absl::StrContains(p->Output(), "dataset-fashion-mnist")) << p->Output();
}

}  // namespace
}  // namespace sluice
