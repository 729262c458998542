// Whether the host's decisions in a step (which branch each Switch takes,
// how many times each loop goes round) come out the same at every run with
// the same feed shapes. A recording of the step (runtime/step_replay.h)
// freezes one run's decisions: a loop is recorded whole, every iteration's
// kernels in one recording, and replaying it is right only when the next run
// would have decided alike.
//
// TensorFlow 1.x control flow decides on the host, reading a Switch's
// predicate and a LoopCond's input. Such a decision is fixed when the value
// it reads derives, through stateless ops and control flow, only from
//   - constants (ops without inputs that keep no state);
//   - shapes: Shape, ShapeN, Size and Rank of any tensor (a recorded step's
//     shapes follow from its feeds' shapes: a shape that follows from a
//     device value needs the host to read that value, and a recording
//     refuses device-to-host copies);
//   - the size a TensorArray of fixed size was made with.
// A feed's value, a variable's, a TensorArray of dynamic size or any other
// stateful op's output reaching a decision keeps the step from being
// recorded. So `tf.nn.dynamic_rnn` over inputs whose time dimension is
// fixed by their shape is recorded; a loop counting to a fed `n` is not.
//
//   absl::Status fixed = CheckStepDecisionsFixed(executor->graph());
//
// Returns OK (also for a step without control flow), or FailedPrecondition
// naming the deciding node and the node whose value reaches it.
// A plain function of the graph: thread-compatible.
#ifndef SLUICE_RUNTIME_STEP_DECISIONS_H_
#define SLUICE_RUNTIME_STEP_DECISIONS_H_

#include "absl/status/status.h"
#include "graph/graph.h"

namespace sluice {

absl::Status CheckStepDecisionsFixed(const Graph& graph);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_DECISIONS_H_
