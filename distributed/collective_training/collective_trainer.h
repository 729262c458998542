// CollectiveTrainer: one worker process's training loop for synchronous
// data parallelism with all-reduce across worker processes
// (BuildMultiWorkerMirrored, mirrored_strategy.h), with recovery from dead
// peers. Every worker of a worker-only cluster runs one.
//
//   CollectiveTrainerOptions o;
//   o.server = server.get();                       // this task's Server
//   o.inputs = {{"x", DT_FLOAT, TensorShape({-1, 784})}, {"labels", DT_INT32, TensorShape({-1})}};
//   o.replica = [&](const Scope& s, const std::vector<Output>& in) -> absl::StatusOr<ReplicaModel> {...};
//   o.optimizer = [](double lr) -> absl::StatusOr<std::unique_ptr<Optimizer>> {...};
//   o.batch = [&](int64_t step, const MemberPlan& p) -> absl::StatusOr<std::vector<Tensor>> {
//     Dataset b = Batch(data, SliceOffset(p, step), p.per_worker_batch);  return {{b.x, b.y}};
//   };
//   o.steps = 1000;  o.scaling = {...};  o.checkpoint_dir = "/shared/ckpt";
//   ASSIGN_OR_RETURN(std::unique_ptr<CollectiveTrainer> t, CollectiveTrainer::Create(o));
//   ASSIGN_OR_RETURN(TrainResult r, t->Train());
//   if (r.plan.chief) ... t->session()->Run(...) on t->model().replica ...
//
// A formation: the trainer probes every worker of its job (GetStatus through
// the server's worker cache) and waits until all answer (start-up, and after
// a failure unless elastic; an elastic worker that starts when
// checkpoint_dir already holds a checkpoint waits only elastic_grace_s, as
// after a failure). The members, their incarnations and the number
// of failed attempts of that member set give the generation, rank, chief
// (the lowest member) and scaling (worker_membership.h), the same on every
// member with no message exchanged. It then builds a new graph: the inputs
// as placeholders, BuildMultiWorkerMirrored over the members' devices (each
// member's GPU:0 when it has one, else its CPU:0) with that generation, a
// Saver over every variable, and a formation barrier (a one-float all-reduce
// with a long timeout, so that members arriving up to a few collective
// timeouts apart still meet); and a session confined to this task (a master
// over this task only: a dead peer never blocks session creation). All
// members run the barrier; the chief restores the latest checkpoint of
// checkpoint_dir (or initializes the model when there is none); everyone
// runs sync_init (the chief's values broadcast to all); then each member
// reads the global step and trains until `steps`.
//
// Training: step g feeds batch(g, plan) and runs the train op; at the steps
// g + 1 that are multiples of log_every (and the last) every member also
// fetches the all-reduced loss (a collective: all members fetch it at the
// same steps) and the chief logs "step N: loss=<x> (<r> steps/s)". The
// chief alone saves a checkpoint every checkpoint_every global steps and at
// the end.
//
// Recovery: a step (or the formation itself) failing with Unavailable,
// DeadlineExceeded, Aborted or Cancelled — a collective whose peer died
// fails within all_reduce.timeout_seconds, naming the peer — is logged
// ("worker I: step N failed: ..."), the formation's group is reset on this
// process's collective executor (what is in flight fails, the old group's
// key is never used again here), its session closed, and a new formation
// is made as above: without `elastic` once every worker answers again (a
// restarted worker restores from the latest checkpoint the same way); with
// `elastic`, after waiting up to elastic_grace_s for every worker, with the
// workers that answer. Other errors end Train. So does a failure to train
// again within recovery_timeout_s of the first failure.
//
// Rejoining (elastic): a formation without every worker of the job checks
// every rejoin_check_every global steps whether one is back. The chief
// probes the missing workers on a thread of its own (every 0.5 s); at
// those steps (the same on every member) every member runs one more
// collective, a vote: the sum of the members' votes, where only the
// chief's can be 1 (its prober's last answer). When the vote says a worker
// is back, the chief saves a checkpoint of that step, and all members leave
// the formation and form a new one with every worker that answers. The
// returning worker (which, like any starting worker, waits for the workers
// and then sits in the formation barrier) is in it, gets the chief's values
// through sync_init and trains on.
// This counts as a rejoin, not a recovery. The shared checkpoint_dir is the
// only state the members share.
//
// Thread-compatible: one thread calls Train. The server is borrowed and
// must outlive the trainer; the callbacks are called on the Train thread.
#ifndef SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_COLLECTIVE_TRAINER_H_
#define SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_COLLECTIVE_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/server.h"
#include "training/mirrored_strategy.h"
#include "distributed/collective_training/worker_membership.h"
#include "graph/op_registry.h"
#include "ops/training/optimizers.h"
#include "runtime/kernel_registry.h"
#include "runtime/session.h"

