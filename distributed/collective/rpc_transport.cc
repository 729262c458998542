#include "distributed/collective/rpc_transport.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sluice {
namespace {

// A probe waits at least this long for the peer's answer.
constexpr int64_t kMinProbeTimeoutMs = 1000;

int64_t CeilMs(absl::Duration d) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(absl::ToDoubleMilliseconds(d))));
}

// "task T (host:port)" or "task T".
std::string Peer(const std::string& task, const std::string& address) {
  return address.empty() ? task : absl::StrCat(task, " (", address, ")");
}

}  // namespace

class RpcCollectiveTransport::Impl {
 public:
  Impl(std::string task, CollectiveMailbox* mailbox, WorkerCache* peers, Options options)
      : task_(std::move(task)),
        mailbox_(mailbox),
        peers_(peers),
        options_(Sanitize(options)),
        probe_timeout_ms_(std::max(kMinProbeTimeoutMs, options_.probe_interval_ms)),
        pool_(absl::StrCat("collective", task_), options_.max_concurrent_pushes + 2) {}

  // Fails what is queued, stops the receives waiting here and waits for
  // everything in flight.
  void Shutdown();

  void Send(const std::string& to_device, const std::string& key, const Tensor& value,
            int64_t timeout_ms, std::function<void(absl::Status)> done);
  // `landing` may be uninitialized (none).
  void Recv(const std::string& from_device, const std::string& to_device, const std::string& key,
            Tensor landing, int64_t timeout_ms, std::function<void(absl::StatusOr<Tensor>)> done);
  void Abort(const std::string& key_prefix, const absl::Status& status);
  void TellAborted(const std::string& to_device, const std::string& key_prefix,
                   const absl::Status& status, int64_t timeout_ms);
  // Only a peer reached over the network: an in-process WorkerInterface
  // (tests) delivers the tensor itself, buffer shared.
  bool CopiesOnSend(const std::string& to_device) const {
    if (peers_ == nullptr) return false;
    const std::string to_task = TaskOfDevice(to_device);
    if (to_task == task_) return false;
    absl::StatusOr<WorkerInterface*> peer = peers_->GetWorker(to_task);
    return peer.ok() && !(*peer)->address().empty();
  }

 private:
  struct Push {
    std::string to_device;
    std::string to_task;
    std::string key;
    Tensor value;
    int64_t timeout_ms = 0;
    absl::Time deadline;
    std::function<void(absl::Status)> done;
  };

  // A receive from a member on another task, waiting in slices.
  struct RecvOp {
    uint64_t id = 0;
    std::string from_device;
    std::string from_task;
    std::string to_device;
    std::string key;
    int64_t timeout_ms = 0;
    absl::Time started;
    absl::Time deadline;
    absl::Time slice_end;
    int64_t incarnation = 0;  // the sender's, as this receive first saw it
    bool landing = false;     // registered in the mailbox
    std::function<void(absl::StatusOr<Tensor>)> done;
  };

  struct ProbeResult {
    absl::Status status;  // OK: the task answered
    int64_t incarnation = 0;
    // When the task's previous incarnation was last seen (InfinitePast if
    // it never changed).
    absl::Time previous_last_seen = absl::InfinitePast();
    std::string address;
  };
  using ProbeCallback = std::function<void(const ProbeResult&)>;

  // What is known of one peer task's liveness; one probe in flight at most.
  struct PeerState {
    bool probing = false;
    absl::Time done_at = absl::InfinitePast();
    ProbeResult last;
    absl::Time incarnation_last_seen = absl::InfinitePast();
    std::vector<ProbeCallback> waiters;
  };

  static Options Sanitize(Options o) {
    o.max_concurrent_pushes = std::max(1, o.max_concurrent_pushes);
    o.probe_interval_ms = std::max<int64_t>(1, o.probe_interval_ms);
    return o;
  }

