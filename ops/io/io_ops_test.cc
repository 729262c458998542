#include "ops/io/io_ops.h"

#include <sys/wait.h>
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
#include "runtime/atomic_file.h"
#include "runtime/io/tensor_bundle.h"
#include "runtime/session.h"
#include "session/direct_session.h"

namespace sluice {
namespace {

using ::absl::StatusCode;

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/io_ops_test_", getpid(), "/", name);
}

bool Contains(const absl::Status& s, absl::string_view needle) {
  return absl::StrContains(s.message(), needle);
}

Tensor Floats() {
  return Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6.25f}, TensorShape({2, 3}));
}
Tensor Int64s() { return Tensor::FromVector<int64_t>({int64_t{1} << 40, -7, 0, 9}); }
Tensor Strings() { return Tensor::FromVector<std::string>({"alpha", "", std::string(1000, 'z')}); }

Tensor PrefixTensor(const std::string& p) { return Tensor::Scalar<std::string>(p); }

// Saves {w: Floats, step: Int64s, vocab: Strings} to `prefix` through a session.
absl::Status SaveThreeTensors(const std::string& prefix) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output p = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  Node* save =
      ops::SaveV2(s.WithOpName("save"), p, {"w", "step", "vocab"}, {"", "", ""},
                  {ops::Const(s, Floats()), ops::Const(s, Int64s()), ops::Const(s, Strings())});
  if (!s.ok()) return s.status();
  EXPECT_NE(save, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!sess.ok()) return sess.status();
  return (*sess)->Run({{"prefix", PrefixTensor(prefix)}}, {}, {"save"}).status();
}

// Restores `names` with `dtypes` from `prefix`.
absl::StatusOr<std::vector<Tensor>> Restore(const std::string& prefix,
                                            const std::vector<std::string>& names,
                                            const std::vector<DataType>& dtypes) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output p = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  std::vector<std::string> slices(names.size());
  std::vector<Output> r = ops::RestoreV2(
      s.WithOpName("restore"), p, ops::Const(s, Tensor::FromVector<std::string>(names)),
      ops::Const(s, Tensor::FromVector<std::string>(slices)), dtypes);
  if (!s.ok()) return s.status();
  absl::StatusOr<std::unique_ptr<Session>> sess = NewSession(BuiltinSessionConfig(), *s.graph());
  if (!sess.ok()) return sess.status();
  std::vector<std::string> fetches;
  for (const Output& o : r) fetches.push_back(o.name());
  return (*sess)->Run({{"prefix", PrefixTensor(prefix)}}, fetches, {});
}

void ExpectRestoresAll(const std::string& prefix) {
  absl::StatusOr<std::vector<Tensor>> got =
      Restore(prefix, {"vocab", "w", "step"}, {DT_STRING, DT_FLOAT, DT_INT64});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].shape(), TensorShape({3}));
  EXPECT_EQ((*got)[0].flat<std::string>()[2], std::string(1000, 'z'));
  EXPECT_EQ((*got)[0].flat<std::string>()[1], "");
  EXPECT_EQ((*got)[1].shape(), TensorShape({2, 3}));
  EXPECT_EQ((*got)[1].flat<float>()[5], 6.25f);
  EXPECT_EQ((*got)[2].flat<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ((*got)[2].flat<int64_t>()[1], -7);
}

TEST(IoOpsTest, RoundTripFloatInt64AndString) {
  std::string prefix = TestDir("roundtrip/sub/dir/ckpt");  // directories are created
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  ExpectRestoresAll(prefix);
  // Saving again replaces the file in place; no temporaries are left.
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  ExpectRestoresAll(prefix);
  // TensorFlow's V2 checkpoint: an index and one data file.
  absl::StatusOr<std::unique_ptr<BundleReader>> bundle = BundleReader::Open(prefix);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  std::vector<std::string> names;
  for (const BundleReader::Entry& e : (*bundle)->entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"step", "vocab", "w"}));
  EXPECT_EQ(BundleFiles(prefix).size(), 2u);
  EXPECT_FALSE(ReadFileToString(prefix).ok());  // nothing at the prefix itself
}

