#include "base/mutex_mode.h"

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(MutexModeTest, FollowsTheEnvironment) {
  const char* value = std::getenv("SLUICE_DEADLOCK_DETECTION");
  EXPECT_EQ(MutexDeadlockDetectionEnabled(), value != nullptr && std::strcmp(value, "1") == 0);
}

TEST(MutexModeTest, BazelTestsDetectDeadlocks) {
  // .bazelrc: test --test_env=SLUICE_DEADLOCK_DETECTION=1
  if (std::getenv("TEST_SRCDIR") == nullptr) GTEST_SKIP() << "not run by bazel test";
  EXPECT_TRUE(MutexDeadlockDetectionEnabled());
}

}  // namespace
}  // namespace sluice
