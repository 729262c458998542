#include "runtime/atomic_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/atomic_file_test_", getpid(), "/", name);
  EXPECT_TRUE(CreateDirectories(dir).ok());
  return dir;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

TEST(AtomicFileTest, WritesReplacesAndLeavesNoTemporaries) {
  std::string dir = TestDir("basic");
  std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(*ReadFileToString(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100000, 'x')).ok());
  EXPECT_EQ(ReadFileToString(path)->size(), 100000u);
  EXPECT_EQ(List(dir), std::vector<std::string>{"f"});
}

TEST(AtomicFileTest, AbandonedWriterRemovesItsTemporary) {
  std::string dir = TestDir("abandon");
  std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  {
    auto w = AtomicFileWriter::Create(path);
    ASSERT_TRUE(w.ok());
    EXPECT_TRUE(absl::StartsWith((*w)->temp_path(), path + ".tmp-"));
    ASSERT_TRUE((*w)->Append("new, never committed").ok());
  }
  EXPECT_EQ(*ReadFileToString(path), "old");
  EXPECT_EQ(List(dir), std::vector<std::string>{"f"});
}

// What a writer that died before Commit leaves is removed once old enough;
// a writer at work (a young temporary) and other files stay.
TEST(AtomicFileTest, OrphanedTemporariesAreRemovedWhenOld) {
  std::string dir = TestDir("orphans");
  ASSERT_TRUE(WriteFileAtomically(dir + "/model.ckpt-10.shard-0-of-1", "kept").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/model.ckpt-20.shard-0-of-1.tmp-0123abcd", "dead").ok());
  struct timeval old_times[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  ASSERT_EQ(utimes((dir + "/model.ckpt-20.shard-0-of-1.tmp-0123abcd").c_str(), old_times), 0);
  auto live = AtomicFileWriter::Create(dir + "/model.ckpt-30.shard-0-of-1");
  ASSERT_TRUE(live.ok());
  absl::StatusOr<int> removed = RemoveOrphanedTempFiles(dir, absl::Minutes(10));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  std::vector<std::string> left = List(dir);
  std::sort(left.begin(), left.end());
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0], "model.ckpt-10.shard-0-of-1");
  EXPECT_TRUE(absl::StartsWith(left[1], "model.ckpt-30.shard-0-of-1.tmp-")) << left[1];
  ASSERT_TRUE((*live)->Commit().ok());
  EXPECT_EQ(RemoveOrphanedTempFiles(dir + "/missing", absl::Minutes(1)).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(AtomicFileTest, ErrorsNameTheFile) {
  absl::StatusOr<std::string> r = ReadFileToString("/nonexistent/dir/file");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "/nonexistent/dir/file"));
  absl::Status w = WriteFileAtomically("/nonexistent/dir/file", "x");
  EXPECT_EQ(w.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(w.message(), "/nonexistent/dir/file"));
  std::string dir = TestDir("nested/a/b/c");
  EXPECT_TRUE(CreateDirectories(dir).ok());  // exists already: fine
  ASSERT_TRUE(WriteFileAtomically(dir + "/file", "x").ok());
  EXPECT_EQ(CreateDirectories(dir + "/file").code(), absl::StatusCode::kFailedPrecondition);
}

// Only regular files are read, and only as far as they were long: a device
// without end, a FIFO nobody writes and a directory are refused at once.
TEST(AtomicFileTest, ReadsOnlyRegularFilesWithinABound) {
  EXPECT_EQ(ReadFileToString("/dev/zero").status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string dir = TestDir("reads");
  ASSERT_TRUE(CreateDirectories(dir).ok());
  EXPECT_EQ(ReadFileToString(dir).status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string fifo = dir + "/fifo";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::string> r = ReadFileToString(fifo);  // returns, does not hang
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "not a regular file")) << r.status();
  ASSERT_TRUE(WriteFileAtomically(dir + "/ten", "0123456789").ok());
  r = ReadFileToString(dir + "/ten");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "0123456789");
  EXPECT_TRUE(ReadFileToString(dir + "/ten", 10).ok());
  EXPECT_EQ(ReadFileToString(dir + "/ten", 9).status().code(),
            absl::StatusCode::kResourceExhausted);
}

// The stage at which the forked writer "crashes".
const char* crash_stage = nullptr;
int appends_before_crash = 0;

void CrashHook(absl::string_view stage, absl::string_view path) {
  if (stage != crash_stage) return;
  if (stage == "appended" && --appends_before_crash > 0) return;
  _exit(42);
}

// Forks a child that rewrites `path` and dies at `stage`; returns the
// child's exit code.
int CrashWhileWriting(const std::string& path, const char* stage) {
  pid_t pid = fork();
  if (pid == 0) {
    crash_stage = stage;
    appends_before_crash = 2;
    SetAtomicFileCrashHookForTesting(CrashHook);
    auto w = AtomicFileWriter::Create(path);
    if (!w.ok()) _exit(1);
    for (int i = 0; i < 4; ++i) {
      if (!(*w)->Append(std::string(4096, 'n')).ok()) _exit(2);
    }
    (void)(*w)->Commit();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(AtomicFileTest, CrashBeforeRenameLeavesThePreviousFile) {
  for (const char* stage : {"appended", "synced"}) {
    std::string dir = TestDir(absl::StrCat("crash_", stage));
    std::string path = dir + "/f";
    ASSERT_TRUE(WriteFileAtomically(path, "previous").ok());
    EXPECT_EQ(CrashWhileWriting(path, stage), 42) << stage;
    EXPECT_EQ(*ReadFileToString(path), "previous") << stage;
    EXPECT_EQ(List(dir).size(), 2u) << stage;  // f and the dead writer's temporary
  }
  std::string dir = TestDir("crash_renamed");  // after the rename: the new file
  std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "previous").ok());
  EXPECT_EQ(CrashWhileWriting(path, "renamed"), 42);
  EXPECT_EQ(ReadFileToString(path)->size(), 4u * 4096);
}

TEST(AtomicFileTest, FilesAreOwnerOnly) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/owner_only";
  ASSERT_TRUE(WriteFileAtomically(path, "secret weights").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace sluice
