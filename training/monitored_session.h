// MonitoredSession: the training loop's session. It creates the session
// (again after a recoverable failure), has the chief initialize or restore
// the model while the other workers wait for it, and runs hooks around every
// step: stop at a step, checkpoints, progress logs, NaN checks, summaries
// (training/hooks.h).
//
//   MonitoredSessionOptions opts;
//   opts.create_session = [&] { return server->NewSession(graph_def); };
//   opts.is_chief = task_index == 0;
//   opts.init_op = "init";
//   opts.ready_tensors = ready;            // IsVariableInitialized of every variable
//   opts.saver = saver.get();  opts.checkpoint_dir = "/tmp/train";
//   StopAtStepHook stop(1000, "global_step");  opts.hooks = {&stop, ...};
//   ASSIGN_OR_RETURN(auto ms, MonitoredSession::Create(opts));
//   while (!ms->ShouldStop()) {
//     ASSIGN_OR_RETURN(auto out, ms->Run({{"x", x}, {"labels", y}}, {"loss"}, {"train"}));
//   }
//   RETURN_IF_ERROR(ms->Close());          // hooks' End: e.g. a last checkpoint
//
// Start-up: the chief fetches `ready_tensors`; when some variable is not
// initialized it restores the latest checkpoint of `checkpoint_dir`, or runs
// `init_op` when there is none. Other workers poll `ready_tensors` until all
// are true (FailedPrecondition... DeadlineExceeded after wait_for_ready_ms,
// naming the variables still uninitialized).
//
// With no ready_tensors the chief restores or initializes at every session
// creation and the others do not wait. After restoring or initializing, the
// chief checks ready_tensors again (FailedPrecondition naming what is still
// uninitialized).
//
// Recovery: a Run failing with Unavailable or Aborted (a task died or
// restarted), in the step or in a hook's AfterRun (e.g. a checkpoint save
// whose parameter server died), closes the session, waits recovery_wait_ms, creates a new one
// (with the start-up above: the chief restores the last checkpoint if the
// restarted task lost variables) and retries the step, up to max_recoveries
// times in a row; then the last error is returned ("after N recoveries:
// ..."). Session creation in Create retries Unavailable / Aborted the same
// way. Hooks' fetches are appended to the step's fetches (a tensor fetched
// twice is fetched once) and split off again.
//
// Errors: InvalidArgument without create_session; the session's and the
// hooks' errors; FailedPrecondition for Run after Close.
// Thread-compatible: one training loop per MonitoredSession. Hooks and the
// saver are borrowed. The destructor closes the session without calling the
// hooks' End (call Close for that).
#ifndef SLUICE_TRAINING_MONITORED_SESSION_H_
#define SLUICE_TRAINING_MONITORED_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "training/checkpoint/saver.h"
#include "training/session_run_hook.h"
#include "runtime/session.h"

namespace sluice {

struct MonitoredSessionOptions {
  // Makes a new session over the cluster (or a local one).
  std::function<absl::StatusOr<std::unique_ptr<Session>>()> create_session;
  bool is_chief = true;
  std::string init_op;                     // node; chief runs it when nothing to restore
  std::vector<std::string> ready_tensors;  // bool scalars, all true when the model is ready
  Saver* saver = nullptr;                  // with checkpoint_dir: restore on start
  std::string checkpoint_dir;
  int64_t wait_for_ready_ms = 120000;
  int max_recoveries = 20;
  int64_t recovery_wait_ms = 500;
  // A recovery that has not made a working session within this long gives
  // up (DeadlineExceeded naming the last error, which names the task).
  // While it waits, a line on stderr every `waiting_log_every_s` says for
  // how long and what it waits for.
  double recovery_timeout_s = 300;
  double waiting_log_every_s = 5;
  std::vector<SessionRunHook*> hooks;
};

class MonitoredSession {
 public:
  static absl::StatusOr<std::unique_ptr<MonitoredSession>> Create(MonitoredSessionOptions options);
  ~MonitoredSession();

  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets);
  // A run the hooks do not see (e.g. a sync worker's token dequeue), with
  // the same recovery as Run.
  absl::StatusOr<std::vector<Tensor>> RunWithoutHooks(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets);
  // True once a hook asked to stop.
  bool ShouldStop() const { return stop_; }
  // The current session (changes after a recovery).
  Session* session() const { return session_.get(); }
  // How many times the session was re-created after a failure.
  int recoveries() const { return recoveries_; }
  absl::Status Close();

 private:
  explicit MonitoredSession(MonitoredSessionOptions options) : options_(std::move(options)) {}
  // Creates session_ and runs the start-up and the hooks' AfterCreateSession.
  absl::Status CreateAndPrepare();
  // After `error` (Unavailable / Aborted): closes the session, waits and
  // CreateAndPrepare again, until it works, `*failures` (recoveries tried
  // in a row, updated) reaches max_recoveries or recovery_timeout_s passes.
  absl::Status Recover(absl::Status error, int* failures);
  absl::Status PrepareChief();
  absl::Status WaitForReady();
  // The ready_tensors that are false (all of them when `session_` fails
  // fetching them: that error instead).
  absl::StatusOr<std::vector<std::string>> NotReady();

  MonitoredSessionOptions options_;
  std::unique_ptr<Session> session_;
  bool stop_ = false;
  bool closed_ = false;
  int recoveries_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_MONITORED_SESSION_H_
