// Test helpers for the training loop: a one-variable model and Sessions that
// forward to a shared session (several "workers" over one local session)
// or fail on demand (a task that died).
//
//   TinyModel m;                                  // w, loss, train, init...
//   std::shared_ptr<Session> shared = m.NewLocalSession();
//   opts.create_session = [&] { return ForwardTo(shared); };
//
// Thread-safety: ForwardingSession is as thread-safe as the shared session;
// FailureBudget is thread-safe. Ownership: ForwardingSession shares the
// target; closing it leaves the target open.
#ifndef SLUICE_TRAINING_TRAINING_TESTUTIL_H_
#define SLUICE_TRAINING_TRAINING_TESTUTIL_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "training/checkpoint/saver.h"
#include "graph/scope.h"
#include "runtime/session.h"

namespace sluice {

// loss = (w - target)^2, w a float scalar variable starting at 0, target a
// PlaceholderWithDefault (3.0); "train" is one gradient descent step (rate
// 0.1) that also increments "global_step" (int64). Nodes: "w", "target",
// "loss", "global_step", "train", "init", and the ready tensors
// "w_ready:0" / "global_step_ready:0" (IsVariableInitialized), the summary
// "summaries:0" (MergeSummary of ScalarSummary "loss") and a Saver of w and
// global_step.
struct TinyModel {
  explicit TinyModel(SaverOptions saver_options = {});
  absl::StatusOr<std::unique_ptr<Session>> NewLocalSession() const;

  Scope scope;
  std::unique_ptr<Saver> saver;  // null when building failed (scope's status)
  std::vector<std::string> ready_tensors = {"w_ready:0", "global_step_ready:0"};
};

// Counts the failures still to inject: Take() is true (and counts one down)
// while some are left.
class FailureBudget {
 public:
  explicit FailureBudget(int failures) : left_(failures) {}
  bool Take() { return left_.fetch_sub(1) > 0; }
  void Set(int failures) { left_.store(failures); }
  int left() const { return left_.load(); }

 private:
  std::atomic<int> left_;
};

// Forwards everything to `target`; Run first fails with Unavailable when
// `failures` (optional) still has some.
class ForwardingSession : public Session {
 public:
  ForwardingSession(std::shared_ptr<Session> target, std::shared_ptr<FailureBudget> failures)
      : target_(std::move(target)), failures_(std::move(failures)) {}
  absl::Status Extend(const GraphDef& def) override { return target_->Extend(def); }
  using Session::Run;
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options,
                                          RunMetadata* metadata) override;
  std::vector<std::string> ListDevices() const override { return target_->ListDevices(); }
  std::vector<AllocatorStats> DeviceMemoryStats() const override {
    return target_->DeviceMemoryStats();
  }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  std::shared_ptr<Session> target_;
  std::shared_ptr<FailureBudget> failures_;
};

// A new ForwardingSession, as a create_session callback returns it.
absl::StatusOr<std::unique_ptr<Session>> ForwardTo(std::shared_ptr<Session> target,
                                                   std::shared_ptr<FailureBudget> failures = {});

}  // namespace sluice

#endif  // SLUICE_TRAINING_TRAINING_TESTUTIL_H_
