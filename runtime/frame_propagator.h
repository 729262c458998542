// FramePropagator: the frames and iterations of one executor step
// (TensorFlow's PropagatorState). Given a node that finished, with its
// outputs, it hands the outputs to their consumers' input slots and appends
// the consumers that became ready to a list; it calls nothing back. What a
// frame, an iteration and a dead tensor are: runtime/executor.h.
//
//   FramePropagator propagator(layout);  // one per step
//   ReadyNodes ready;
//   for (int id : layout->roots()) ready.push_back(propagator.RootNode(id));
//   while (!ready.empty()) {
//     TaggedNode t = ready.back();  ready.pop_back();
//     ... run t's kernel on t.iter->slots, unless t.dead ...
//     RETURN_IF_ERROR(propagator.Propagate(t, outputs, &ready));
//   }
//
// The rules it applies, by the finished node's kind (ItemKind):
// - a plain node: its consumers in the same iteration; an output it left
//   unset (only a Switch may) and every output of a dead node are dead; a
//   consumer with a dead input is dead, except a ControlTrigger;
// - Merge consumers: ready at the first live data input (the others are
//   not delivered), dead when every data input is, or at once when a dead
//   one comes from an Enter (no NextIteration will follow);
// - Enter: into the child frame, started on first use (one per loop per
//   parent iteration); a constant Enter's value reaches every iteration;
// - NextIteration: into the next iteration, started when fewer than
//   parallel_iterations are live, else deferred until the oldest ends;
//   a dead one is dropped (the loop ends there);
// - Exit: to the parent iteration; a dead Exit of the last iteration makes
//   its parent consumers' inputs dead when the loop's frame ends.
// An iteration ends when none of its nodes is ready or running and no child
// frame started from it is live; a frame when its Enters have all run and
// its iterations ended. Ending frees their tensors.
//
// Thread-safety: Propagate may be called concurrently for different nodes of
// the step (frames have their own locks; pending counts are atomic).
// Ownership: the propagator owns every frame and iteration state of its step;
// a TaggedNode points into them and is valid until that node is propagated.
// The layout is borrowed and must outlive the propagator.
#ifndef SLUICE_RUNTIME_FRAME_PROPAGATOR_H_
#define SLUICE_RUNTIME_FRAME_PROPAGATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "runtime/executor_layout.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

struct FrameState;

// The id of a loop's run started from iteration `iter` of the frame
// `parent_id`: the same on every partition of the loop (and in every
// process), so that transfers inside it meet (runtime/rendezvous.h).
// Never 0, the root frame's id.
uint64_t ChildFrameId(uint64_t parent_id, int64_t iter, const std::string& name);

// The state of one iteration of one frame (the root frame has one).
struct IterationState {
  IterationState(const FrameLayout& layout, int64_t iter);

  const int64_t iter;
  // The inputs of the frame's nodes in this iteration (NodeItem::input_start);
  // the run loop reads a ready node's and clears them when it has run.
  std::vector<TensorValue> slots;
  // Inputs not yet arrived; for a Merge, control inputs not yet arrived.
  std::unique_ptr<std::atomic<int>[]> pending;
  // Dead inputs arrived (null without control flow: nothing is dead).
  std::unique_ptr<std::atomic<int>[]> dead;
  // A Merge's first live input: guarded by merge_mu.
  absl::Mutex merge_mu;
  std::unique_ptr<uint8_t[]> merge_live;
  // Below: a loop frame's iterations only, guarded by the frame's mu.
  int outstanding_ops = 0;     // nodes of this iteration ready or running
  int outstanding_frames = 0;  // child frames started from this iteration
  // Child frames by static frame index; guarded by the frame's mu (the
  // root frame's too).
  absl::flat_hash_map<int, std::unique_ptr<FrameState>> children;
};

// One value on its way into a new iteration, or a loop invariant.
struct PendingValue {
  int item;  // the Enter or NextIteration that produced it
  TensorValue value;
  bool dead = false;
};

// The state of one execution of a static frame: the root frame, or one loop
// started from one iteration of its parent frame.
struct FrameState {
  FrameState(const FrameLayout* layout, FrameState* parent, IterationState* parent_iter,
             int static_id);
  bool is_root() const { return parent == nullptr; }

