// ShardedFilename, ShardedFilespec and MergeV2Checkpoints, alone and in the
// graph layout tf.train.Saver(sharded=True) builds under "save/" (TensorFlow's
// saver.py, _AddShardedSaveOpsForV2 and _AddShardedRestoreOps).
#include "ops/io/sharded_checkpoint_ops.h"

#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "builtin_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/io_ops.h"
#include "ops/state/state_ops.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::unique_ptr<Session> MakeSession(const Scope& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  EXPECT_TRUE(sess.ok()) << sess.status();
  return sess.ok() ? std::move(*sess) : nullptr;
}

std::string FetchString(Session* sess, const Output& out) {
  absl::StatusOr<std::vector<Tensor>> r = sess->Run({}, {out}, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0].scalar<std::string>() : "";
}

// TensorFlow's io_ops sharded-filename patterns (saver_test.py's file names,
// e.g. "save-00000-of-00002", and the "?????" spec).
TEST(ShardedCheckpointTest, FilenameAndSpec) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output name = ops::ShardedFilename(s, "/ckpt/model", 1, 2);
  Output big = ops::ShardedFilename(s, "m", 12, 123456);
  Output spec = ops::ShardedFilespec(s, "/ckpt/model", 2);
  EXPECT_EQ(name.shape(), TensorShape());
  std::unique_ptr<Session> sess = MakeSession(s);
  EXPECT_EQ(FetchString(sess.get(), name), "/ckpt/model-00001-of-00002");
  EXPECT_EQ(FetchString(sess.get(), big), "m-00012-of-123456");
  EXPECT_EQ(FetchString(sess.get(), spec),
            "/ckpt/model-"
            "?????"
            "-of-00002");
}

TEST(ShardedCheckpointTest, NonScalarBasenameIsInvalidArgument) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  ops::ShardedFilename(s, {"a", "b"}, 0, 2);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("basename must be a scalar"));
}

// The nodes tf.train.Saver(sharded=True) writes for two variables on two
// shards, by their TensorFlow names: save then restore.
TEST(ShardedCheckpointTest, SaverShardedLayoutSavesAndRestores) {
  Scope root = Scope::NewRootScope(BuiltinOps());
  ops::VariableAndInit v0 = ops::VariableWithInit(root.WithOpName("v0"), {1.0f, 2.0f});
  ops::VariableAndInit v1 = ops::VariableWithInit(root.WithOpName("v1"), {10.0, 20.0, 30.0});
  Scope save = root.NewSubScope("save");
  Output filename = ops::PlaceholderWithDefault(save.WithOpName("Const"), "model", TensorShape());
  Output tmp =
      ops::StringJoin(save.WithOpName("StringJoin"), {filename, Input("_temp_0123abcd/part")});
  Output num_shards = ops::Const(save.WithOpName("num_shards"), 2);
  std::vector<Output> deps;
  std::vector<Node*> saves;
  const std::vector<std::pair<const char*, Output>> shards = {{"v0", v0.var}, {"v1", v1.var}};
  for (int i = 0; i < 2; ++i) {
    const std::string suffix = i == 0 ? "" : absl::StrCat("_", i);
    Output f =
        ops::ShardedFilename(save.WithOpName("ShardedFilename" + suffix), tmp, i, num_shards);
    Node* sv = ops::SaveV2(save.WithOpName("SaveV2" + suffix), f, {shards[i].first}, {""},
                           {shards[i].second});
    saves.push_back(sv);
    deps.push_back(ops::Identity(save.WithOpName("control_dependency" + suffix)
                                     .WithControlDependencies(std::vector<Node*>{sv}),
                                 f));
  }
  Output prefixes = ops::Pack(save.WithOpName("MergeV2Checkpoints/checkpoint_prefixes"),
                              absl::Span<const Output>(deps));
  Node* merge = ops::MergeV2Checkpoints(save.WithOpName("MergeV2Checkpoints"), prefixes, filename);
  Output save_id = ops::Identity(
      save.WithOpName("Identity").WithControlDependencies(std::vector<Node*>{merge}), filename);
  std::vector<Node*> restores;
  for (int i = 0; i < 2; ++i) {
    const std::string suffix = i == 0 ? "" : absl::StrCat("_", i);
    const DataType dtype = i == 0 ? DT_FLOAT : DT_DOUBLE;
    std::vector<Output> r = ops::RestoreV2(save.WithOpName("RestoreV2" + suffix), filename,
                                           {shards[i].first}, {""}, {dtype});
    Output assign = ops::Assign(save.WithOpName("Assign" + suffix), shards[i].second, r[0]);
    restores.push_back(ops::NoOp(save.WithOpName("restore_shard" + suffix)
                                     .WithControlDependencies(std::vector<Output>{assign})));
  }
  Node* restore_all = ops::NoOp(save.WithOpName("restore_all").WithControlDependencies(restores));
  Output bump0 = ops::AssignAdd(root, v0.var, {100.0f, 100.0f});
  Output bump1 = ops::AssignAdd(root, v1.var, {100.0, 100.0, 100.0});

  std::unique_ptr<Session> sess = MakeSession(root);
  ASSERT_TRUE(sess->Run({}, {}, std::vector<Node*>{v0.initializer, v1.initializer}).ok());
  const std::string dir = TestDir("sharded_saver");
  const std::string prefix = dir + "/model.ckpt";
  // Run the save as TensorFlow's Saver.save does: fetch save/Identity with
  // the prefix fed to save/Const.
  absl::StatusOr<std::vector<Tensor>> saved =
      sess->Run({{"save/Const", Tensor::Scalar<std::string>(prefix)}}, {"save/Identity"}, {});
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ((*saved)[0].scalar<std::string>(), prefix);
  EXPECT_EQ(save_id.node->name(), "save/Identity");
  // One merged checkpoint at the prefix (an index, a data file per shard);
  // the shards and their _temp directory are gone.
  EXPECT_TRUE(Exists(prefix + ".index"));
  EXPECT_TRUE(Exists(prefix + ".data-00000-of-00002"));
  EXPECT_TRUE(Exists(prefix + ".data-00001-of-00002"));
  EXPECT_FALSE(Exists(prefix + "_temp_0123abcd/part-00000-of-00002.index"));
  EXPECT_FALSE(Exists(prefix + "_temp_0123abcd"));

  ASSERT_TRUE(sess->Run({}, {}, std::vector<Node*>{bump0.node, bump1.node}).ok());
  ASSERT_TRUE(
      sess->Run({{"save/Const", Tensor::Scalar<std::string>(prefix)}}, {}, {"save/restore_all"})
          .ok());
  absl::StatusOr<std::vector<Tensor>> values = sess->Run({}, {v0.var, v1.var}, {});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ((*values)[0].flat<float>()[1], 2.0f);
  EXPECT_EQ((*values)[1].flat<double>()[2], 30.0);
  (void)restore_all;
  (void)saves;
}

