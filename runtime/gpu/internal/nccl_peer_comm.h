// NcclPeerComm: one member's NCCL communicator in a group whose GPUs are in
// several processes, and the order in which its all-reduces are launched.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<NcclPeerComm> comm,
//                    NcclPeerComm::Get(params, gpu, transport));   // cached
//   comm->Enqueue({.execution = "g1/i7/n0", .params = params, .device = gpu,
//                  .input = x, .done = done});
//
// Creation (once per transport, group_key, group_devices, rank and GPU):
// every other rank sends its GPU's UUID to rank 0 under
// "g<group>/nccl_uuid/<rank>". When two members are on one GPU (workers
// sharing it), NCCL cannot make the communicator ("Duplicate GPU detected"):
// rank 0 then sends every rank a one-byte "no" under "g<group>/nccl_id" and
// every member, now and later, is handed back to the CPU ring (its done gets
// Unimplemented; see CrossProcessAllReduceImpl). Otherwise rank 0 calls
// ncclGetUniqueId and sends the id's NCCL_UNIQUE_ID_BYTES there; every rank
// then calls ncclCommInitRank (non-blocking, on a thread of its own) and
// waits at most the first member's timeout for all ranks to join.
//
// Order. NCCL needs every rank to launch the collectives of a communicator
// in the same order, but the instances of one step become ready in any
// order on each process (gradient buckets). Rank 0 launches its members in
// arrival order and tells every other rank, under "g<group>/nccl_order/<k>",
// which execution (and its dtype and element count) is the k-th; the others
// launch in that order, each member when its turn comes.
//
// Completion. Each all-reduce runs on the member's compute stream (inputs are
// ordered there already); `done` gets the output (fresh memory from the
// member's allocator) once the GPU finished it, so a peer that died or
// disagreed is reported, not hidden. A process-wide watchdog aborts the
// communicator (ncclCommAbort, which stops its kernels) when an all-reduce
// is not complete within the member's timeout, when NCCL reports an
// asynchronous error, or when a member waits for its turn past its timeout.
// After any error the communicator is failed for good: members queued and
// later ones get that error (groups re-form under a new group_key).
//
// Limits: collectives of different groups over the same GPUs must not be in
// flight in orders that differ between processes (each group is ordered on
// its own); every process must use NCCL for the group (same build).
//
// Thread-safe. Communicators live until the process ends; the transport must
// outlive the communicators made over it.
#ifndef SLUICE_RUNTIME_GPU_INTERNAL_NCCL_PEER_COMM_H_
#define SLUICE_RUNTIME_GPU_INTERNAL_NCCL_PEER_COMM_H_

#include <nccl.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "runtime/collective/collective.h"
#include "runtime/gpu/gpu_device.h"

namespace sluice {
namespace internal {

// One member's part of one execution of an all-reduce.
struct NcclMember {
  std::string execution;  // "g1/i7/n0": the executor's prefix of the execution
  CollectiveParams params;
  GpuDevice* device = nullptr;
  Tensor input;  // the device's memory
  std::function<void(absl::StatusOr<Tensor>)> done;
};

class NcclPeerComm : public std::enable_shared_from_this<NcclPeerComm> {
 public:
  // The communicator of (transport, params.group_key, params.group_devices,
  // params.rank, gpu's ordinal), made on first use. Never fails today; the
  // StatusOr leaves room for limits.
  static absl::StatusOr<std::shared_ptr<NcclPeerComm>> Get(const CollectiveParams& params,
                                                           GpuDevice* gpu,
                                                           CollectiveTransport* transport);

  NcclPeerComm(const CollectiveParams& params, CollectiveTransport* transport);
  ~NcclPeerComm();
  NcclPeerComm(const NcclPeerComm&) = delete;
  NcclPeerComm& operator=(const NcclPeerComm&) = delete;

  // Takes the member; its `done` is called exactly once (maybe before this
  // returns, with an error).
  void Enqueue(NcclMember member);

  // The watchdog's check (see above); `now` is the current time.
  void Poll(absl::Time now);

 private:
  // kDeclined: members share a GPU; the CPU ring takes every all-reduce.
  enum class State { kNew, kStarting, kReady, kFailed, kDeclined };
  // A member that waits for its turn (follower) or for the communicator.
  struct Waiting {
    NcclMember member;
    absl::Time deadline;
  };
  // An execution rank 0 launched as the k-th.
  struct Order {
    std::string execution;
    DataType dtype = DT_INVALID;
    int64_t count = 0;
  };
  // Work to do once the lock is released: `done` callbacks, transport calls
  // (which may call back at once) and ThenExecute.
  using Actions = std::vector<std::function<void()>>;

  static void RunActions(Actions& actions);
  bool leader() const { return rank_ == 0; }
  std::string Describe() const;  // "NCCL communicator of group 1 (rank 0 of 2 on ...)"
  std::string IdKey() const;
  std::string UuidKey(int rank) const;
  std::string OrderKey(int64_t seq) const;

  // Rank 0: makes the id, sends it, then InitRank. Others get the id first.
  void StartLocked(int ordinal, int64_t timeout_ms, Actions& actions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // On a thread of its own: rank 0 makes and sends the id (given_id null);
  // then ncclCommInitRankConfig on GPU `ordinal` and the wait for all ranks.
  void InitThread(int ordinal, const ncclUniqueId* given_id, absl::Time deadline);
  void OnId(absl::StatusOr<Tensor> id, int ordinal, absl::Time deadline);
  // Rank 0: rank r's GPU UUID; when all are in, decides NCCL or the ring.
  void OnUuid(int r, absl::StatusOr<Tensor> uuid, int ordinal, absl::Time deadline);
  // Hands every waiting member back to the ring, and later ones too.
  void DeclineLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Declined() const;  // what a handed-back member's done gets
  void OnOrder(int64_t seq, absl::StatusOr<Tensor> order);
  // Launches what may go now; posts the next order Recv (followers).
  void PumpLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One all-reduce on the member's compute stream; fails the communicator
  // on an error (this rank would be out of step).
  void LaunchLocked(NcclMember member, Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After a call of the non-blocking communicator returned ncclInProgress:
  // its final result, or an error once `deadline` passed.
  absl::Status WaitLocked(absl::Time deadline, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Finished(uint64_t op, absl::Status status, Tensor output, const CollectiveParams& params,
                std::function<void(absl::StatusOr<Tensor>)> done);
  // Marks the communicator failed, aborts it and fails the waiting members.
  void FailLocked(const absl::Status& status, Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Fail(const absl::Status& status);

  const int64_t group_key_;
  const std::vector<std::string> devices_;
  const int rank_;
  CollectiveTransport* const transport_;

  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kNew;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  ncclComm_t comm_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Rank 0: members in arrival order. Others: members by execution.
  std::deque<Waiting> arrivals_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  // Others: the orders received and not yet launched, in sequence.
  std::deque<Order> orders_ ABSL_GUARDED_BY(mu_);
  // Rank 0: the members' GPU UUIDs by rank ("" until received).
  std::vector<std::string> uuids_ ABSL_GUARDED_BY(mu_);
  int uuids_missing_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;    // rank 0: next to send; others: next to receive
  bool receiving_ ABSL_GUARDED_BY(mu_) = false;  // an order Recv is posted
  // All-reduces launched and not finished: deadline and execution.
  struct InFlight {
    absl::Time deadline;
    std::string execution;
  };
  absl::flat_hash_map<uint64_t, InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t next_op_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_INTERNAL_NCCL_PEER_COMM_H_
