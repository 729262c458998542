#include "examples/sync_ps_worker.h"

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "training/sync_replicas.h"

namespace sluice {

absl::StatusOr<SyncPsNames> BuildSyncPs(const Scope& s, Optimizer* optimizer,
                                        const std::vector<GradAndVar>& grads, Output global_step,
                                        const SyncPsOptions& o) {
  SyncReplicasOptions options;
  options.total_num_replicas = o.workers;
  options.replicas_to_aggregate = o.replicas_to_aggregate > 0 ? o.replicas_to_aggregate : o.workers;
  // Bounded waits: a take or token that is not served within this fails the
  // step (retried) instead of blocking a stopped cluster.
  options.take_timeout_ms = o.take_timeout_ms;
  options.replica_index = o.replica_index;
  ASSIGN_OR_RETURN(SyncReplicas sr, BuildSyncReplicas(s, optimizer, grads, global_step, options));
  SyncPsNames n;
  n.train = sr.apply_gradients->name();
  n.chief_update = sr.chief_update->name();
  n.token = absl::StrCat(sr.token.node->name(), ":0");
  n.next_token = absl::StrCat(sr.next_token.node->name(), ":0");
  n.local_step = sr.local_step.node->name();
  n.init_tokens = sr.init_tokens->name();
  n.set_global_step = sr.set_global_step->name();
  return n;
}

absl::Status SyncChiefHook::AfterCreateSession(Session* session) {
  RETURN_IF_ERROR(session->Run({}, {}, {names_.set_global_step}).status());
  return session->Run({}, {}, {names_.init_tokens}).status();
}

ChiefUpdateThread::ChiefUpdateThread(NewSession new_session, std::string chief_update)
    : thread_(&ChiefUpdateThread::Loop, this, std::move(new_session), std::move(chief_update)) {}

void ChiefUpdateThread::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ChiefUpdateThread::Loop(NewSession new_session, std::string chief_update) {
  std::unique_ptr<Session> session;
  while (!stop_.load()) {
    if (session == nullptr) {
      absl::StatusOr<std::unique_ptr<Session>> s = new_session();
      if (!s.ok()) continue;  // the cluster is recovering; NewSession waits
      session = *std::move(s);
    }
    absl::Status s = session->Run({}, {}, {chief_update}).status();
    if (!s.ok() && s.code() != absl::StatusCode::kDeadlineExceeded) {
      session.reset();  // a task died or restarted: start over with a new session
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

absl::StatusOr<std::optional<Tensor>> TakeSyncToken(MonitoredSession* session,
                                                    const SyncPsNames& names,
                                                    const std::string& global_step_tensor,
                                                    int64_t steps) {
  while (true) {
    absl::StatusOr<std::vector<Tensor>> token = session->RunWithoutHooks({}, {names.token}, {});
    if (token.ok()) return std::optional<Tensor>((*token)[0]);
    if (token.status().code() != absl::StatusCode::kDeadlineExceeded) return token.status();
    // Not open yet, or never again: the other workers may have taken the
    // last step's tokens and the chief finished.
    absl::StatusOr<std::vector<Tensor>> global = session->RunWithoutHooks({}, {global_step_tensor}, {});
    if (global.ok() && (*global)[0].scalar<int64_t>() >= steps) return std::optional<Tensor>();
  }
}

absl::StatusOr<SyncStepResult> RunSyncStep(MonitoredSession* session, const SyncPsNames& names,
                                           const Tensor& token,
                                           std::vector<std::pair<std::string, Tensor>> feeds,
                                           std::vector<std::string> fetches) {
  feeds.emplace_back(names.local_step, token);
  fetches.push_back(names.next_token);
  absl::StatusOr<std::vector<Tensor>> out = session->Run(feeds, fetches, {names.train});
  SyncStepResult result;
  if (!out.ok()) {
    // next_token runs after the contribution: its deadline leaves the step
    // done on this worker's side.
    const std::string dequeue = names.next_token.substr(0, names.next_token.rfind(':'));
    if (out.status().code() == absl::StatusCode::kDeadlineExceeded &&
        absl::StrContains(out.status().message(), dequeue)) {
      return result;
    }
    return out.status();
  }
  result.next = std::move(out->back());
  out->pop_back();
  result.fetched = *std::move(out);
  return result;
}

}  // namespace sluice
