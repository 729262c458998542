// ReadFile, WriteFile and MatchingFiles on a test directory: round trips,
// created directories, sorted matches (dot files too, several patterns,
// none), and the errors: missing files, directories, bad ranks, and a
// write outside the roots once writes are restricted (the last test: the
// restriction holds for the process).
#include "ops/io/file_ops.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/array/array_ops.h"
#include "ops/builtins.h"
#include "ops/io/file_write_policy.h"
#include "ops/testutil/math_test_util.h"
#include "runtime/atomic_file.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::TryEval;

std::string TestDir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(t != nullptr ? t : "/tmp") + "/file_ops_test_" + name;
  EXPECT_TRUE(CreateDirectories(dir).ok());
  return dir;
}

// Runs `target` (a node without outputs) by fetching a constant that waits
// for it.
absl::Status RunTarget(const Scope& s, Node* target) {
  if (target == nullptr) return s.status();
  Node* const deps[] = {target};
  return TryEval(s, {}, ops::Const(s.WithControlDependencies(deps), 0)).status();
}

std::vector<std::string> Strings(const Tensor& t) {
  return std::vector<std::string>(t.flat<std::string>().begin(), t.flat<std::string>().end());
}

TEST(FileOpsTest, WriteThenReadBack) {
  const std::string dir = TestDir("rw");
  const std::string path = dir + "/a/b/c.bin";
  const std::string bytes("\x00\xff jpeg-ish \n", 13);
  Scope s = Scope::NewRootScope(BuiltinOps());
  Node* write = ops::WriteFile(s, ops::Const(s, path), ops::Const(s, bytes));
  ASSERT_TRUE(RunTarget(s, write).ok());
  EXPECT_EQ(Eval(s, {}, ops::ReadFile(s, ops::Const(s, path))).scalar<std::string>(), bytes);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
}

TEST(FileOpsTest, MatchingFilesSortsEveryMatch) {
  const std::string dir = TestDir("match");
  for (const char* name : {"b.jpg", "a.jpg", ".hidden.jpg", "c.png", "sub/d.jpg"}) {
    ASSERT_TRUE(CreateDirectories(dir + "/sub").ok());
    ASSERT_TRUE(WriteFileAtomically(dir + "/" + name, "x").ok());
  }
  Scope s = Scope::NewRootScope(BuiltinOps());
  EXPECT_THAT(Strings(Eval(s, {}, ops::MatchingFiles(s, ops::Const(s, dir + "/*.jpg")))),
              ElementsAre(dir + "/.hidden.jpg", dir + "/a.jpg", dir + "/b.jpg"));
  EXPECT_THAT(Strings(Eval(s, {}, ops::MatchingFiles(
                                      s, ops::Const(s, Tensor::FromVector<std::string>(
                                                           {dir + "/*/?.jpg", dir + "/[c-z].*"}))))),
              ElementsAre(dir + "/c.png", dir + "/sub/d.jpg"));
  Tensor none = Eval(s, {}, ops::MatchingFiles(s, ops::Const(s, dir + "/*.gif")));
  EXPECT_EQ(none.shape(), TensorShape({0}));
  // A plain path matches itself when it exists.
  EXPECT_THAT(Strings(Eval(s, {}, ops::MatchingFiles(s, ops::Const(s, dir + "/c.png")))),
              ElementsAre(dir + "/c.png"));
}

TEST(FileOpsTest, BadPathsAndShapesAreErrors) {
  const std::string dir = TestDir("bad");
  Scope s = Scope::NewRootScope(BuiltinOps());
  absl::StatusOr<Tensor> r = TryEval(s, {}, ops::ReadFile(s, ops::Const(s, dir + "/missing")));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(dir + "/missing"));
  r = TryEval(s, {}, ops::ReadFile(s, ops::Const(s, dir)));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  Output names = ops::Placeholder(s, DT_STRING);
  r = TryEval(s, {{names, Tensor::FromVector<std::string>({"a", "b"})}}, ops::ReadFile(s, names));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("filename must be a scalar"));
  r = TryEval(s, {{names, Tensor(DT_STRING, TensorShape({1, 1}))}}, ops::MatchingFiles(s, names));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("must be scalar or vector"));
}

TEST(FileOpsTest, WritesObeyTheGraphFilePolicy) {
  const std::string root = TestDir("root");
  const std::string outside = TestDir("outside");
  ASSERT_TRUE(RestrictGraphFileWrites({root}).ok());
  Scope s = Scope::NewRootScope(BuiltinOps());
  Node* bad = ops::WriteFile(s, ops::Const(s, outside + "/x"), ops::Const(s, std::string("x")));
  Node* good = ops::WriteFile(s, ops::Const(s, root + "/x"), ops::Const(s, std::string("x")));
  absl::Status st = RunTarget(s, bad);
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied) << st;
  EXPECT_TRUE(RunTarget(s, good).ok());
}

}  // namespace
}  // namespace sluice