namespace sluice {

// A batch input, built as a Placeholder named `name`.
struct TrainerInput {
  std::string name;
  DataType dtype = DT_FLOAT;
  TensorShape shape;  // dim 0 is the batch (-1: any)
};

struct CollectiveTrainerOptions {
  Server* server = nullptr;  // required; its task is "/job:<job>/replica:0/task:<i>"
  std::string job = "worker";
  const OpRegistry* ops = nullptr;          // default: the built-in ops
  const KernelRegistry* kernels = nullptr;  // default: the built-in kernels

  std::vector<TrainerInput> inputs;
  ReplicaFn replica;  // required
  // The optimizer for a formation's learning rate (required).
  std::function<absl::StatusOr<std::unique_ptr<Optimizer>>(double learning_rate)> optimizer;
  // This member's slice of global step `step` (0-based), one tensor per
  // input (required).
  std::function<absl::StatusOr<std::vector<Tensor>>(int64_t step, const MemberPlan& plan)> batch;

  int64_t steps = 0;              // train until this global step
  ScalingOptions scaling;         // initial_workers is set to the job's task count
  AllReduceOptions all_reduce;    // timeout_seconds: the collective deadline (0: 60 s)
  std::string checkpoint_dir;     // required, shared by every worker
  int64_t checkpoint_every = 100; // global steps; <= 0: only at the end
  bool elastic = false;
  double elastic_grace_s = 3;
  // Elastic formations missing a worker look for it every this many global
  // steps (see "Rejoining" above); <= 0: never, a worker that comes back
  // is not taken in and fails after recovery_timeout_s.
  int64_t rejoin_check_every = 50;
  double recovery_timeout_s = 120;
  int64_t log_every = 50;
  int64_t probe_timeout_ms = 1000;  // per GetStatus of a peer
  // Progress and recovery lines; default: stdout (flushed).
  std::function<void(const std::string& line)> log;
  // Called on the chief after each global step it reached, e.g. to evaluate
  // on held-out data: `session` may run the chief's replica's
  // non-collective nodes (its loss, metrics, variables) fed through
  // `inputs`; the other members wait in the next step's all-reduce
  // meanwhile (within all_reduce.timeout_seconds). An error fails training.
  std::function<absl::Status(int64_t global_step, Session* session, const ReplicaModel& replica,
                             const std::vector<Output>& inputs)>
      after_chief_step;
};

struct TrainResult {
  int64_t global_step = 0;  // reached (== steps)
  int recoveries = 0;       // formations made after a failure
  int rejoins = 0;          // formations made to take back a returning worker
  double seconds = 0;       // Train's wall time
  MemberPlan plan;          // of the last formation
};

class CollectiveTrainer {
 public:
  // InvalidArgument for missing required options, a task not in `job`, or
  // scaling PlanMembers would refuse.
  static absl::StatusOr<std::unique_ptr<CollectiveTrainer>> Create(
      CollectiveTrainerOptions options);
  ~CollectiveTrainer();
  CollectiveTrainer(const CollectiveTrainer&) = delete;
  CollectiveTrainer& operator=(const CollectiveTrainer&) = delete;

  // Trains to options.steps as described above.
  absl::StatusOr<TrainResult> Train();

  // The last formation, valid after Train until the trainer is destroyed
  // (nullptr / empty before): its session (on this task only), this
  // worker's model and its input placeholders. Only non-collective nodes
  // (model().replica's loss, metrics, variables) may run on one member
  // alone.
  Session* session() const;
  const MultiWorkerModel& model() const;
  const std::vector<Output>& inputs() const;

  class Impl;

 private:
  explicit CollectiveTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_COLLECTIVE_TRAINER_H_
