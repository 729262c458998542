#include "ops/io/file_write_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

std::string TempDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

// One test: the restriction is process-wide and never lifted.
TEST(FileWritePolicyTest, RestrictsToRootsAfterTheFirstRestriction) {
  const std::string base = TempDir();
  const std::string root = absl::StrCat(base, "/ckpt/job");
  EXPECT_TRUE(CheckGraphFileWrite("/etc/passwd").ok());  // unrestricted so far

  ASSERT_TRUE(RestrictGraphFileWrites({root}).ok());
  EXPECT_TRUE(CheckGraphFileWrite(absl::StrCat(root, "/model.ckpt-10")).ok());
  EXPECT_TRUE(CheckGraphFileWrite(absl::StrCat(root, "/new/dir/model.ckpt-10")).ok());
  EXPECT_TRUE(CheckGraphFileWrite(absl::StrCat(root, "/./a")).ok());

  for (const std::string& bad :
       {std::string("/etc/passwd"), absl::StrCat(std::getenv("HOME") ? std::getenv("HOME") : "/root",
                                                  "/.ssh/authorized_keys"),
        absl::StrCat(root, "/../escape"), absl::StrCat(root, "/new/../../escape"),
        absl::StrCat(root, "-sibling/x"), absl::StrCat(root, "/a/../b"),  // no ".." past what exists
        std::string("relative/x"), std::string("")}) {
    absl::Status s = CheckGraphFileWrite(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << bad << ": " << s;
  }
  // A symbolic link inside a root that points out of it.
  const std::string link = absl::StrCat(root, "/out");
  unlink(link.c_str());
  ASSERT_EQ(symlink("/etc", link.c_str()), 0);
  EXPECT_EQ(CheckGraphFileWrite(absl::StrCat(link, "/cron.d/x")).code(),
            absl::StatusCode::kPermissionDenied);
  // A later call adds a root; it does not lift the restriction.
  const std::string second = absl::StrCat(base, "/logs");
  ASSERT_TRUE(RestrictGraphFileWrites({second}).ok());
  EXPECT_TRUE(CheckGraphFileWrite(absl::StrCat(second, "/events")).ok());
  EXPECT_FALSE(CheckGraphFileWrite("/etc/passwd").ok());
  EXPECT_EQ(RestrictGraphFileWrites({"relative/root"}).code(), absl::StatusCode::kInvalidArgument);

  // Checkpoint reads: under a write root or a read root, nowhere else, and
  // refused for a path whether it exists or not (the same message shape).
  EXPECT_TRUE(CheckGraphFileRead(absl::StrCat(root, "/model.ckpt-10")).ok());
  for (const char* bad : {"/dev/zero", "/etc/shadow", "/no/such/file"}) {
    absl::Status s = CheckGraphFileRead(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << bad << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "may read files only under")) << s;
  }
  const std::string models = absl::StrCat(base, "/models");
  mkdir(models.c_str(), 0700);
  EXPECT_FALSE(CheckGraphFileRead(absl::StrCat(models, "/m.ckpt")).ok());
  ASSERT_TRUE(AllowGraphFileReads({models}).ok());
  EXPECT_TRUE(CheckGraphFileRead(absl::StrCat(models, "/m.ckpt")).ok());
  EXPECT_FALSE(CheckGraphFileWrite(absl::StrCat(models, "/m.ckpt")).ok());  // read only
  EXPECT_FALSE(AllowGraphFileReads({absl::StrCat(base, "/missing")}).ok());

  // A root others may write (or another user owns: /tmp itself, root's,
  // when the test runs as another user) is refused.
  const std::string shared = absl::StrCat(base, "/shared");
  mkdir(shared.c_str(), 0700);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  absl::Status s = RestrictGraphFileWrites({shared});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "may be written by other users")) << s;
  EXPECT_FALSE(CheckGraphFileWrite(absl::StrCat(shared, "/x")).ok());
  if (geteuid() != 0) {
    s = RestrictGraphFileWrites({"/"});  // root's
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "belongs to uid 0")) << s;
  }
}

// The default root is this user's: a name another user took first is not
// shared but gets this user's id appended.
TEST(PrivateRootTest, AnotherUsersDirectoryIsNotShared) {
  const std::string base = TempDir() + "/private-root";
  rmdir(base.c_str());
  EXPECT_EQ(PrivateRoot(base), base);  // free: this user's to create
  ASSERT_EQ(mkdir(base.c_str(), 0700), 0);
  EXPECT_EQ(PrivateRoot(base), base);  // this user's
  if (geteuid() != 0) {
    rmdir(base.c_str());
    GTEST_SKIP() << "only root can give a directory to another user here";
  }
  ASSERT_EQ(chown(base.c_str(), 65534, 65534), 0);  // nobody's
  EXPECT_EQ(PrivateRoot(base), absl::StrCat(base, "-", geteuid()));
  rmdir(base.c_str());
}

}  // namespace
}  // namespace sluice
