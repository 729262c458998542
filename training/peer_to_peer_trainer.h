// PeerToPeerTrainer: the client side of peer-to-peer training
// (peer_to_peer.h). It runs one worker's steps against its session,
// deciding before each step how many gradients to take from every peer:
// all that have arrived, and at least enough that the worker has applied
// each running peer's gradients up to (step - max_staleness), waiting for
// them (with a deadline) when they have not arrived.
//
//   PeerToPeerTrainer trainer(session.get(), model, {.peer_timeout_ms = 10000});
//   for (int64_t t = 0; t < steps; ++t) {
//     ASSIGN_OR_RETURN(PeerStepStats st, trainer.Step({{x, batch_x}, {labels, batch_y}}));
//   }
//   RETURN_IF_ERROR(trainer.Finish());  // before the worker's server stops
//
// Each step is two runs: a probe (every incoming queue's size and whether
// its sender has finished) and the train run (feeds `step`, each peer's
// `take`, fetches the taken step numbers, which must follow on from the
// last ones taken: a gap is Internal). Staleness of a step t is the largest
// t - (newest step applied) over the peers still running; it never exceeds
// max_staleness.
//
// Finish closes this worker's queues on its peers (they stop waiting for
// it), then applies the gradients still arriving until every peer has
// closed its queue here, so that no gradient is lost and no peer sends to a
// stopped server. With plain SGD every worker has then applied every
// gradient once, whatever the staleness: the replicas end equal (up to the
// order of float additions).
//
// Errors: a step whose peer gradients do not arrive within
// peer_timeout_ms is DeadlineExceeded naming the peers' tasks; a peer that
// cannot be reached fails the step with the session's error (Unavailable
// naming the task); a peer that finished before sending a step this worker
// needs fails it (OutOfRange from the queue). After an error the trainer's
// state is undefined (this worker's gradient may have been sent but not
// applied): rebuild, e.g. from a checkpoint.
// Thread-compatible: one thread drives a trainer; several trainers may
// share a thread-safe Session. Ownership: borrows the session, which must
// outlive the trainer; copies the model's handles.
#ifndef SLUICE_TRAINING_PEER_TO_PEER_TRAINER_H_
#define SLUICE_TRAINING_PEER_TO_PEER_TRAINER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "training/peer_to_peer.h"

namespace sluice {

struct PeerToPeerTrainerOptions {
  // The longest a step (or Finish) waits for peers' gradients, and every
  // run's deadline.
  int64_t peer_timeout_ms = 30000;
  // Finish: how often to look again while peers are still running.
  int64_t poll_ms = 2;
};

struct PeerStepStats {
  int64_t step = 0;         // the step that ran
  float loss = 0;           // this worker's loss, before the update
  int peer_gradients = 0;   // peers' gradients applied with it
  int staleness = 0;        // see above; 0 without peers
};

class PeerToPeerTrainer {
 public:
  PeerToPeerTrainer(Session* session, PeerToPeerModel model,
                    PeerToPeerTrainerOptions options = {});
  PeerToPeerTrainer(const PeerToPeerTrainer&) = delete;
  PeerToPeerTrainer& operator=(const PeerToPeerTrainer&) = delete;

  // One step: `feeds` are the replica's inputs.
  absl::StatusOr<PeerStepStats> Step(const std::vector<std::pair<Output, Tensor>>& feeds);
  // See above. Steps after Finish are FailedPrecondition.
  absl::Status Finish();

  int64_t steps_done() const { return next_step_; }
  int max_staleness_seen() const { return max_staleness_seen_; }
  int64_t peer_gradients_applied() const { return peer_gradients_applied_; }
  // The newest step of peers()[i] applied here (-1: none yet).
  int64_t newest_from(int peer_position) const { return newest_[peer_position]; }
  const PeerToPeerModel& model() const { return model_; }

 private:
  struct Probe {
    std::vector<bool> closed;
    std::vector<int64_t> size;
  };
  absl::StatusOr<Probe> RunProbe();
  // Runs `target` taking take[i] gradients from peer i; records their steps.
  absl::StatusOr<std::vector<Tensor>> RunTaking(std::vector<std::pair<Output, Tensor>> feeds,
                                                const std::vector<int64_t>& take,
                                                std::vector<Output> fetches, Node* target);
  absl::Status RecordTaken(const std::vector<Tensor>& steps);
  // "worker <k> (<its task>)".
  std::string PeerTask(int peer_position) const;

  Session* const session_;
  const PeerToPeerModel model_;
  const PeerToPeerTrainerOptions options_;
  std::vector<Tensor> zero_gradients_;  // fed for own_gradients by Finish
  std::vector<int64_t> newest_;         // per peer position
  int64_t next_step_ = 0;
  int max_staleness_seen_ = 0;
  int64_t peer_gradients_applied_ = 0;
  bool finished_ = false;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_PEER_TO_PEER_TRAINER_H_