// Checkpoints Sluice wrote before it wrote TensorFlow's format restore: one
// file at the prefix, and the Saver's "<prefix>.shard-<k>-of-<n>" files.
TEST(IoOpsTest, SluicesOlderFormatRestores) {
  const std::string dir = TestDir("older");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  const Tensor w = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6.25f}, TensorShape({2, 3}));
  const Tensor vocab = Tensor::FromVector<std::string>({"a", "", std::string(1000, 'z')});
  const Tensor step = Tensor::FromVector<int64_t>({int64_t{1} << 40, -7});
  ASSERT_TRUE(
      internal::WriteCheckpointShard(dir + "/one", {{"w", w}, {"step", step}, {"vocab", vocab}})
          .ok());
  ExpectRestoresAll(dir + "/one");
  ASSERT_TRUE(
      internal::WriteCheckpointShard(dir + "/m-5.shard-0-of-2", {{"w", w}, {"step", step}}).ok());
  ASSERT_TRUE(internal::WriteCheckpointShard(dir + "/m-5.shard-1-of-2", {{"vocab", vocab}}).ok());
  ExpectRestoresAll(dir + "/m-5");
}

TEST(IoOpsTest, CorruptByteIsDataLossNamingFileAndTensor) {
  std::string prefix = TestDir("corrupt/ckpt");
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  const std::string data = prefix + ".data-00000-of-00001";
  std::string bytes = *ReadFileToString(data);
  // A byte inside w's data (the float 1.5f) changes its entry's checksum.
  std::string needle(4, '\0');
  float v = 1.5f;
  std::memcpy(needle.data(), &v, 4);
  size_t at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] ^= 0x10;
  ASSERT_TRUE(WriteFileAtomically(data, bytes).ok());
  absl::StatusOr<std::vector<Tensor>> got = Restore(prefix, {"w"}, {DT_FLOAT});
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status();
  EXPECT_TRUE(Contains(got.status(), prefix)) << got.status();
  EXPECT_TRUE(Contains(got.status(), "'w'")) << got.status();
  EXPECT_TRUE(Contains(got.status(), "restore")) << got.status();  // the node
}

TEST(IoOpsTest, EverySingleByteCorruptionIsDetected) {
  std::string dir = TestDir("every_byte");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  std::string path = dir + "/shard";
  ASSERT_TRUE(
      internal::WriteCheckpointShard(path, {{"a", Tensor::FromVector<float>({1, 2})},
                                            {"s", Tensor::FromVector<std::string>({"xy", ""})}})
          .ok());
  const std::string good = *ReadFileToString(path);
  ASSERT_TRUE(internal::CheckpointShard::Read(path).ok());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    ASSERT_TRUE(WriteFileAtomically(path, bad).ok());
    absl::StatusOr<internal::CheckpointShard> r = internal::CheckpointShard::Read(path);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << "byte " << i << ": " << r.status();
  }
  for (size_t len : {size_t{0}, size_t{5}, good.size() / 2, good.size() - 1}) {
    ASSERT_TRUE(WriteFileAtomically(path, good.substr(0, len)).ok());
    absl::StatusOr<internal::CheckpointShard> r = internal::CheckpointShard::Read(path);
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << "length " << len;
    EXPECT_TRUE(Contains(r.status(), path));
  }
}

TEST(IoOpsTest, TruncatedFileIsDataLoss) {
  std::string prefix = TestDir("truncated/ckpt");
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  const std::string data = prefix + ".data-00000-of-00001";
  std::string bytes = *ReadFileToString(data);
  ASSERT_TRUE(WriteFileAtomically(data, bytes.substr(0, bytes.size() - 30)).ok());
  absl::StatusOr<std::vector<Tensor>> got = Restore(prefix, {"vocab"}, {DT_STRING});
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status();
  EXPECT_TRUE(Contains(got.status(), prefix));
  EXPECT_TRUE(Contains(got.status(), "outside")) << got.status();
  // A truncated index.
  bytes = *ReadFileToString(prefix + ".index");
  ASSERT_TRUE(WriteFileAtomically(prefix + ".index", bytes.substr(0, bytes.size() - 9)).ok());
  got = Restore(prefix, {"step"}, {DT_INT64});
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status();
  EXPECT_TRUE(Contains(got.status(), prefix));
}

