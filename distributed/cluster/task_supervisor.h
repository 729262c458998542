// SuperviseTasks: runs a set of task processes, streams their output with a
// "[job:index] " prefix, reports their exits and stops them all when the
// chief exits (or on SIGINT / SIGTERM to this process). The process half of
// the launcher (distributed/cluster/launcher.h), kept apart from flags and
// cluster building.
//
//   std::vector<TaskLaunch> tasks = {
//       {"ps", 0, false, {"/bin/prog", "--x"}, {"SLUICE_CONFIG=..."}},
//       {"worker", 0, true, {"/bin/prog", "--x"}, {"SLUICE_CONFIG=..."}}};
//   ASSIGN_OR_RETURN(int exit_code, SuperviseTasks(tasks, SupervisorOptions(), std::cout));
//
// Each task: fork + execve in its own process group (setpgid), stdout and
// stderr into one pipe, stdin /dev/null, PR_SET_PDEATHSIG = SIGKILL so it
// dies with this process even if this process is killed with SIGKILL. One
// thread polls the pipes; a line is written whole ("[worker:1] text\n"), so
// lines of different tasks never mix (lines over 64 KiB are split).
//
// Restarts: see SupervisorOptions::max_restarts; each is announced
// ("[launch] ps:0 killed by signal 9; restarting in 1s (1 of 3)").
//
// Stopping: SIGTERM to every task's process group, SIGKILL to what is left
// after the grace period, then a last SIGKILL sweep of the groups so no
// grandchild outlives the run.
//
// Thread-safety: installs handlers for SIGINT, SIGTERM and SIGCHLD for the
// duration of the call (previous ones restored) and reaps only its own
// children by pid; call from one thread at a time.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_TASK_SUPERVISOR_H_
#define SLUICE_DISTRIBUTED_CLUSTER_TASK_SUPERVISOR_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

struct TaskLaunch {
  std::string job;
  int index = 0;
  bool chief = false;             // its exit stops the others and gives the exit code
  std::vector<std::string> argv;  // argv[0]: the program's path (execve, no PATH search)
  std::vector<std::string> env;   // "NAME=value", added to this process's environment
};

struct SupervisorOptions {
  bool fail_fast = false;        // a failing non-chief task stops everything
  // A non-chief task that fails (non-zero exit or a signal) is started again
  // with the same arguments and environment (so at the same address), up to
  // this many times, after 1, 2, 4 ... s (at most 30 s); the chief's
  // recovery takes it from there. The chief is started again the same way
  // when a signal this process did not send ends it (a crash, the OOM
  // killer, kill -9), and resumes from its newest checkpoint; its exit
  // status, even non-zero, ends the job. 0: never (a failed task stays
  // down). Not under fail_fast; for non-chief tasks not under
  // chief_only_exit either.
  int max_restarts = 3;
  bool chief_only_exit = false;  // a non-chief task exiting at all counts as failing
  double grace_period_s = 5;     // SIGTERM -> SIGKILL
  std::string working_dir;       // of the tasks; empty: this process's
};

// "exited with status N" or "killed by signal N" for a waitpid status.
std::string DescribeWaitStatus(int status);

// Starts every task, then supervises until all have exited. Returns the exit
// code for the caller: the chief's (128+N when killed by signal N); under
// fail_fast the failed task's code (1 if it exited 0 under chief_only_exit);
// 128+N when this process got signal N (SIGINT, SIGTERM); when there is no
// chief, 0 if every task exited 0, else 1. Errors only when a task could not
// be started (the started ones are stopped first).
absl::StatusOr<int> SuperviseTasks(const std::vector<TaskLaunch>& tasks,
                                   const SupervisorOptions& options, std::ostream& out);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_TASK_SUPERVISOR_H_