// Shard files written by SaveV2 directly, merged by hand.
class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  // Writes tensors `names` (float scalars 1, 2, ...) at `path` with SaveV2.
  void WriteShard(const std::string& path, std::vector<std::string> names) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    std::vector<Output> values;
    for (size_t i = 0; i < names.size(); ++i) {
      values.push_back(ops::Const(s, static_cast<float>(i + 1)));
    }
    std::vector<std::string> slices(names.size());
    Node* save = ops::SaveV2(s, ops::Const(s, Input(path)),
                             ops::Const(s, Tensor::FromVector<std::string>(names)),
                             ops::Const(s, Tensor::FromVector<std::string>(slices)), values);
    std::unique_ptr<Session> sess = MakeSession(s);
    ASSERT_TRUE(sess->Run({}, {}, {save}).ok());
  }
  absl::Status Merge(std::vector<std::string> sources, const std::string& dest,
                     ops::MergeV2CheckpointsAttrs attrs = {}) {
    Scope s = Scope::NewRootScope(BuiltinOps());
    Node* merge =
        ops::MergeV2Checkpoints(s, ops::Const(s, Tensor::FromVector<std::string>(sources)),
                                ops::Const(s, Input(dest)), attrs);
    std::unique_ptr<Session> sess = MakeSession(s);
    return sess->Run({}, {}, {merge}).status();
  }
  std::string dir_;
};

TEST_F(MergeTest, DuplicateTensorIsInvalidArgumentAndKeepsShards) {
  WriteShard(dir_ + "/a", {"x", "y"});
  WriteShard(dir_ + "/b", {"y"});
  absl::Status st = Merge({dir_ + "/a", dir_ + "/b"}, dir_ + "/out");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("tensor 'y' is in both"));
  EXPECT_TRUE(Exists(dir_ + "/a"
                            ".index"));
  EXPECT_FALSE(Exists(dir_ + "/out"
                             ".index"));
}

TEST_F(MergeTest, MissingShard) {
  WriteShard(dir_ + "/a", {"x"});
  absl::Status st = Merge({dir_ + "/a", dir_ + "/missing"}, dir_ + "/out");
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_THAT(st.message(), HasSubstr("missing"));
  EXPECT_TRUE(Exists(dir_ + "/a"
                            ".index"));
  // allow_missing_files skips it.
  st = Merge({dir_ + "/a", dir_ + "/missing"}, dir_ + "/out", {.allow_missing_files = true});
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(Exists(dir_ + "/out"
                            ".index"));
  EXPECT_FALSE(Exists(dir_ + "/a"
                             ".index"));
}

TEST_F(MergeTest, KeepsNonEmptyOldDirectory) {
  WriteShard(dir_ + "/tmp/a", {"x"});
  WriteShard(dir_ + "/tmp/other", {"z"});
  ASSERT_TRUE(Merge({dir_ + "/tmp/a"}, dir_ + "/out").ok());
  EXPECT_FALSE(Exists(dir_ + "/tmp/a"
                             ".index"));
  EXPECT_TRUE(Exists(dir_ + "/tmp/other"
                            ".index"));
}

}  // namespace
}  // namespace sluice
