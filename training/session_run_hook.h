// SessionRunHook and RunContext: the callbacks a MonitoredSession
// (training/monitored_session.h) runs around session creation
// and every step. Kept apart from MonitoredSession so that hooks depend on
// this small interface only.
//
//   class CountSteps : public SessionRunHook {
//    public:
//     std::vector<std::string> BeforeRun() override { return {"global_step:0"}; }
//     absl::Status AfterRun(const std::vector<Tensor>& v, RunContext* c) override {
//       if (v[0].scalar<int64_t>() >= 100) c->RequestStop();
//       return absl::OkStatus();
//     }
//   };
//
// Thread-compatible: the training loop calls a hook from one thread at a
// time. Ownership: a RunContext borrows the session.
#ifndef SLUICE_TRAINING_SESSION_RUN_HOOK_H_
#define SLUICE_TRAINING_SESSION_RUN_HOOK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace sluice {

// What a hook sees of a step, and how it asks the loop to stop.
class RunContext {
 public:
  explicit RunContext(Session* session) : session_(session) {}
  Session* session() const { return session_; }
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  Session* session_;
  bool stop_requested_ = false;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;
  // Once, before the first session is created.
  virtual absl::Status Begin() { return absl::OkStatus(); }
  // After every session creation (the first and each recovery), once the
  // model is initialized or restored.
  virtual absl::Status AfterCreateSession(Session* session) { return absl::OkStatus(); }
  // Tensors to fetch with the coming step ("node:index"). Called once per
  // step, also when the step is retried after a recovery.
  virtual std::vector<std::string> BeforeRun() { return {}; }
  // Their values, in BeforeRun's order. An error ends the loop with it.
  virtual absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) {
    return absl::OkStatus();
  }
  // Once, from Close, with the last session.
  virtual absl::Status End(Session* session) { return absl::OkStatus(); }
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_SESSION_RUN_HOOK_H_
