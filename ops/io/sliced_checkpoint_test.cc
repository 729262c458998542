// Slices in checkpoints: SaveV2 / RestoreV2 shape_and_slices, a tensor saved
// in N slices restored whole or in M other slices (also across the shard
// files of Sluice's Saver layout), and the legacy SaveSlices / RestoreSlice.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/internal/checkpoint_shard.h"
#include "ops/io/internal/tensor_slice.h"
#include "ops/io/io_ops.h"
#include "ops/io/legacy_checkpoint_ops.h"
#include "runtime/atomic_file.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir =
      absl::StrCat(tmp ? tmp : "/tmp", "/sliced_checkpoint_test_", getpid(), "/", name);
  EXPECT_TRUE(CreateDirectories(dir).ok());
  return dir;
}

// The full tensor: [6, 2], element (r, c) = 10 r + c.
std::vector<float> Full() {
  std::vector<float> v;
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 2; ++c) v.push_back(10.0f * r + c);
  }
  return v;
}
Tensor Rows(int begin, int count) {
  std::vector<float> all = Full();
  return Tensor::FromVector<float>(
      std::vector<float>(all.begin() + begin * 2, all.begin() + (begin + count) * 2),
      TensorShape({count, 2}));
}
std::vector<float> Values(const Tensor& t) {
  absl::Span<const float> f = t.flat<float>();
  return std::vector<float>(f.begin(), f.end());
}

absl::Status RunTargets(const Scope& s, const std::vector<std::string>& targets) {
  if (!s.ok()) return s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!sess.ok()) return sess.status();
  return (*sess)->Run({}, {}, targets).status();
}

absl::StatusOr<std::vector<Tensor>> Fetch(const Scope& s, const std::vector<Output>& fetches) {
  if (!s.ok()) return s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!sess.ok()) return sess.status();
  return (*sess)->Run({}, fetches, {});
}

// Two parts of "emb" (rows 0-3 and 3-6) into `file` with SaveV2.
absl::Status SaveTwoParts(const std::string& file) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SaveV2(s.WithOpName("save"), file, {"emb", "emb"}, {"6 2 0,3:-", "6 2 3,3:-"},
              {ops::Const(s, Rows(0, 3)), ops::Const(s, Rows(3, 3))});
  return RunTargets(s, {"save"});
}

TEST(SlicedCheckpointTest, ShapeAndSliceStrings) {
  absl::StatusOr<internal::ShapeAndSlice> s = internal::ParseShapeAndSlice("10 4 2,5:-");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->SliceShape(), TensorShape({5, 4}));
  EXPECT_EQ(s->ToString(), "10 4 2,5:-");
  EXPECT_FALSE(s->IsFull());
  for (const char* bad : {"10 4", "10 4 2,5", "10 4 9,5:-", "10 4 x:-", "-1 4 -:-"}) {
    absl::StatusOr<internal::ShapeAndSlice> b = internal::ParseShapeAndSlice(bad);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(b.status().message(), bad)) << b.status();
  }
}

TEST(SlicedCheckpointTest, TwoSavedSlicesRestoreWholeOrAsThreeOthers) {
  const std::string file = TestDir("two") + "/ckpt";
  ASSERT_TRUE(SaveTwoParts(file).ok());
  Scope s = Scope::NewRootScope(BuiltinOps());
  std::vector<Output> r = ops::RestoreV2(s, file, {"emb", "emb", "emb", "emb"},
                                         {"", "6 2 0,2:-", "6 2 2,2:-", "6 2 4,2:0,1"},
                                         {DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_FLOAT});
  absl::StatusOr<std::vector<Tensor>> out = Fetch(s, r);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({6, 2}));
  EXPECT_EQ(Values((*out)[0]), Full());
  EXPECT_EQ(Values((*out)[1]), Values(Rows(0, 2)));
  EXPECT_EQ(Values((*out)[2]), Values(Rows(2, 2)));  // spans both saved slices
  EXPECT_EQ(Values((*out)[3]), (std::vector<float>{40, 50}));
}