  // Runs `first` and then queued pushes on a pool thread.
  void PushLoop(std::shared_ptr<Push> first);
  absl::Status DoPush(const Push& p);
  std::string AddressOf(const std::string& task);

  void Wait(const std::shared_ptr<RecvOp>& op);
  void OnSlice(const std::shared_ptr<RecvOp>& op, absl::StatusOr<Tensor> value);
  void OnProbe(const std::shared_ptr<RecvOp>& op, const ProbeResult& r);
  void Finish(const std::shared_ptr<RecvOp>& op, absl::StatusOr<Tensor> value);
  // `done` once the task's liveness is known (a recent answer is reused).
  void Probe(const std::string& task, ProbeCallback done);
  void RunProbe(const std::string& task);

  void Left() {
    absl::MutexLock lock(&mu_);
    --active_;
  }

  const std::string task_;
  CollectiveMailbox* const mailbox_;
  WorkerCache* const peers_;
  const Options options_;
  const int64_t probe_timeout_ms_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Sends and remote receives whose `done` has not returned yet.
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  int pushes_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::shared_ptr<Push>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t next_recv_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<RecvOp>> recvs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, PeerState> peer_states_ ABSL_GUARDED_BY(mu_);

  // Last member: destroyed (joining its threads) before the state above.
  CallPool pool_;
};

// ---------------------------------------------------------------- sending

void RpcCollectiveTransport::Impl::Send(const std::string& to_device, const std::string& key,
                                        const Tensor& value, int64_t timeout_ms,
                                        std::function<void(absl::Status)> done) {
  std::string to_task = TaskOfDevice(to_device);
  if (to_task == task_) return mailbox_->Send(to_device, key, value, timeout_ms, std::move(done));
  if (peers_ == nullptr) {
    return done(absl::FailedPreconditionError(absl::StrCat(
        "collective: task ", task_, " cannot send '", key, "' to ", to_device,
        ": it knows no other tasks (no worker cache)")));
  }
  auto p = std::make_shared<Push>();
  p->to_device = to_device;
  p->to_task = std::move(to_task);
  p->key = key;
  p->value = value;
  p->timeout_ms = timeout_ms > 0 ? timeout_ms : kDefaultCollectiveTimeoutMs;
  p->deadline = absl::Now() + absl::Milliseconds(p->timeout_ms);
  p->done = std::move(done);
  bool start = false;
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      ++active_;
      if (pushes_running_ < options_.max_concurrent_pushes) {
        ++pushes_running_;
        start = true;
      } else {
        queue_.push_back(p);
        return;
      }
    }
  }
  if (!start) {
    return p->done(absl::CancelledError(absl::StrCat(
        "collective: task ", task_, " is shutting down; '", key, "' not sent to ", to_device)));
  }
  pool_.Schedule([this, p] { PushLoop(p); });
}

void RpcCollectiveTransport::Impl::PushLoop(std::shared_ptr<Push> p) {
  while (p != nullptr) {
    absl::Status status = DoPush(*p);
    std::function<void(absl::Status)> done = std::move(p->done);
    p = nullptr;  // the tensor goes before `done` runs
    done(status);
    absl::MutexLock lock(&mu_);
    --active_;
    if (!queue_.empty() && !stopping_) {
      p = std::move(queue_.front());
      queue_.pop_front();
    } else {
      --pushes_running_;
    }
  }
}

