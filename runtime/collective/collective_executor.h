// CollectiveExecutor: runs this process's members of collectives.
//
//   CollectiveMailbox box;                         // or a remote transport
//   CollectiveExecutor collectives(&box);
//   collectives.Run(params, device, input, [](absl::StatusOr<Tensor> out) { ... });
//
// How each kind runs (N members, rank r):
//  - N = 1: every kind's result is the input itself (the same buffer); no
//    implementation is asked.
//  - kAllReduce. When every member is a device of this process and a local
//    implementation is registered for their device type (NCCL for GPUs,
//    ops/gpu), that runs it. Else a ring over the transport: reduce-scatter
//    then all-gather. The tensor is cut into N segments and each segment
//    into chunks of chunk_bytes; every chunk moves through its 2(N-1) ring
//    steps on its own, so chunks pipeline and all links work at once, and
//    each member sends and receives about 2(N-1)/N of the tensor. Members of
//    one process that share the CPU take a shortcut: the last to arrive sums
//    their inputs for them. kMean divides by N at the end.
//    Members spread over processes, all devices of one type: a
//    cross-process implementation registered for that type (NCCL for GPUs,
//    ops/gpu) takes the collective when it accepts it; else the ring.
//    Registered implementations are skipped for communication_hint "ring"
//    and for inputs in host memory on a device that has its own (a GPU's
//    int32).
//  - kBroadcast: the source's value travels down the ring (chunk by chunk,
//    pipelined); non-source inputs only give dtype and shape.
//  - kAllGather: the members' inputs (same dtype, same shape after dim 0)
//    concatenated along dim 0 in rank order; a ring all-gather.
// Device tensors (a GPU's) that take the ring are copied to the host first
// and the result copied back, so `done` always gets a tensor in the memory
// the input was in. CPU members' ring results come from a caching host pool
// the executor keeps (a BfcAllocator, up to 1 GiB, past which the device's
// allocator serves): a training step's all-reduces reuse the previous
// step's memory instead of faulting in fresh pages.
//
// Errors: params.Validate()'s; dtype/shape disagreements between members
// (InvalidArgument naming both ranks, detected from the first message); a
// peer that does not answer within timeout_ms (DeadlineExceeded or
// Unavailable naming its device and task). After an error the group's
// instance is aborted on this process so other local members stop too.
//
// Execution counting: the n-th Run of (group_key, instance_key, rank)
// meets the n-th Run of the same instance on the other ranks. ResetGroup
// forgets the counts and aborts what is in flight (recovery re-forms the
// group under a new key instead, when members restarted).
//
// Thread-safe; `done` may run on any thread and must not block for long.
#ifndef SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_EXECUTOR_H_
#define SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/collective/collective.h"
#include "runtime/device.h"

