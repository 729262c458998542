#include "distributed/remote_rendezvous.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"

namespace sluice {

RemoteRendezvous::RemoteRendezvous(int64_t step_id, std::string task, WorkerCache* peers,
                                   CallPool* call_pool, int64_t timeout_ms)
    : step_id_(step_id),
      task_(std::move(task)),
      peers_(peers),
      call_pool_(call_pool),
      timeout_ms_(timeout_ms) {}

RemoteRendezvous::~RemoteRendezvous() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* pending) { return *pending == 0; }, &pending_fetches_));
}

absl::Status RemoteRendezvous::Send(const std::string& key, const Tensor& value) {
  return local_.Send(key, value);
}

void RemoteRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  absl::StatusOr<ParsedKey> parsed = ParseKey(key);
  if (!parsed.ok()) {
    done(parsed.status(), Tensor());
    return;
  }
  std::string src_task = TaskOfDevice(parsed->src_device);
  if (src_task == task_) {
    local_.RecvAsync(key, std::move(done));
    return;
  }
  if (peers_ == nullptr || call_pool_ == nullptr) {
    done(absl::FailedPreconditionError(
             absl::StrCat("receiving ", parsed->tensor_name, " from ", src_task, ": task ", task_,
                          " has no peers to fetch from")),
         Tensor());
    return;
  }
  int64_t fetch_id = -1;
  {
    absl::MutexLock lock(&mu_);
    // StartAbort marks the rendezvous aborted before it takes the receivers
    // (under mu_), so a receiver is either refused here or told there.
    if (!aborted()) {
      fetch_id = next_fetch_id_++;
      fetch_receivers_[fetch_id] = std::move(done);
      ++pending_fetches_;
    }
  }
  if (fetch_id < 0) {
    done(local_.abort_status(), Tensor());
    return;
  }
  call_pool_->Schedule([this, fetch_id, key, name = parsed->tensor_name,
                        src_task = std::move(src_task)]() mutable {
    Fetch(fetch_id, std::move(key), std::move(name), std::move(src_task));
  });
}

void RemoteRendezvous::Fetch(int64_t fetch_id, std::string key, std::string tensor_name,
                             std::string src_task) {
  absl::Status status;
  Tensor value;
  absl::StatusOr<WorkerInterface*> peer = peers_->GetWorker(src_task);
  if (!peer.ok()) {
    status = peer.status();
  } else {
    absl::StatusOr<Tensor> got = (*peer)->RecvTensor(step_id_, key, timeout_ms_);
    if (got.ok()) {
      value = *std::move(got);
    } else {
      status = got.status();
    }
  }
  status = AddContext(status, absl::StrCat("receiving ", tensor_name, " from ", src_task));
  DoneCallback receiver;
  {
    absl::MutexLock lock(&mu_);
    auto it = fetch_receivers_.find(fetch_id);
    if (it != fetch_receivers_.end()) {
      receiver = std::move(it->second);
      fetch_receivers_.erase(it);
    }
    // The fetch is over before its receiver runs: the receiver may end the
    // step and destroy this rendezvous (whose destructor waits for pending
    // fetches), so nothing below touches `this`.
    --pending_fetches_;
  }
  // Absent when StartAbort already told the receiver; the result is dropped.
  if (receiver) receiver(std::move(status), std::move(value));
}

void RemoteRendezvous::StartAbort(const absl::Status& status) {
  local_.StartAbort(status);
  aborted_.store(true, std::memory_order_release);
  const absl::Status reason = local_.abort_status();
  std::vector<DoneCallback> receivers;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, receiver] : fetch_receivers_) receivers.push_back(std::move(receiver));
    fetch_receivers_.clear();
  }
  for (DoneCallback& r : receivers) r(reason, Tensor());
}

absl::StatusOr<Tensor> RemoteRendezvous::WaitForLocal(const std::string& key,
                                                      int64_t timeout_ms) {
  if (timeout_ms <= 0) timeout_ms = timeout_ms_;
  std::shared_ptr<LocalWait> wait;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<LocalWait>& slot = local_waits_[key];
    if (slot == nullptr) {
      slot = std::make_shared<LocalWait>();
      // The callback runs at once (tensor already sent, or aborted) or from
      // the Send / StartAbort that provides it; it never takes mu_.
      local_.RecvAsync(key, [w = slot](absl::Status s, Tensor t) {
        w->status = std::move(s);
        w->value = std::move(t);
        w->done.Notify();
      });
    }
    wait = slot;
  }
  if (!wait->done.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) {
    // The pending receive stays in local_waits_ for a retry of this key.
    return absl::DeadlineExceededError(
        absl::StrCat("task ", task_, " step ", step_id_, ": tensor '", key,
                     "' was not sent within ", timeout_ms, " ms"));
  }
  if (!wait->status.ok()) return wait->status;
  {
    // Delivered: the rendezvous lets go of the buffer (waiters of the same
    // key that already hold `wait` still read it; it no longer changes).
    absl::MutexLock lock(&mu_);
    auto it = local_waits_.find(key);
    if (it != local_waits_.end() && it->second == wait) local_waits_.erase(it);
  }
  return wait->value;
}

}  // namespace sluice
