// LocalJoin (internal to the collective executor): the members of one
// execution that all live in this process meet here; the last to arrive
// computes everyone's result (RunHostJoin) or hands all inputs to a
// registered local implementation (RunImplJoin).
//
//   LocalJoin join("g1/i7/n0", /*group_size=*/2, impl_or_null);
//   join.Add(std::move(member));      // under the executor's lock
//   if (join.complete()) RunHostJoin(join.TakeMembers());
//
// Not thread-safe: the executor guards a LocalJoin with its lock. The Run*
// functions run without any lock and call every member's `done` once.
#ifndef SLUICE_RUNTIME_COLLECTIVE_LOCAL_JOIN_H_
#define SLUICE_RUNTIME_COLLECTIVE_LOCAL_JOIN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/collective/collective.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/device.h"

namespace sluice {
namespace internal {

struct JoinMember {
  CollectiveParams params;
  Device* device = nullptr;
  Tensor input;            // host memory for RunHostJoin, the device's for RunImplJoin
  Tensor original;         // what Run got (a broadcast source gets it back)
  bool copy_back = false;  // the result goes back to device memory
  std::function<void(absl::StatusOr<Tensor>)> done;
};

class LocalJoin {
 public:
  LocalJoin(std::string prefix, int group_size, LocalAllReduceImpl impl);
  LocalJoin(const LocalJoin&) = delete;
  LocalJoin& operator=(const LocalJoin&) = delete;

  // Takes `member`; FailedPrecondition (leaving `member` alone) when its rank
  // already arrived.
  absl::Status Add(JoinMember&& member);
  bool complete() const { return arrived_ == static_cast<int>(members_.size()); }
  // "rank 2 (/job:...)" for each member not arrived yet.
  std::vector<std::string> Missing() const;
  // The arrived members in rank order; the join is empty afterwards.
  std::vector<JoinMember> TakeMembers();

  const std::string& prefix() const { return prefix_; }
  const LocalAllReduceImpl& impl() const { return impl_; }
  uint64_t timer_id = 0;  // the executor's deadline for the missing members

 private:
  const std::string prefix_;
  const LocalAllReduceImpl impl_;
  std::vector<JoinMember> members_;  // by rank; done empty until arrived
  int arrived_ = 0;
};

// Computes the collective on the members' host inputs; results are fresh
// tensors from each member's allocator (copied to its device when
// copy_back). Checks that members agree (InvalidArgument naming both ranks).
void RunHostJoin(std::vector<JoinMember> members);
// Hands the device inputs of all members to `impl` and passes on its
// outputs. When `impl` declines them (Unimplemented: NCCL for two logical
// GPUs of one card, or for a dtype or reduction it lacks), the inputs are
// copied to the host and the collective runs there (RunHostJoin), the
// results copied back.
void RunImplJoin(const LocalAllReduceImpl& impl, std::vector<JoinMember> members);
// Calls every member's done with `status` (with each member's context).
void FailMembers(std::vector<JoinMember> members, const absl::Status& status);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_LOCAL_JOIN_H_
