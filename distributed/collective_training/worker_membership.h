// Worker membership for all-reduce training (collective_trainer.h): which
// workers train together after a start or a failure, under which
// generation (the collectives' group key), in which rank order, and with
// what per-worker batch and learning rate. Pure functions, no I/O.
//
//   // Every member probed every worker and found these answering:
//   std::vector<MemberId> up = {{0, inc0}, {2, inc2}};
//   ScalingOptions scaling{.initial_workers = 3, .global_batch = 96, .learning_rate = 0.1};
//   ASSIGN_OR_RETURN(MemberPlan plan, PlanMembers(up, /*self=*/2, /*attempt=*/0, scaling));
//   // plan.rank == 1, plan.chief == false, plan.per_worker_batch == 32
//   int64_t first_row = SliceOffset(plan, step);  // this member's rows of step `step`
//
// Generations: every member computes the generation from the same inputs:
// the members' worker indices and incarnations (a process gets a new
// incarnation each time it starts) and `attempt`, the number of times this
// very member set has already failed to train together. So a restarted
// worker, or a member set without a dead worker (elastic), gives a new
// generation on every member without any message between them, and a
// failure in which nobody died or restarted moves everyone to attempt + 1
// (each member leaves a formation exactly once). The generation is a hash
// in [1, 2^40), so group keys of the form base + 1000 * generation fit in
// int64.
//
// Scaling (the user's choice, applied to every formation):
//  - keep_global_batch: the global batch stays `global_batch`; each of the
//    N members takes global_batch / N rows (rounded down; at least 1).
//  - otherwise each member keeps global_batch / initial_workers rows, so
//    the global batch shrinks or grows with the members.
//  - scale_lr_with_workers: learning rate = learning_rate * N (the linear
//    scaling rule; learning_rate is then one worker's rate); otherwise
//    learning_rate as given.
//
// Thread-safety: pure functions of their arguments. Ownership: values.
#ifndef SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_WORKER_MEMBERSHIP_H_
#define SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_WORKER_MEMBERSHIP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice {

// One worker that answered a probe.
struct MemberId {
  int index = 0;            // task index in the worker job
  int64_t incarnation = 0;  // WorkerInfo::incarnation
};

struct ScalingOptions {
  int initial_workers = 1;   // the job's worker count
  int64_t global_batch = 0;  // rows per step over initial_workers
  double learning_rate = 0;
  bool keep_global_batch = false;
  bool scale_lr_with_workers = false;
};

// One member's view of a formation.
struct MemberPlan {
  int64_t generation = 0;
  std::vector<int> members;  // worker indices, ascending: the rank order
  int self = 0;              // this worker's index
  int rank = 0;              // position of `self` in members
  bool chief = false;        // rank 0: initializes / restores, checkpoints
  int64_t per_worker_batch = 0;
  int64_t global_batch = 0;  // per_worker_batch * members.size()
  double learning_rate = 0;
};

// "0:<inc>,2:<inc>": the member set, sorted by index (attempt bookkeeping,
// logs). Duplicated indices are kept as given.
std::string MembersKey(std::vector<MemberId> members);

// See the top comment. Order of `members` does not matter.
int64_t FormationGeneration(std::vector<MemberId> members, int64_t attempt);

// The plan of worker `self` in the formation of `members` (any order).
// InvalidArgument: no members, a worker index listed twice, `self` not
// among them, initial_workers < 1, a global batch that is not positive or
// not a multiple of initial_workers, a learning rate <= 0.
absl::StatusOr<MemberPlan> PlanMembers(const std::vector<MemberId>& members, int self,
                                       int64_t attempt, const ScalingOptions& scaling);

// First row of this member's slice of step `step` (0-based) in a data set
// read in order: step * global_batch + rank * per_worker_batch. The members'
// slices of a step are consecutive and together form the global batch.
int64_t SliceOffset(const MemberPlan& plan, int64_t step);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_WORKER_MEMBERSHIP_H_