absl::Status RpcCollectiveTransport::Impl::DoPush(const Push& p) {
  const absl::Duration left = p.deadline - absl::Now();
  absl::StatusOr<WorkerInterface*> peer = peers_->GetWorker(p.to_task);
  if (!peer.ok()) {
    return absl::Status(peer.status().code(),
                        absl::StrCat("collective: cannot send '", p.key, "' to ", p.to_device,
                                     ": ", peer.status().message()));
  }
  const std::string where = Peer(p.to_task, (*peer)->address());
  if (left <= absl::ZeroDuration()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "collective peer ", where, ": '", p.key, "' for ", p.to_device, " waited ", p.timeout_ms,
        " ms behind other pushes and was not sent"));
  }
  absl::Status s = (*peer)->CollectivePush(p.to_device, p.key, p.value, CeilMs(left));
  if (s.ok()) return s;
  if (s.code() == absl::StatusCode::kUnavailable) {
    return absl::UnavailableError(absl::StrCat("collective peer ", where, " is unreachable: sending '",
                                               p.key, "' to ", p.to_device, ": ", s.message()));
  }
  if (s.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(absl::StrCat("collective peer ", where, " did not take '",
                                                    p.key, "' for ", p.to_device, " within ",
                                                    p.timeout_ms, " ms: ", s.message()));
  }
  return absl::Status(s.code(), absl::StrCat("collective: sending '", p.key, "' to ", p.to_device,
                                             ": ", s.message()));
}

std::string RpcCollectiveTransport::Impl::AddressOf(const std::string& task) {
  absl::StatusOr<WorkerInterface*> peer = peers_->GetWorker(task);
  return peer.ok() ? (*peer)->address() : "";
}

// -------------------------------------------------------------- receiving

void RpcCollectiveTransport::Impl::Recv(const std::string& from_device,
                                        const std::string& to_device, const std::string& key,
                                        Tensor landing, int64_t timeout_ms,
                                        std::function<void(absl::StatusOr<Tensor>)> done) {
  std::string from_task = TaskOfDevice(from_device);
  if (from_task == task_ || peers_ == nullptr) {
    return mailbox_->Recv(from_device, to_device, key, timeout_ms, std::move(done));
  }
  auto op = std::make_shared<RecvOp>();
  if (landing.IsInitialized()) {
    mailbox_->ExpectInto(to_device, key, std::move(landing));
    op->landing = true;
  }
  op->from_device = from_device;
  op->from_task = std::move(from_task);
  op->to_device = to_device;
  op->key = key;
  op->timeout_ms = timeout_ms > 0 ? timeout_ms : kDefaultCollectiveTimeoutMs;
  op->started = absl::Now();
  op->deadline = op->started + absl::Milliseconds(op->timeout_ms);
  op->done = std::move(done);
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      ++active_;
      op->id = next_recv_id_++;
      recvs_[op->id] = op;
    }
  }
  if (op->id == 0) {
    if (op->landing) mailbox_->DropLanding(to_device, key);
    return op->done(absl::CancelledError(absl::StrCat(
        "collective: task ", task_, " is shutting down; '", key, "' not received")));
  }
  Wait(op);
}

void RpcCollectiveTransport::Impl::Wait(const std::shared_ptr<RecvOp>& op) {
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
  }
  if (stopping) {
    return Finish(op, absl::CancelledError(absl::StrCat("collective: task ", task_,
                                                        " is shutting down; '", op->key,
                                                        "' from ", op->from_device, " not received")));
  }
  const absl::Time now = absl::Now();
  if (now >= op->deadline) return OnSlice(op, absl::DeadlineExceededError("deadline"));
  const absl::Duration slice =
      std::min(op->deadline - now, absl::Milliseconds(options_.probe_interval_ms));
  const int64_t slice_ms = CeilMs(slice);
  op->slice_end = now + absl::Milliseconds(slice_ms);
  mailbox_->Recv(op->from_device, op->to_device, op->key, slice_ms,
                 [this, op](absl::StatusOr<Tensor> v) { OnSlice(op, std::move(v)); });
}

