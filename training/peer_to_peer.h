// Asynchronous peer-to-peer data parallelism with bounded staleness, graph
// side: no parameter server and no all-reduce. Every worker process holds
// its own copy of the variables; each step it computes its gradients, sends
// them to every other worker, takes whatever its peers have sent it, and
// applies the sum of its own gradients and those it took in ONE optimizer
// update. Between-graph: each worker builds the same graph with its own
// worker_index and drives it with a PeerToPeerTrainer
// (peer_to_peer_trainer.h), which decides how many gradients to take.
//
//   PeerToPeerOptions o;
//   o.worker_devices = {"/job:worker/replica:0/task:0/device:CPU:0",
//                       "/job:worker/replica:0/task:1/device:CPU:0"};
//   o.worker_index = 1;  o.max_staleness = 2;
//   ASSIGN_OR_RETURN(PeerToPeerModel m, BuildPeerToPeer(scope, {x, labels}, fn, &sgd, o));
//   sess->Run({}, {}, {m.init});  // every worker, each with the same seeds
//   PeerToPeerTrainer trainer(sess, m);
//   for (...) ASSIGN_OR_RETURN(PeerStepStats st, trainer.Step({{x, xb}, {labels, yb}}));
//   RETURN_IF_ERROR(trainer.Finish());
//
// Transport: one FIFO queue per ordered pair of workers,
// "p2p/queue_<to>_from_<from>" on worker <to>'s device, shared_name the
// same, so that the sender's graph (which enqueues into it: the gradients
// travel over Send/Recv to the receiver's task) and the receiver's graph
// (which dequeues from it) name one queue resource on the receiver's task.
// An element is (int64 step, gradient_0, ..., gradient_{V-1}). A queue per
// sender, rather than one per receiver, keeps each sender's gradients in
// step order and lets the receiver take exactly as many from each sender as
// the staleness bound needs; the k-th element from a sender is its step k.
//
// One step t of worker w (the `train` target; the trainer feeds `step` = t
// and each peer's `take`):
//   g_w      = d loss / d vars at w's current variables
//   enqueue  (t, g_w) into every peer p's queue "p2p/queue_<p>_from_<w>"
//   G_p      = DequeueMany(queue_<w>_from_<p>, take_p), summed over dim 0
//   update   vars with the optimizer applied once to the sum, in worker
//            order, of g_w and every G_p (AddN)
// So every gradient any worker computes is applied exactly once by every
// worker. With max_staleness S, the trainer takes from each peer at least
// up to its step t - S: the gradient of step t+1 is then computed from
// variables holding every peer's gradients of steps <= t - S (Stale
// Synchronous Parallel, Ho et al. 2013). With S = 0 and replicas that start
// equal, every worker applies the same sum each step, so the replicas stay
// equal and equal one process applying the SUM of the W workers' gradients
// (scale the learning rate by 1/W for the mean) with the same optimizer.
//
// `apply` is the update alone: the trainer feeds zeros for `own_gradients`
// (PlaceholderWithDefault over g_w) to apply gradients that arrive after the
// worker's last step. `close_outgoing` closes this worker's queues on every
// peer (no more gradients from it); `peers[i].is_closed` tells whether peer
// i has closed its queue to this worker.
//
// Errors (InvalidArgument): no optimizer, no or repeated worker devices,
// worker_index out of range, negative max_staleness, the replica
// function's error (with the worker's index), a loss that is not a scalar,
// variables that are not ref outputs or whose shape is not fully defined
// (the queues need fixed shapes). Thread-compatible (adds nodes).
// Ownership: nodes belong to the scope's graph; the optimizer is borrowed
// and keeps the initializers of the slots it creates.
#ifndef SLUICE_TRAINING_PEER_TO_PEER_H_
#define SLUICE_TRAINING_PEER_TO_PEER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/scope.h"
#include "ops/training/optimizers.h"
#include "training/mirrored_strategy.h"

namespace sluice {

struct PeerToPeerOptions {
  std::vector<std::string> worker_devices;  // one per worker, full names, index order
  int worker_index = 0;
  // S: a worker at step t has applied every peer's gradients of steps
  // <= t - S (0: lock-step, every step waits for every peer's gradients).
  int max_staleness = 0;
};

// This worker's end of the queue from one peer.
struct PeerQueue {
  int worker = 0;          // the peer's index
  std::string device;      // the peer's device (where its queue from us lives)
  Output size;             // int32: its gradients waiting here (after is_closed)
  Output is_closed;        // bool: the peer has sent its last gradient
  Output take;             // int32 placeholder: how many to dequeue this run
  Output steps;            // int64 [take]: their step numbers, in order
};

struct PeerToPeerModel {
  ReplicaModel replica;
  int worker_index = 0;
  int num_workers = 0;
  int max_staleness = 0;
  std::vector<std::string> worker_devices;
  Output step;                       // int64 placeholder: the step being sent
  std::vector<PeerQueue> peers;      // every other worker, in index order
  std::vector<Output> own_gradients; // PlaceholderWithDefault(g_w), one per variable
  Node* apply = nullptr;             // the one update of the summed gradients
  Node* train = nullptr;             // apply, and g_w sent to every peer
  Node* close_outgoing = nullptr;    // closes this worker's queue on every peer
  Node* init = nullptr;              // this worker's variables and optimizer slots
};

absl::StatusOr<PeerToPeerModel> BuildPeerToPeer(const Scope& scope,
                                                const std::vector<Output>& inputs,
                                                const ReplicaFn& fn, Optimizer* optimizer,
                                                const PeerToPeerOptions& options);

// "p2p/queue_<to>_from_<from>": the queue's node and shared name.
std::string PeerQueueName(int to, int from);

}  // namespace sluice

#endif  // SLUICE_TRAINING_PEER_TO_PEER_H_
