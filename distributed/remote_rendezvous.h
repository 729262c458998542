// RemoteRendezvous: a step's rendezvous on one task. Tensors sent by this
// task's partitions stay in process (shared, not copied); a Recv whose key
// names a sending device of another task fetches the tensor with that
// task's RecvTensor, on a thread of `call_pool` (the RPC blocks until the
// peer's partition has sent it).
//
//   RemoteRendezvous rendezvous(step_id, "/job:worker/replica:0/task:1", &cache,
//                               &call_pool, /*timeout_ms=*/60000);
//   executor_args.rendezvous = &rendezvous;
//
// A failed fetch (peer dead, unreachable, deadline) calls the receiver with
// an error naming the peer task; the executor then aborts the step. Waiting
// fetches are not interrupted by StartAbort (they end when the peer answers,
// which the master's AbortStep to every task makes prompt, or at the
// deadline); their results are then dropped. Their receivers, though, are
// told at once: StartAbort calls every waiting receiver with the abort
// status, local or remote, so the step's executors finish promptly.
//
// WaitForLocal keeps one pending local receive per key, shared by every
// waiter of that key: a wait that times out leaves it in place, and a retry
// of the same key (a peer's RPC retried after its deadline) waits on it
// instead of being refused as a second receive. The tensor is released when
// a waiter returns it; a request for the key after that is refused.
//
// Thread-safe. Must outlive every pending fetch: the destructor waits for
// them (not for receivers they are calling: a receiver may destroy it).
#ifndef SLUICE_DISTRIBUTED_REMOTE_RENDEZVOUS_H_
#define SLUICE_DISTRIBUTED_REMOTE_RENDEZVOUS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distributed/call_pool.h"
#include "distributed/worker_interface.h"
#include "runtime/rendezvous.h"

namespace sluice {

class RemoteRendezvous : public Rendezvous {
 public:
  RemoteRendezvous(int64_t step_id, std::string task, WorkerCache* peers, CallPool* call_pool,
                   int64_t timeout_ms);
  ~RemoteRendezvous() override;

  absl::Status Send(const std::string& key, const Tensor& value) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;

  // What peers' RecvTensor calls read: waits up to `timeout_ms` for the
  // tensor a local partition sends under `key`.
  absl::StatusOr<Tensor> WaitForLocal(const std::string& key, int64_t timeout_ms);
  absl::Status abort_status() const override { return local_.abort_status(); }

 private:
  // One pending local receive that WaitForLocal callers share.
  struct LocalWait {
    absl::Notification done;
    absl::Status status;  // written before `done` is notified
    Tensor value;
  };
  // Fetches `key` from `src_task` on a call_pool_ thread; calls the
  // receiver registered under `fetch_id` unless StartAbort took it.
  void Fetch(int64_t fetch_id, std::string key, std::string tensor_name, std::string src_task);

  const int64_t step_id_;
  const std::string task_;
  WorkerCache* const peers_;
  CallPool* const call_pool_;
  const int64_t timeout_ms_;
  LocalRendezvous local_;
  absl::Mutex mu_;
  int pending_fetches_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_fetch_id_ ABSL_GUARDED_BY(mu_) = 0;
  // Receivers of fetches in flight, by fetch id.
  absl::flat_hash_map<int64_t, DoneCallback> fetch_receivers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<LocalWait>> local_waits_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_REMOTE_RENDEZVOUS_H_
