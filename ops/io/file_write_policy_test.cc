#include "ops/io/file_write_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

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
}

}  // namespace
}  // namespace sluice