namespace sluice {

namespace internal {
class CollectiveTimer;
class LocalJoin;
struct JoinMember;
}  // namespace internal

// A local all-reduce for devices of one type, all in this process: gets
// every member's device and input at once, calls `done` once with the
// members' outputs in rank order.
using LocalAllReduceImpl = std::function<void(
    const CollectiveParams& params, const std::vector<Device*>& devices,
    const std::vector<Tensor>& inputs, std::function<void(absl::StatusOr<std::vector<Tensor>>)> done)>;


// An all-reduce for members that are all devices of one type, in several
// processes: one member's part. `execution` is the prefix of this
// execution's transport keys ("g1/i7/n0"); the implementation's own keys
// must start with "g<group_key>/" so that ResetGroup aborts them too.
// Returns OK when it took the member: `done` is then called exactly once
// with the result in the input's memory. Returns Unimplemented (without
// calling `done`) to leave the member to the CPU ring: every member must
// decide alike, from params and the input's dtype and shape only. Any other
// error fails the member (`done` not called by the implementation).
// A member it took may still be handed back: `done` with Unimplemented runs
// the CPU ring for that execution, for a decision the members can only make
// together (NCCL's, when two processes turn out to share a GPU). Every
// member of the execution must be handed back alike.
using CrossProcessAllReduceImpl = std::function<absl::Status(
    const CollectiveParams& params, const std::string& execution, Device* device,
    const Tensor& input, CollectiveTransport* transport,
    std::function<void(absl::StatusOr<Tensor>)> done)>;

// Where an executor finds a device type's own all-reduce (the backends it
// runs with: runtime/backend.h); a type without one takes the CPU ring.
// Every process of a group must provide the same implementations.
class AllReduceProvider {
 public:
  virtual ~AllReduceProvider() = default;
  // Null when the type has none.
  virtual LocalAllReduceImpl LocalAllReduceFor(const std::string& device_type) const = 0;
  virtual CrossProcessAllReduceImpl CrossProcessAllReduceFor(
      const std::string& device_type) const = 0;
};

// An AllReduceProvider from explicit entries (tests; a BackendRegistry is
// the usual provider). Fill it before an executor uses it.
class AllReduceTable : public AllReduceProvider {
 public:
  void SetLocal(const std::string& device_type, LocalAllReduceImpl impl) {
    local_[device_type] = std::move(impl);
  }
  void SetCrossProcess(const std::string& device_type, CrossProcessAllReduceImpl impl) {
    cross_[device_type] = std::move(impl);
  }
  LocalAllReduceImpl LocalAllReduceFor(const std::string& device_type) const override {
    auto it = local_.find(device_type);
    return it == local_.end() ? nullptr : it->second;
  }
  CrossProcessAllReduceImpl CrossProcessAllReduceFor(
      const std::string& device_type) const override {
    auto it = cross_.find(device_type);
    return it == cross_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, LocalAllReduceImpl> local_;
  std::map<std::string, CrossProcessAllReduceImpl> cross_;
};

class CollectiveExecutor {
 public:
  // `transport` and `all_reduce` (null: the CPU ring for every device type)
  // must outlive the executor.
  explicit CollectiveExecutor(CollectiveTransport* transport,
                              const AllReduceProvider* all_reduce = nullptr,
                              int64_t default_chunk_bytes = 1 << 20);
  ~CollectiveExecutor();
  CollectiveExecutor(const CollectiveExecutor&) = delete;
  CollectiveExecutor& operator=(const CollectiveExecutor&) = delete;

  // One member's part; `device` is the member's device (its allocator and
  // copies are used). `done` exactly once.
  void Run(const CollectiveParams& params, Device* device, const Tensor& input,
           std::function<void(absl::StatusOr<Tensor>)> done);

  // Aborts the group's collectives in flight here with `status` and forgets
  // its execution counts.
  void ResetGroup(int64_t group_key, const absl::Status& status);

  CollectiveTransport* transport() const { return transport_; }

 private:
  // "g<group>/i<instance>/n<execution>": the prefix of every key of one
  // execution of an instance.
  std::string NextExecution(const CollectiveParams& params);
  // The CPU ring (through host memory when the input is on a device).
  void RunOnRing(CollectiveParams params, const std::string& prefix, Device* device,
                 const Tensor& input, std::function<void(absl::StatusOr<Tensor>)> done);
  // Members all in this process meet in a LocalJoin.
  void Join(const std::string& prefix, LocalAllReduceImpl impl, internal::JoinMember member);
  void OnJoinTimeout(const std::string& prefix, const std::shared_ptr<internal::LocalJoin>& join);

  CollectiveTransport* const transport_;
  const AllReduceProvider* const all_reduce_;
  const int64_t default_chunk_bytes_;
  // Host memory for ring results and piece copies, cached for the next
  // execution (fresh pages cost more than the transfer; see ring.h).
  const std::shared_ptr<Allocator> host_pool_;
  std::unique_ptr<internal::CollectiveTimer> timer_;  // local joins' deadlines
  absl::Mutex mu_;
  // "g<group>/i<instance>/r<rank>" -> executions started
  absl::flat_hash_map<std::string, int64_t> executions_ ABSL_GUARDED_BY(mu_);
  // execution prefix -> the local members that arrived
  absl::flat_hash_map<std::string, std::shared_ptr<internal::LocalJoin>> joins_
      ABSL_GUARDED_BY(mu_);
  // Local executions that timed out, for members arriving late.
  absl::flat_hash_map<std::string, absl::Status> failed_joins_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_COLLECTIVE_EXECUTOR_H_