TEST(IoOpsTest, MissingFileOrTensorIsNotFound) {
  std::string prefix = TestDir("missing/ckpt");
  absl::StatusOr<std::vector<Tensor>> got = Restore(prefix, {"w"}, {DT_FLOAT});
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status();
  EXPECT_TRUE(Contains(got.status(), prefix));
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  got = Restore(prefix, {"w", "bias"}, {DT_FLOAT, DT_FLOAT});
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status();
  EXPECT_TRUE(Contains(got.status(), prefix));
  EXPECT_TRUE(Contains(got.status(), "'bias'"));
}

TEST(IoOpsTest, DtypeMismatchIsInvalidArgument) {
  std::string prefix = TestDir("dtype/ckpt");
  ASSERT_TRUE(SaveThreeTensors(prefix).ok());
  absl::StatusOr<std::vector<Tensor>> got = Restore(prefix, {"w"}, {DT_DOUBLE});
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status();
  EXPECT_TRUE(Contains(got.status(), "'w'"));
  EXPECT_TRUE(Contains(got.status(), "double"));
}

// Slices are saved (ops/io/sliced_checkpoint_test.cc); one whose value is
// not of the slice's shape is refused, naming the node and the tensor.
TEST(IoOpsTest, ASliceOfAnotherShapeIsInvalidArgumentNamingTheNode) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output p = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  ops::SaveV2(s.WithOpName("sliced_save"), p, {"w"}, {"4 0,2"}, {ops::Const(s, Floats())});
  ASSERT_TRUE(s.ok()) << s.status();
  auto sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok());
  absl::Status st =
      (*sess)->Run({{"prefix", PrefixTensor(TestDir("sliced"))}}, {}, {"sliced_save"}).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(Contains(st, "sliced_save"));
  EXPECT_TRUE(Contains(st, "'w'"));
}

TEST(IoOpsTest, BuildTimeChecks) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output p = ops::Placeholder(s.WithOpName("prefix"), DT_STRING);
  // Two names for one tensor.
  ops::SaveV2(s, p, {"a", "b"}, {"", ""}, {ops::Const(s, Floats())});
  EXPECT_FALSE(s.ok());
  Scope s2 = Scope::NewRootScope(BuiltinOps());
  ops::RestoreV2(s2, {"not", "a scalar"}, {"w"}, {""}, {DT_FLOAT});
  EXPECT_FALSE(s2.ok());
}

TEST(IoOpsTest, StringJoinBroadcastsScalars) {
  Scope s = Scope::NewRootScope(BuiltinOps());
  Output a = ops::Placeholder(s.WithOpName("a"), DT_STRING);
  Output j = ops::StringJoin(s, {a, Input(".shard-"), Input({"0", "1"})}, {.separator = ""});
  Output k = ops::StringJoin(s, {Input("x"), Input("y")}, {.separator = "/"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(j.shape(), TensorShape({2}));
  auto sess = NewSession(BuiltinSessionConfig(), *s.graph());
  ASSERT_TRUE(sess.ok());
  absl::StatusOr<std::vector<Tensor>> out =
      (*sess)->Run({{"a", PrefixTensor("/d/m-3")}}, {j.name(), k.name()}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<std::string>()[1], "/d/m-3.shard-1");
  EXPECT_EQ((*out)[1].scalar<std::string>(), "x/y");
}

// A writer that dies before its rename leaves the previous shard readable.
const char* crash_stage = nullptr;
void CrashAt(absl::string_view stage, absl::string_view) {
  if (stage == crash_stage) _exit(42);
}

TEST(IoOpsTest, CrashDuringWriteLeavesThePreviousFileIntact) {
  for (const char* stage : {"appended", "synced"}) {
    std::string prefix = TestDir(absl::StrCat("crash_", stage, "/ckpt"));
    ASSERT_TRUE(SaveThreeTensors(prefix).ok());
    pid_t pid = fork();
    if (pid == 0) {
      crash_stage = stage;
      SetAtomicFileCrashHookForTesting(CrashAt);
      BundleWriter w(prefix);
      absl::Status s = w.Add("w", Tensor::FromVector<float>({9, 9, 9}));
      if (s.ok()) s = w.Finish();
      _exit(s.ok() ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 42) << stage;
    ExpectRestoresAll(prefix);
  }
}

}  // namespace
}  // namespace sluice
