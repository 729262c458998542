#include "training/checkpoint/checkpoint_state.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "runtime/atomic_file.h"
#include "runtime/crc32c.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir =
      absl::StrCat(tmp ? tmp : "/tmp", "/checkpoint_state_test_", getpid(), "/", name);
  EXPECT_TRUE(CreateDirectories(dir).ok());
  return dir;
}

TEST(CheckpointStateTest, NotFoundWithoutAStateFile) {
  std::string dir = TestDir("empty");
  absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
  EXPECT_EQ(latest.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(latest.status().message(), dir));
  EXPECT_EQ(ListCheckpoints(dir).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteCheckpointState(dir, {}).ok());  // names none
  EXPECT_EQ(LatestCheckpoint(dir).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(ListCheckpoints(dir)->empty());
}

TEST(CheckpointStateTest, RoundTripRelativeAndAbsolute) {
  std::string dir = TestDir("round");
  CheckpointState st;
  st.kept = {"m-1", "/elsewhere/m-2", "m-3"};
  ASSERT_TRUE(WriteCheckpointState(dir, st).ok());
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/m-3");
  EXPECT_EQ(*ListCheckpoints(dir),
            (std::vector<std::string>{dir + "/m-1", "/elsewhere/m-2", dir + "/m-3"}));
  EXPECT_EQ(ReadCheckpointState(dir)->kept, st.kept);
  st.kept = {"bad\nname"};
  EXPECT_EQ(WriteCheckpointState(dir, st).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckpointStateTest, EveryCorruptionIsDataLoss) {
  std::string dir = TestDir("corrupt");
  CheckpointState st;
  st.kept = {"model.ckpt-10", "model.ckpt-20"};
  ASSERT_TRUE(WriteCheckpointState(dir, st).ok());
  const std::string path = dir + "/checkpoint";
  const std::string good = *ReadFileToString(path);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x02;
    ASSERT_TRUE(WriteFileAtomically(path, bad).ok());
    absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
    EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss) << "byte " << i;
  }
  for (size_t len : {size_t{0}, size_t{10}, good.size() - 1}) {
    ASSERT_TRUE(WriteFileAtomically(path, good.substr(0, len)).ok());
    absl::StatusOr<std::string> latest = LatestCheckpoint(dir);
    EXPECT_EQ(latest.status().code(), absl::StatusCode::kDataLoss) << "length " << len;
    EXPECT_TRUE(absl::StrContains(latest.status().message(), path));
  }
}

// The file is TensorFlow's text format, with the checksum as a comment.
TEST(CheckpointStateTest, WritesTensorFlowsTextFormat) {
  std::string dir = TestDir("tf_format");
  CheckpointState st;
  st.kept = {"model.ckpt-10", "model.ckpt-20"};
  st.timestamps = {100.5, 200.25};
  st.last_preserved_timestamp = 99;
  ASSERT_TRUE(WriteCheckpointState(dir, st).ok());
  const std::string text = *ReadFileToString(dir + "/checkpoint");
  EXPECT_TRUE(absl::StartsWith(text, "model_checkpoint_path: \"model.ckpt-20\"\n")) << text;
  EXPECT_TRUE(absl::StrContains(text,
                                "all_model_checkpoint_paths: \"model.ckpt-10\"\n"
                                "all_model_checkpoint_paths: \"model.ckpt-20\"\n"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "all_model_checkpoint_timestamps: 200.25\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "\n# crc32c ")) << text;
  absl::StatusOr<CheckpointState> back = ReadCheckpointState(dir);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kept, st.kept);
  EXPECT_EQ(back->timestamps, st.timestamps);
  EXPECT_EQ(back->last_preserved_timestamp, 99);
}

// What TensorFlow writes (no checksum), and Sluice's older format, read.
TEST(CheckpointStateTest, ReadsTensorFlowsFilesAndTheOlderFormat) {
  std::string dir = TestDir("tf_written");
  ASSERT_TRUE(WriteFileAtomically(dir + "/checkpoint",
                                  "model_checkpoint_path: \"model.ckpt-7\"\n"
                                  "all_model_checkpoint_paths: \"model.ckpt-3\"\n"
                                  "all_model_checkpoint_paths: \"model.ckpt-7\"\n"
                                  "all_model_checkpoint_timestamps: 1700000000.0\n"
                                  "all_model_checkpoint_timestamps: 1700000100.0\n"
                                  "last_preserved_timestamp: 1699999999.0\n")
                  .ok());
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/model.ckpt-7");
  EXPECT_EQ(*ListCheckpoints(dir),
            (std::vector<std::string>{dir + "/model.ckpt-3", dir + "/model.ckpt-7"}));
  // Only model_checkpoint_path (tf.train.update_checkpoint_state with no list).
  ASSERT_TRUE(
      WriteFileAtomically(dir + "/checkpoint", "model_checkpoint_path: \"/abs/m-1\"\n").ok());
  EXPECT_EQ(*LatestCheckpoint(dir), "/abs/m-1");
  ASSERT_TRUE(WriteFileAtomically(dir + "/checkpoint", "not a proto\n").ok());
  EXPECT_EQ(LatestCheckpoint(dir).status().code(), absl::StatusCode::kDataLoss);
  // Sluice's older format: a header, records, a checksum line.
  const std::string body = "sluice-checkpoint-state 1\nkept m-1\nkept m-2\nlatest m-2\n";
  ASSERT_TRUE(WriteFileAtomically(
                  dir + "/checkpoint",
                  absl::StrFormat("%scrc32c %08x\n", body, Crc32c(body.data(), body.size())))
                  .ok());
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/m-2");
  EXPECT_EQ(ListCheckpoints(dir)->size(), 2u);
}

}  // namespace
}  // namespace sluice