void RpcCollectiveTransport::Impl::OnSlice(const std::shared_ptr<RecvOp>& op,
                                           absl::StatusOr<Tensor> value) {
  const absl::Time now = absl::Now();
  // A value, or an error other than this slice running out (an abort whose
  // status happens to be DeadlineExceeded comes before the slice's end).
  if (value.ok() || value.status().code() != absl::StatusCode::kDeadlineExceeded ||
      now < op->slice_end) {
    return Finish(op, std::move(value));
  }
  if (now >= op->deadline) {
    const std::string address = AddressOf(op->from_task);
    return Finish(op, absl::DeadlineExceededError(absl::StrCat(
                          "collective: no message '", op->key, "' for ", op->to_device, " from ",
                          op->from_device, " (task ", Peer(op->from_task, address), ") within ",
                          op->timeout_ms, " ms")));
  }
  Probe(op->from_task, [this, op](const ProbeResult& r) { OnProbe(op, r); });
}

void RpcCollectiveTransport::Impl::OnProbe(const std::shared_ptr<RecvOp>& op,
                                           const ProbeResult& r) {
  const std::string where = Peer(op->from_task, r.address);
  if (!r.status.ok()) {
    return Finish(op, absl::UnavailableError(absl::StrCat(
                          "collective peer ", where, " is unreachable: ", op->to_device,
                          " waits for '", op->key, "' from ", op->from_device, ": ",
                          r.status.message())));
  }
  const bool restarted = op->incarnation != 0 ? r.incarnation != op->incarnation
                                              : r.previous_last_seen >= op->started;
  if (restarted) {
    return Finish(op, absl::UnavailableError(absl::StrCat(
                          "collective peer ", where, " restarted (new incarnation ",
                          absl::Hex(r.incarnation), ") while ", op->to_device, " waited for '",
                          op->key, "' from ", op->from_device)));
  }
  op->incarnation = r.incarnation;
  Wait(op);
}

void RpcCollectiveTransport::Impl::Finish(const std::shared_ptr<RecvOp>& op,
                                          absl::StatusOr<Tensor> value) {
  {
    absl::MutexLock lock(&mu_);
    recvs_.erase(op->id);
  }
  // Delivered values took their landing with them; a failed receive's stays.
  if (op->landing && !value.ok()) mailbox_->DropLanding(op->to_device, op->key);
  std::function<void(absl::StatusOr<Tensor>)> done = std::move(op->done);
  done(std::move(value));
  Left();
}

// ---------------------------------------------------------------- probing

void RpcCollectiveTransport::Impl::Probe(const std::string& task, ProbeCallback done) {
  ProbeResult fresh;
  {
    absl::MutexLock lock(&mu_);
    PeerState& peer = peer_states_[task];
    // A recent answer serves every receive that waits on the same task.
    const absl::Duration reuse = absl::Milliseconds(options_.probe_interval_ms) / 2;
    if (peer.probing || absl::Now() - peer.done_at >= reuse) {
      peer.waiters.push_back(std::move(done));
      if (peer.probing) return;
      peer.probing = true;
      pool_.Schedule([this, task] { RunProbe(task); });
      return;
    }
    fresh = peer.last;
  }
  done(fresh);
}

void RpcCollectiveTransport::Impl::RunProbe(const std::string& task) {
  ProbeResult r;
  absl::StatusOr<WorkerInterface*> peer = peers_->GetWorker(task);
  if (!peer.ok()) {
    r.status = peer.status();
  } else {
    r.address = (*peer)->address();
    absl::StatusOr<WorkerInfo> info = (*peer)->GetStatusWithin(probe_timeout_ms_);
    if (info.ok()) {
      r.incarnation = info->incarnation;
    } else {
      r.status = info.status();
    }
  }
  std::vector<ProbeCallback> waiters;
  {
    absl::MutexLock lock(&mu_);
    PeerState& state = peer_states_[task];
    const absl::Time now = absl::Now();
    if (r.status.ok()) {
      if (state.last.incarnation != 0 && state.last.incarnation != r.incarnation) {
        r.previous_last_seen = state.incarnation_last_seen;
      } else {
        r.previous_last_seen = state.last.previous_last_seen;
      }
      state.incarnation_last_seen = now;
    } else {
      r.incarnation = state.last.incarnation;
      r.previous_last_seen = state.last.previous_last_seen;
    }
    state.last = r;
    state.done_at = now;
    state.probing = false;
    waiters.swap(state.waiters);
  }
  for (ProbeCallback& w : waiters) w(r);
}