  IterationState* Iteration(int64_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (i < first_iter || i >= first_iter + static_cast<int64_t>(iterations.size())) {
      return nullptr;
    }
    return iterations[i - first_iter].get();
  }
  int64_t newest() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return first_iter + static_cast<int64_t>(iterations.size()) - 1;
  }

  const FrameLayout* const layout;
  FrameState* const parent;
  IterationState* const parent_iter;
  const int static_id;      // index of `layout` among the layout's frames
  const uint64_t frame_id;  // this run's id in rendezvous keys; 0: the root
  absl::Mutex mu;
  // The live iterations, oldest first; iteration 0 exists from the start.
  // (A vector: at most parallel_iterations long, and the root frame's one
  // iteration costs a step a single allocation.)
  std::vector<std::unique_ptr<IterationState>> iterations ABSL_GUARDED_BY(mu);
  int64_t first_iter ABSL_GUARDED_BY(mu) = 0;
  // Enters into the frame not yet run.
  int pending_enters ABSL_GUARDED_BY(mu);
  std::vector<PendingValue> invariants ABSL_GUARDED_BY(mu);  // constant Enters' values
  // NextIteration values waiting while parallel_iterations are live.
  std::vector<PendingValue> deferred ABSL_GUARDED_BY(mu);
  // Exits that were dead in the then newest iteration (item, iteration):
  // those of the last iteration (the whole loop was dead) give their
  // consumers in the parent dead inputs when the frame ends.
  std::vector<std::pair<int, int64_t>> dead_exits ABSL_GUARDED_BY(mu);
};

// A node ready to run in one iteration of one frame; `dead`: its inputs are
// dead, and so will its outputs be (it does not run, but a _Send does).
struct TaggedNode {
  int id;  // the ExecutorLayout item
  FrameState* frame;
  IterationState* iter;
  bool dead;
};

// A value is a tensor or a variable; an output left unset has neither.
inline bool HasValue(const TensorValue& v) { return v.tensor.IsInitialized() || v.ref != nullptr; }

// Nodes made ready; the run loop uses it as a stack.
using ReadyNodes = absl::InlinedVector<TaggedNode, 16>;

class FramePropagator {
 public:
  explicit FramePropagator(const ExecutorLayout* layout);
  FramePropagator(const FramePropagator&) = delete;
  FramePropagator& operator=(const FramePropagator&) = delete;

  // Root item `id` (one of layout->roots()), ready in the root frame.
  TaggedNode RootNode(int id) { return TaggedNode{id, &root_, root_iter_, false}; }

  // `node` has finished; `outputs` are its outputs (ignored when node.dead:
  // then every output is dead). Appends the nodes this makes ready to
  // `ready`, and accounts for `node` in its frame, which may end frames and
  // start deferred iterations. Error (Internal, naming the node): an output
  // with consumers left unset by a node other than a Switch; nothing is then
  // propagated or appended.
  absl::Status Propagate(const TaggedNode& node, absl::Span<const TensorValue> outputs,
                         ReadyNodes* ready) {
    const NodeItem& item = layout_->item(node.id);
    if (!node.dead && !item.may_leave_outputs_unset) {
      for (int k : item.consumed_outputs) {
        if (!HasValue(outputs[k])) return MissingOutput(item, k);
      }
    }
    // Most nodes: a plain node of the root frame (no lock, no iteration).
    if (item.kind == ItemKind::kNormal && node.frame->is_root()) {
      ActivateNodes(item, node.dead, outputs, node.frame, node.iter, ready);
    } else {
      PropagateInFrames(node, outputs, ready);
    }
    return absl::OkStatus();
  }

  // The live iterations of the frame `node` runs in, for tests.
  int NumIterationsForTesting(const TaggedNode& node);

 private:
  // The helpers declared inline are defined in and used only by
  // frame_propagator.cc, where they then inline into PropagateInFrames.

  // Propagate for a control-flow node or a node of a loop frame.
  void PropagateInFrames(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                         ReadyNodes* ready);
  // Internal error: `item` left `output` unset, and it has consumers.
  ABSL_ATTRIBUTE_NOINLINE static absl::Status MissingOutput(const NodeItem& item, int output);
  // Delivers `item`'s outputs (all dead when `dead`) to its consumers in one
  // iteration; appends those it makes ready. Returns how many.
  int ActivateNodes(const NodeItem& item, bool dead, absl::Span<const TensorValue> outputs,
                    FrameState* frame, IterationState* iter, ReadyNodes* ready) const;
  // ActivateNodes, with a loop frame's lock and iteration accounting.
  inline void ActivateInFrame(const NodeItem& item, bool dead,
                              absl::Span<const TensorValue> outputs, FrameState* frame,
                              IterationState* iter, ReadyNodes* ready) const;
  inline FrameState* FindOrCreateChild(FrameState* frame, IterationState* iter, int child) const;
  inline void RunEnter(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                       ReadyNodes* ready) const;
  inline void RunExit(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                      ReadyNodes* ready) const;
  inline void RunNextIteration(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                               ReadyNodes* ready) const;
  IterationState* StartIteration(FrameState* frame, ReadyNodes* ready) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  // Ends the oldest iterations while they are done; true when the frame is.
  bool CleanupIterations(FrameState* frame, ReadyNodes* ready) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  // One node of a loop iteration is done.
  inline void FinishInFrame(FrameState* frame, IterationState* iter, ReadyNodes* ready) const;
  // A finished loop frame: its dead exits reach the parent, and it is freed.
  void DeleteFrame(FrameState* frame, ReadyNodes* ready) const;

  const ExecutorLayout* const layout_;
  FrameState root_;  // owns every loop frame through its iterations
  IterationState* const root_iter_;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_FRAME_PROPAGATOR_H_
