// The worker side of between-graph synchronous training on parameter
// servers (training/sync_replicas.h's protocol), shared by the examples that
// train this way (between_graph_mlp, fashion_mnist_cnn).
//
//   ASSIGN_OR_RETURN(SyncPsNames sync, BuildSyncPs(s, optimizer.get(), grads, gs.ref,
//                                                  {.workers = 2, .replica_index = task}));
//   SyncChiefHook hook(sync);                        // the chief's MonitoredSession hook
//   ChiefUpdateThread updates(new_session, sync);    // the chief only
//   std::optional<Tensor> token;
//   while (true) {
//     if (!token) ASSIGN_OR_RETURN(token, TakeSyncToken(session, sync, "global_step:0", steps));
//     if (!token) break;                              // training is over
//     ASSIGN_OR_RETURN(SyncStepResult r, RunSyncStep(session, sync, *token, {...batch...}, {loss}));
//     token = r.next;                                 // one run a step while tokens come in time
//   }
#ifndef SLUICE_EXAMPLES_SYNC_PS_WORKER_H_
#define SLUICE_EXAMPLES_SYNC_PS_WORKER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "sluice.h"
#include "training/hooks.h"
#include "training/monitored_session.h"

namespace sluice {

struct SyncPsOptions {
  int workers = 1;
  int replica_index = 0;          // one token queue per worker: one contribution per step
  int replicas_to_aggregate = 0;  // 0: every worker
  int take_timeout_ms = 1000;     // a take or token not served within this fails the run
};

// The names of SyncReplicas' nodes and tensors a worker runs.
struct SyncPsNames {
  std::string train;         // apply_gradients: this worker's contribution
  std::string chief_update;  // the chief's aggregation step
  std::string token;         // "<node>:0": the next step's token
  std::string next_token;    // "<node>:0": the same, fetched by the train run
  std::string local_step;    // fed with the token's value
  std::string init_tokens, set_global_step;
};

absl::StatusOr<SyncPsNames> BuildSyncPs(const Scope& s, Optimizer* optimizer,
                                        const std::vector<GradAndVar>& grads, Output global_step,
                                        const SyncPsOptions& options);

// The chief's sync bookkeeping: once per session (also after a recovery),
// tell the accumulators the global step and open it for every worker.
class SyncChiefHook : public SessionRunHook {
 public:
  explicit SyncChiefHook(SyncPsNames names) : names_(std::move(names)) {}
  absl::Status AfterCreateSession(Session* session) override;

 private:
  const SyncPsNames names_;
};

// The chief's aggregation loop, on a thread and a session of its own: wait
// for the step's gradients, apply their average, release the next step. A
// failed run (a task restarting) starts over with a new session.
class ChiefUpdateThread {
 public:
  using NewSession = std::function<absl::StatusOr<std::unique_ptr<Session>>()>;
  ChiefUpdateThread(NewSession new_session, std::string chief_update);
  ~ChiefUpdateThread() { Stop(); }
  ChiefUpdateThread(const ChiefUpdateThread&) = delete;
  ChiefUpdateThread& operator=(const ChiefUpdateThread&) = delete;
  // Returns within about take_timeout_ms (the pending take times out).
  void Stop();

 private:
  void Loop(NewSession new_session, std::string chief_update);
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// This worker's next token: the value to feed as names.local_step (its
// global step), or nullopt once `global_step_tensor` has reached `steps`
// (the other workers took the last step's tokens and the chief is done).
// A token not yet open is waited for (bounded by take_timeout_ms per try).
absl::StatusOr<std::optional<Tensor>> TakeSyncToken(MonitoredSession* session,
                                                    const SyncPsNames& names,
                                                    const std::string& global_step_tensor,
                                                    int64_t steps);

// One step of a worker in one run: `feeds` and `token` (as local_step), the
// worker's contribution (names.train), `fetches`, and the next step's token.
struct SyncStepResult {
  std::vector<Tensor> fetched;  // one per fetch; empty when `next` timed out
  // The next step's token; unset when it did not come within
  // take_timeout_ms (the chief evaluating, or done): the contribution was
  // made, and TakeSyncToken waits for the token.
  std::optional<Tensor> next;
};
absl::StatusOr<SyncStepResult> RunSyncStep(MonitoredSession* session, const SyncPsNames& names,
                                           const Tensor& token,
                                           std::vector<std::pair<std::string, Tensor>> feeds,
                                           std::vector<std::string> fetches);

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_SYNC_PS_WORKER_H_
