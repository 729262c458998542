// Mutual TLS for multi-process tests, as tools:launch gives a job: one set
// of job credentials per test process (a CA, a certificate for each of
// ps 0..3, worker 0..7 and "client"), written once under the test's
// temporary directory, and SLUICE_TLS_DIR pointing at them, so that every
// child process and this process's cluster sessions use them.
//
//   // once per test file, at namespace scope:
//   const auto* const kTls = ::testing::AddGlobalTestEnvironment(new TestJobCredentials);
//   ChildProcess::Start({RunfilePath("tools/server"), ...}, {}, log);  // TLS
#ifndef SLUICE_TESTS_DISTRIBUTED_TEST_CREDENTIALS_H_
#define SLUICE_TESTS_DISTRIBUTED_TEST_CREDENTIALS_H_

#include <string>

#include "gtest/gtest.h"

namespace sluice {

// The credentials' directory. Aborts the test process when they cannot be
// written (nothing could run without them).
const std::string& UseTestJobCredentials();

// UseTestJobCredentials before the first test.
class TestJobCredentials : public ::testing::Environment {
 public:
  void SetUp() override { UseTestJobCredentials(); }
};

}  // namespace sluice

#endif  // SLUICE_TESTS_DISTRIBUTED_TEST_CREDENTIALS_H_