// --------------------------------------------------------------- aborting

void RpcCollectiveTransport::Impl::Abort(const std::string& key_prefix,
                                         const absl::Status& status) {
  mailbox_->Abort(key_prefix, status);
  std::vector<std::shared_ptr<Push>> dropped;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (absl::StartsWith((*it)->key, key_prefix)) {
        dropped.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& p : dropped) {
    p->done(status);
    Left();
  }
}

void RpcCollectiveTransport::Impl::TellAborted(const std::string& to_device,
                                               const std::string& key_prefix,
                                               const absl::Status& status, int64_t timeout_ms) {
  // Members on this task saw the Abort that came before.
  if (peers_ == nullptr || TaskOfDevice(to_device) == task_) return;
  Send(to_device, CollectiveMailbox::AbortKey(key_prefix), CollectiveMailbox::AbortNotice(status),
       timeout_ms, [](absl::Status) {});
}

void RpcCollectiveTransport::Impl::Shutdown() {
  std::deque<std::shared_ptr<Push>> queued;
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queued.swap(queue_);
    for (const auto& [id, op] : recvs_) keys.push_back(op->key);
  }
  const absl::Status cancelled =
      absl::CancelledError(absl::StrCat("collective: task ", task_, " is shutting down"));
  for (auto& p : queued) {
    p->done(cancelled);
    Left();
  }
  // Receives waiting in the mailbox end now; one between slices finds the
  // key aborted (or sees stopping_) when it asks again.
  for (const std::string& key : keys) mailbox_->Abort(key, cancelled);
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(+[](int* n) { return *n == 0; }, &active_));
}

// ---------------------------------------------------------------- facade

RpcCollectiveTransport::RpcCollectiveTransport(std::string task, CollectiveMailbox* mailbox,
                                               WorkerCache* peers, Options options)
    : impl_(std::make_unique<Impl>(std::move(task), mailbox, peers, options)) {}

RpcCollectiveTransport::~RpcCollectiveTransport() { impl_->Shutdown(); }

void RpcCollectiveTransport::Send(const std::string& to_device, const std::string& key,
                                  const Tensor& value, int64_t timeout_ms,
                                  std::function<void(absl::Status)> done) {
  impl_->Send(to_device, key, value, timeout_ms, std::move(done));
}

void RpcCollectiveTransport::Recv(const std::string& from_device, const std::string& to_device,
                                  const std::string& key, int64_t timeout_ms,
                                  std::function<void(absl::StatusOr<Tensor>)> done) {
  impl_->Recv(from_device, to_device, key, Tensor(), timeout_ms, std::move(done));
}

void RpcCollectiveTransport::RecvInto(const std::string& from_device,
                                      const std::string& to_device, const std::string& key,
                                      Tensor landing, int64_t timeout_ms,
                                      std::function<void(absl::StatusOr<Tensor>)> done) {
  impl_->Recv(from_device, to_device, key, std::move(landing), timeout_ms, std::move(done));
}

void RpcCollectiveTransport::Abort(const std::string& key_prefix, const absl::Status& status) {
  impl_->Abort(key_prefix, status);
}

void RpcCollectiveTransport::TellAborted(const std::string& to_device,
                                         const std::string& key_prefix,
                                         const absl::Status& status, int64_t timeout_ms) {
  impl_->TellAborted(to_device, key_prefix, status, timeout_ms);
}

bool RpcCollectiveTransport::CopiesOnSend(const std::string& to_device) const {
  return impl_->CopiesOnSend(to_device);
}

}  // namespace sluice