// Sluice's older layout: each shard file of a Saver checkpoint held its
// own slices; a slice spanning two files is assembled from both.
TEST(SlicedCheckpointTest, SlicesInSiblingShardFilesOfTheOlderLayoutAreFound) {
  const std::string dir = TestDir("siblings");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  for (int k : {0, 1}) {
    absl::StatusOr<internal::ShapeAndSlice> spec =
        internal::ParseShapeAndSlice(k == 0 ? "6 2 0,3:-" : "6 2 3,3:-");
    ASSERT_TRUE(spec.ok());
    ASSERT_TRUE(
        internal::WriteCheckpointShard(absl::StrCat(dir, "/m-1.shard-", k, "-of-2"),
                                       {{internal::SliceEntryName("emb", *spec), Rows(3 * k, 3)}})
            .ok());
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  // Shard 0 holds rows 0-3 only; rows 2-5 need shard 1 too.
  std::vector<Output> r =
      ops::RestoreV2(s, dir + "/m-1.shard-0-of-2", {"emb"}, {"6 2 2,3:-"}, {DT_FLOAT});
  absl::StatusOr<std::vector<Tensor>> out = Fetch(s, r);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), Values(Rows(2, 3)));
}

TEST(SlicedCheckpointTest, UncoveredAndMismatchedSlicesAreClearErrors) {
  const std::string file = TestDir("errors") + "/ckpt";
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::SaveV2(s.WithOpName("save"), file, {"emb"}, {"6 2 0,3:-"}, {ops::Const(s, Rows(0, 3))});
    ASSERT_TRUE(RunTargets(s, {"save"}).ok());
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<Output> r = ops::RestoreV2(s, file, {"emb"}, {"6 2 2,3:-"}, {DT_FLOAT});
    absl::StatusOr<std::vector<Tensor>> out = Fetch(s, r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "cover 2 of the 6")) << out.status();
  }
  {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<Output> r = ops::RestoreV2(s, file, {"emb"}, {"7 2 0,3:-"}, {DT_FLOAT});
    absl::StatusOr<std::vector<Tensor>> out = Fetch(s, r);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  }
  {  // a value of the wrong shape for its slice
    Scope s = Scope::NewRootScope(BuiltinOps());
    ops::SaveV2(s.WithOpName("save"), file, {"emb"}, {"6 2 0,2:-"}, {ops::Const(s, Rows(0, 3))});
    absl::Status st = RunTargets(s, {"save"});
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "emb")) << st;
  }
}

// A legacy graph: SaveSlices writes one slice per file (a V1 sharded save),
// RestoreSlice finds a slice spanning both through the file pattern.
TEST(SlicedCheckpointTest, LegacySaveSlicesAndRestoreSliceRun) {
  const std::string dir = TestDir("legacy");
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::SaveSlices(s.WithOpName("save0"), dir + "/model-00000-of-00002", {"emb"}, {"6 2 0,3:-"},
                  {ops::Const(s, Rows(0, 3))});
  ops::SaveSlices(s.WithOpName("save1"), dir + "/model-00001-of-00002", {"emb"}, {"6 2 3,3:-"},
                  {ops::Const(s, Rows(3, 3))});
  ASSERT_TRUE(RunTargets(s, {"save0", "save1"}).ok());
  Scope r = Scope::NewRootScope(BuiltinOps());
  Output part = ops::RestoreSlice(r, dir + "/model-?????-of-00002", "emb", "6 2 1,4:-", DT_FLOAT);
  Output whole = ops::RestoreSlice(r, dir + "/model-?????-of-00002", "emb", "", DT_FLOAT);
  Output none = ops::RestoreSlice(r, dir + "/nothing-*", "emb", "", DT_FLOAT);
  absl::StatusOr<std::vector<Tensor>> out = Fetch(r, {part, whole});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), Values(Rows(1, 4)));
  EXPECT_EQ(Values((*out)[1]), Full());
  absl::StatusOr<std::vector<Tensor>> missing = Fetch(r, {none});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
}

}  // namespace
}  // namespace sluice
