#include "training/checkpoint/checkpoint_state.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/atomic_file.h"

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

}  // namespace
}  // namespace sluice
