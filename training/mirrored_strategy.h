// Synchronous data parallelism without parameter servers: every replica
// holds its own copy of the variables, computes gradients on its slice of
// the batch, and the gradients are averaged with all-reduce
// (all_reduce_gradients.h) before each replica applies them, so the copies
// stay equal. TensorFlow calls the one-process form MirroredStrategy and the
// between-graph form MultiWorkerMirroredStrategy; Horovod does the latter.
//
//   // The model, built once per replica in a scope pinned to its device.
//   ReplicaFn fn = [&](const Scope& s, const std::vector<Output>& in)
//       -> absl::StatusOr<ReplicaModel> { ... return ReplicaModel{loss, vars, {accuracy}}; };
//
//   // Mirrored: one process, one replica per local device (in-graph).
//   MirroredOptions m;  m.devices = {".../device:GPU:0", ".../device:GPU:1"};
//   ASSIGN_OR_RETURN(MirroredModel mm, BuildMirrored(scope, {x, labels}, fn, &sgd, m));
//   sess->Run({}, {}, {mm.init->name()});
//   sess->Run({{x, batch}, {labels, y}}, {mm.loss}, {mm.train->name()});
//
//   // MultiWorkerMirrored: each worker process builds its own replica.
//   MultiWorkerOptions w;  w.worker_devices = {w0_cpu0, w1_cpu0, w2_cpu0};  w.worker_index = 1;
//   ASSIGN_OR_RETURN(MultiWorkerModel mw, BuildMultiWorkerMirrored(scope, {x, labels}, fn, &sgd, w));
//   // chief: run mw.init, then everyone runs mw.sync_init (the chief's
//   // values broadcast to all), then mw.train each step.
//
// Mirrored splits each batch input along dim 0 into one slice per replica
// (the batch must divide), builds replica r as "replica_<r>/..." on
// devices[r], averages the replicas' gradients with all-reduce and applies
// each replica's share with its own copy of the optimizer's update ops. Its
// `init` initializes replica 0's variables and copies them to the others,
// so the replicas start equal; `loss` and `metrics` are the replicas' means.
// With the mean all-reduce and a loss averaged over each replica's batch,
// a step equals one device's step on the whole batch (up to rounding).
//
// MultiWorkerMirrored: the worker's replica on worker_devices[worker_index]
// with variables local to it; gradients all-reduced across workers;
// `sync_init` makes every worker's variables the chief's (worker 0) through
// a collective broadcast. The chief alone should write checkpoints (all
// copies are equal). `generation` enters the group key: after a worker
// restarts, or when survivors go on without it (elastic), every member
// builds its graph again with the same new generation and member list.
//
// Errors (InvalidArgument): no devices, a batch input whose static batch
// size the replicas do not divide, a replica function's error (with the
// replica's index), replicas with different variable shapes,
// worker_index out of range. Thread-compatible (adds nodes).
#ifndef SLUICE_TRAINING_MIRRORED_STRATEGY_H_
#define SLUICE_TRAINING_MIRRORED_STRATEGY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "training/all_reduce_gradients.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"

namespace sluice {

struct ReplicaModel {
  Output loss;                   // scalar: the mean over the replica's batch
  std::vector<Output> variables; // the replica's own variables (ref outputs)
  std::vector<Output> metrics;   // scalars to average (accuracy, ...)
  // The nodes that initialize `variables`; when empty, each variable's
  // "<var>/Assign" (as ops::VariableWithInit makes), else its only Assign.
  std::vector<Node*> initializers;
};

// Builds one replica from its inputs, in `scope` (pinned to its device).
using ReplicaFn =
    std::function<absl::StatusOr<ReplicaModel>(const Scope& scope, const std::vector<Output>& inputs)>;

struct MirroredOptions {
  std::vector<std::string> devices;  // full names, one replica each
  AllReduceOptions all_reduce;
};

struct MirroredModel {
  std::vector<ReplicaModel> replicas;
  Output loss;                  // mean of the replicas' losses
  std::vector<Output> metrics;  // means of the replicas' metrics
  Node* train = nullptr;        // every replica applies the averaged gradients
  Node* init = nullptr;         // replica 0 initialized, then copied to the others
};

absl::StatusOr<MirroredModel> BuildMirrored(const Scope& scope,
                                            const std::vector<Output>& batch_inputs,
                                            const ReplicaFn& fn, Optimizer* optimizer,
                                            const MirroredOptions& options);

struct MultiWorkerOptions {
  std::vector<std::string> worker_devices;  // one per worker, rank order, full names
  int worker_index = 0;
  // See above. The collectives use group key all_reduce.group_key +
  // 1000 * generation; gradient buckets are instances first_instance_key + b,
  // the loss first_instance_key + 50000, metric i first_instance_key + 50001 + i,
  // and sync_init's broadcast of state variable v first_instance_key + 100000 + v.
  int64_t generation = 0;
  AllReduceOptions all_reduce;
};

struct MultiWorkerModel {
  ReplicaModel replica;
  // This worker's loss all-reduced (mean over workers): a collective, so
  // every worker must fetch it (and each metric) in the same steps.
  Output loss;
  std::vector<Output> metrics;  // likewise
  Node* train = nullptr;
  Node* init = nullptr;       // initializes this worker's variables (and global step)
  Node* sync_init = nullptr;  // every worker's variables := the chief's
  Output global_step;         // int64, on this worker, incremented by train
};

absl::StatusOr<MultiWorkerModel> BuildMultiWorkerMirrored(const Scope& scope,
                                                          const std::vector<Output>& inputs,
                                                          const ReplicaFn& fn, Optimizer* optimizer,
                                                          const MultiWorkerOptions& options);

namespace internal {

// Shared with the other strategies over replicas (peer_to_peer.h).
// A replica's model is usable (scalar loss, variables that are ref outputs,
// set metrics) and, when `first` is given, agrees with replica 0's.
absl::Status CheckReplica(const ReplicaModel& m, int r, const ReplicaModel* first);
// m.initializers, else each variable's "<var>/Assign" (else its only Assign).
absl::StatusOr<std::vector<Node*>> ReplicaInitializers(const ReplicaModel& m);
// `grad` with its variable's static shape when backprop lost it (a
// broadcasting op's gradient reshapes at run time).
Output WithVariableShape(const Scope& scope, const Output& grad, const Output& var);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_TRAINING_MIRRORED_STRATEGY_H_
