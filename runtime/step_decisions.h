// What the host's decisions in a step (which branch each Switch takes, how
// many times each loop goes round) read, so a recording of the step
// (runtime/step_replay.h) is replayed only when the next run would decide
// alike. A recording freezes one run's decisions: a loop is recorded whole,
// every iteration's kernels in one recording.
//
// TensorFlow 1.x control flow decides on the host, reading a Switch's
// predicate and a LoopCond's input; an Assert decides on the host too,
// reading its condition (whether the step fails: a recording would not
// check it again). Such a decision is the same at every run
// with the same feed shapes when the value it reads derives, through
// stateless ops and control flow, only from
//   - constants (ops without inputs that keep no state);
//   - shapes: Shape, ShapeN, Size and Rank of any tensor (a recorded step's
//     shapes follow from its feeds' shapes: a shape that follows from a
//     device value needs the host to read that value, and a recording
//     refuses device-to-host copies);
//   - the size a TensorArray of fixed size was made with.
// It is the same at every run with the same feed shapes and the same values
// of some feeds when it also derives from those feeds' values (a loop
// counting to a fed `n`; a dynamic_rnn bounded by the largest of a fed
// sequence_length): the deciding feeds, which a recording is then made and
// replayed for one value of. A variable's value, a TensorArray of dynamic
// size or any other stateful op's output reaching a decision keeps the step
// from being recorded.
//
// A feed the host reads without deciding anything is keyed the same way:
// on a device with device memory, a kernel taking an input in host memory
// (a GPU's int32 shape arithmetic: Reshape's shape, Fill's dims, a fed
// batch size) reads the value there while the step is recorded, and
// whatever it computes from it is frozen into the recording. Such reads
// (`reads_on_host`: Executor::InputOnHost) add the feeds they derive from;
// unlike decisions they never keep a step out (a device value read on the
// host fails the recording itself, which refuses device-to-host copies).
// Fetches (_Retval) and handles (resources, variants) read no value; a
// shape op does where its kernel takes its operand in host memory (a GPU's
// int32 Shape runs on the host, and the executor copies the value there).
//
//   absl::StatusOr<std::vector<int>> feeds = DecidingFeeds(
//       executor->graph(), [&](const Node& n, int i) { return executor->InputOnHost(n, i); });
//
// Returns the `index` of every _Arg whose value reaches a decision or a
// host read (sorted, unique; empty also for a step without control flow),
// or FailedPrecondition naming the deciding node and the node whose value
// reaches it (InvalidArgument for a deciding _Arg with a negative index).
// A plain function of the graph: thread-compatible.
#ifndef SLUICE_RUNTIME_STEP_DECISIONS_H_
#define SLUICE_RUNTIME_STEP_DECISIONS_H_

#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

// Whether the step's kernel for a node reads the node's input `i` in host
// memory.
using HostReads = absl::FunctionRef<bool(const Node& node, int input)>;

absl::StatusOr<std::vector<int>> DecidingFeeds(const Graph& graph);
absl::StatusOr<std::vector<int>> DecidingFeeds(const Graph& graph, HostReads reads_on_host);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_DECISIONS_H_
