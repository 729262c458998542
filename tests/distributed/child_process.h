// ChildProcess: a program started by a multi-process test, with its output
// in a log file and a guard that kills and reaps it whatever happens to the
// test (an ASSERT that returns early included).
//
//   auto ps = ChildProcess::Start({RunfilePath("tools/server"), "--job=ps", ...},
//                                 {"SLUICE_CONFIG=..."}, TestTmpPath("ps0.log"));
//   ASSERT_TRUE(ps.ok()) << ps.status();
//   ASSERT_TRUE((*ps)->WaitForOutput("listening on", absl::Seconds(5))) << (*ps)->Output();
//   (*ps)->Signal(SIGKILL);
//   std::optional<int> status = (*ps)->WaitForExit(absl::Seconds(2));  // waitpid status
//   // ~ChildProcess: SIGKILL to the process group, then waitpid.
//
// The child runs in its own process group with stdin /dev/null, stdout and
// stderr appended to the log file, and PR_SET_PDEATHSIG(SIGKILL) so it also
// dies when the test process is killed (e.g. by Bazel's timeout). Every wait
// is bounded by its timeout.
//
// Thread-compatible: one thread drives a ChildProcess. Nothing else in the
// process may reap children with waitpid(-1).
#ifndef SLUICE_TESTS_DISTRIBUTED_CHILD_PROCESS_H_
#define SLUICE_TESTS_DISTRIBUTED_CHILD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sluice {

class ChildProcess {
 public:
  // argv[0] is a path (no PATH search); `env` entries "NAME=value" are added
  // to (or replace those of) this process's environment. Errors when the
  // log cannot be opened or fork fails; an exec failure shows as exit 127
  // with a message in the log.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv,
                                                             std::vector<std::string> env,
                                                             std::string log_path);
  ~ChildProcess();  // SIGKILL to the group and reap, when still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }

  // The log so far.
  std::string Output() const;

  // Polls the log until it contains `needle` (true), or the process exits
  // without having written it, or `timeout` passes (false).
  bool WaitForOutput(absl::string_view needle, absl::Duration timeout);
  // Same, for `count` occurrences.
  bool WaitForOutputCount(absl::string_view needle, int count, absl::Duration timeout);

  // Sends `sig` to the child's process group (a no-op once reaped).
  void Signal(int sig);

  // After Signal(SIGSTOP): true once every thread of the process is
  // stopped (kill() returns before a thread running on another core has
  // stopped, so a fast step could still complete on it); false after
  // `timeout`.
  bool WaitUntilStopped(absl::Duration timeout);

  // The waitpid status once the process has exited (it is reaped then);
  // nullopt when it still runs after `timeout`.
  std::optional<int> WaitForExit(absl::Duration timeout);

  // SIGKILL and reap; returns the waitpid status.
  int Kill();

  bool Running();

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  bool TryReap();

  pid_t pid_;
  std::string log_path_;
  std::optional<int> status_;
};

// "$TEST_SRCDIR/$TEST_WORKSPACE/<path>": a data dependency of the test.
std::string RunfilePath(absl::string_view path);

// "$TEST_TMPDIR/<name>" (/tmp when unset).
std::string TestTmpPath(absl::string_view name);

// "exited with status N" / "killed by signal N".
std::string DescribeStatus(int wait_status);

}  // namespace sluice

#endif  // SLUICE_TESTS_DISTRIBUTED_CHILD_PROCESS_H_
