#include "runtime/frame_propagator.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace internal {
namespace {

IterationState* FirstIteration(FrameState* frame) {
  absl::MutexLock lock(&frame->mu);
  return frame->Iteration(0);
}

}  // namespace

// FNV-1a (64-bit) rather than absl::Hash, which is seeded per process.
uint64_t ChildFrameId(uint64_t parent_id, int64_t iter, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ULL;
    }
  };
  mix(&parent_id, sizeof(parent_id));
  mix(&iter, sizeof(iter));
  mix(name.data(), name.size());
  return h == 0 ? 1 : h;  // 0 is the root frame
}

IterationState::IterationState(const FrameLayout& layout, int64_t iter)
    : iter(iter),
      slots(layout.num_slots),
      pending(new std::atomic<int>[layout.pending_init.size()]) {
  const size_t n = layout.pending_init.size();
  for (size_t i = 0; i < n; ++i) {
    pending[i].store(layout.pending_init[i], std::memory_order_relaxed);
  }
  if (layout.track_dead) {
    dead.reset(new std::atomic<int>[n]);
    merge_live.reset(new uint8_t[n]);
    for (size_t i = 0; i < n; ++i) {
      dead[i].store(0, std::memory_order_relaxed);
      merge_live[i] = 0;
    }
  }
}

FrameState::FrameState(const FrameLayout* layout, FrameState* parent, IterationState* parent_iter,
                       int static_id)
    : layout(layout),
      parent(parent),
      parent_iter(parent_iter),
      static_id(static_id),
      frame_id(parent == nullptr
                   ? 0
                   : ChildFrameId(parent->frame_id, parent_iter->iter, layout->info.name)),
      pending_enters(layout->info.num_enters) {
  iterations.push_back(std::make_unique<IterationState>(*layout, 0));
}

FramePropagator::FramePropagator(const ExecutorLayout* layout)
    : layout_(layout),
      root_(&layout->frame(0), nullptr, nullptr, 0),
      root_iter_(FirstIteration(&root_)) {}

int FramePropagator::NumIterationsForTesting(const TaggedNode& node) {
  absl::MutexLock lock(&node.frame->mu);
  return static_cast<int>(node.frame->iterations.size());
}

void FramePropagator::PropagateInFrames(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                                        ReadyNodes* ready) {
  const NodeItem& item = layout_->item(t.id);
  switch (item.kind) {
    case ItemKind::kEnter:
      RunEnter(t, outputs, ready);
      break;
    case ItemKind::kExit:
      RunExit(t, outputs, ready);
      break;
    case ItemKind::kNextIteration:
      if (!t.dead) RunNextIteration(t, outputs, ready);  // a dead one ends the loop
      break;
    default:
      ActivateInFrame(item, t.dead, outputs, t.frame, t.iter, ready);
      break;
  }
  if (!t.frame->is_root()) FinishInFrame(t.frame, t.iter, ready);
}

absl::Status FramePropagator::MissingOutput(const NodeItem& item, int output) {
  return absl::InternalError(
      absl::StrCat("node ", item.node->DebugName(), " did not produce output ", output));
}

int FramePropagator::ActivateNodes(const NodeItem& item, bool dead,
                                   absl::Span<const TensorValue> outputs, FrameState* frame,
                                   IterationState* iter, ReadyNodes* ready) const {
  // First fill every consumer's slot, then release consumers, so no consumer
  // can run (and update a variable) before all reads of this node's outputs
  // are taken. A Merge takes its input when it decides (below).
  if (!dead) {
    for (const OutEdge& e : item.out_edges) {
      if (e.dst_slot < 0) continue;
      const TensorValue& v = outputs[e.src_output];
      if (!HasValue(v)) continue;  // a Switch's dead output
      const NodeItem& dst = layout_->item(e.dst_item);
      if (dst.kind == ItemKind::kMerge) continue;
      TensorValue& slot = iter->slots[e.dst_slot];
      slot = v;
      const int k = e.dst_slot - dst.input_start;
      if (v.ref != nullptr && !dst.input_is_ref[k] && !dst.read_when_run[k]) {
        // A read of a variable takes its value now: updates in the same step
        // that are not ordered before the reader copy on write and leave this
        // snapshot alone (NodeItem::read_when_run). An uninitialized variable
        // is read when the consumer runs (an Assign ordered before it in this
        // step may initialize it).
        absl::MutexLock lock(&v.ref->mu);
        if (v.ref->initialized) {
          slot.tensor = v.ref->tensor;
          slot.ref = nullptr;
        }
      }
    }
  }
  int activated = 0;
  for (const OutEdge& e : item.out_edges) {
    const NodeItem& dst = layout_->item(e.dst_item);
    const int k = dst.local_id;
    const bool edge_dead = dead || (e.src_output >= 0 && !HasValue(outputs[e.src_output]));
    bool now_ready = false;
    bool dst_dead = false;
    if (dst.kind == ItemKind::kMerge) {
      // Ready once its control inputs are in and either a live data input
      // arrives (the first one is taken) or every data input is dead.
      absl::MutexLock lock(&iter->merge_mu);
      const bool live = iter->merge_live[k] != 0;
      if (e.dst_slot < 0) {
        const int left = iter->pending[k].fetch_sub(1, std::memory_order_relaxed) - 1;
        dst_dead = !live && iter->dead[k].load(std::memory_order_relaxed) == dst.num_inputs;
        now_ready = left == 0 && (live || dst_dead);
      } else if (!edge_dead) {
        if (!live) {
          iter->merge_live[k] = 1;
          iter->slots[e.dst_slot] = outputs[e.src_output];
          now_ready = iter->pending[k].load(std::memory_order_relaxed) == 0;
        }
      } else {
        // A dead Enter kills its loop's Merge at once (its NextIteration
        // input will never come): the whole loop then runs dead once, and
        // its Exits, dead, reach consumers on other devices too.
        const int d = iter->dead[k].fetch_add(1, std::memory_order_relaxed) + 1;
        dst_dead = !live && (d == dst.num_inputs || item.kind == ItemKind::kEnter);
        now_ready = dst_dead && iter->pending[k].load(std::memory_order_relaxed) == 0;
      }
    } else {
      // The dead count is raised before the pending count falls, so the
      // thread that takes it to zero sees every dead input.
      if (edge_dead) iter->dead[k].fetch_add(1, std::memory_order_relaxed);
      now_ready = iter->pending[k].fetch_sub(1, std::memory_order_acq_rel) == 1;
      if (now_ready && iter->dead != nullptr && dst.kind != ItemKind::kControlTrigger) {
        dst_dead = iter->dead[k].load(std::memory_order_relaxed) > 0;
      }
    }
    if (now_ready) {
      ready->push_back(TaggedNode{e.dst_item, frame, iter, dst_dead});
      ++activated;
    }
  }
  return activated;
}

void FramePropagator::ActivateInFrame(const NodeItem& item, bool dead,
                                      absl::Span<const TensorValue> outputs, FrameState* frame,
                                      IterationState* iter, ReadyNodes* ready) const {
  if (frame->is_root()) {
    ActivateNodes(item, dead, outputs, frame, iter, ready);
    return;
  }
  absl::MutexLock lock(&frame->mu);
  iter->outstanding_ops += ActivateNodes(item, dead, outputs, frame, iter, ready);
}

FrameState* FramePropagator::FindOrCreateChild(FrameState* frame, IterationState* iter,
                                               int child) const {
  absl::MutexLock lock(&frame->mu);
  std::unique_ptr<FrameState>& state = iter->children[child];
  if (state == nullptr) {
    state = std::make_unique<FrameState>(&layout_->frame(child), frame, iter, child);
    ++iter->outstanding_frames;
  }
  return state.get();
}

void FramePropagator::RunEnter(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                               ReadyNodes* ready) const {
  const NodeItem& item = layout_->item(t.id);
  FrameState* child = FindOrCreateChild(t.frame, t.iter, item.child_frame);
  bool done;
  {
    absl::MutexLock lock(&child->mu);
    if (item.is_constant_enter) {
      // A loop invariant: every iteration, present and future, gets it.
      PendingValue v{t.id, t.dead ? TensorValue() : outputs[0], t.dead};
      for (auto& iter : child->iterations) {
        iter->outstanding_ops +=
            ActivateNodes(item, v.dead, {&v.value, 1}, child, iter.get(), ready);
      }
      child->invariants.push_back(std::move(v));
    } else {
      // Iteration 0 lives until every Enter has run.
      IterationState* first = child->Iteration(0);
      first->outstanding_ops += ActivateNodes(item, t.dead, outputs, child, first, ready);
    }
    --child->pending_enters;
    done = CleanupIterations(child, ready);
  }
  if (done) DeleteFrame(child, ready);
}

void FramePropagator::RunExit(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                              ReadyNodes* ready) const {
  if (!t.dead) {
    ActivateInFrame(layout_->item(t.id), false, outputs, t.frame->parent, t.frame->parent_iter,
                    ready);
    return;
  }
  // Dead on a continuing iteration: dropped. Dead on the newest: the whole
  // loop may be dead; its consumers hear so when the frame ends.
  absl::MutexLock lock(&t.frame->mu);
  if (t.iter->iter == t.frame->newest()) t.frame->dead_exits.emplace_back(t.id, t.iter->iter);
}

void FramePropagator::RunNextIteration(const TaggedNode& t, absl::Span<const TensorValue> outputs,
                                       ReadyNodes* ready) const {
  const NodeItem& item = layout_->item(t.id);
  FrameState* frame = t.frame;
  absl::MutexLock lock(&frame->mu);
  IterationState* next = frame->Iteration(t.iter->iter + 1);
  if (next == nullptr) {
    if (static_cast<int>(frame->iterations.size()) >= frame->layout->info.parallel_iterations) {
      // parallel_iterations are live: the value waits for the oldest to end.
      frame->deferred.push_back(PendingValue{t.id, outputs[0], false});
      return;
    }
    next = StartIteration(frame, ready);
  }
  next->outstanding_ops += ActivateNodes(item, false, outputs, frame, next, ready);
}

IterationState* FramePropagator::StartIteration(FrameState* frame, ReadyNodes* ready) const {
  frame->iterations.push_back(
      std::make_unique<IterationState>(*frame->layout, frame->newest() + 1));
  IterationState* iter = frame->iterations.back().get();
  for (const PendingValue& v : frame->invariants) {
    iter->outstanding_ops +=
        ActivateNodes(layout_->item(v.item), v.dead, {&v.value, 1}, frame, iter, ready);
  }
  return iter;
}

bool FramePropagator::CleanupIterations(FrameState* frame, ReadyNodes* ready) const {
  while (!frame->iterations.empty()) {
    IterationState* oldest = frame->iterations.front().get();
    if (oldest->outstanding_ops > 0 || oldest->outstanding_frames > 0) break;
    if (oldest->iter == 0 && frame->pending_enters > 0) break;
    frame->iterations.erase(frame->iterations.begin());  // frees the iteration's tensors
    ++frame->first_iter;
    if (!frame->deferred.empty()) {
      // The values every NextIteration of the newest iteration deferred.
      IterationState* next = StartIteration(frame, ready);
      std::vector<PendingValue> values = std::move(frame->deferred);
      frame->deferred.clear();
      for (const PendingValue& v : values) {
        next->outstanding_ops +=
            ActivateNodes(layout_->item(v.item), false, {&v.value, 1}, frame, next, ready);
      }
    }
  }
  return frame->iterations.empty() && frame->pending_enters == 0;
}

void FramePropagator::FinishInFrame(FrameState* frame, IterationState* iter,
                                    ReadyNodes* ready) const {
  bool done;
  {
    absl::MutexLock lock(&frame->mu);
    --iter->outstanding_ops;
    done = CleanupIterations(frame, ready);
  }
  if (done) DeleteFrame(frame, ready);
}

void FramePropagator::DeleteFrame(FrameState* frame, ReadyNodes* ready) const {
  FrameState* parent = frame->parent;
  IterationState* parent_iter = frame->parent_iter;
  std::vector<int> dead_exits;
  {
    absl::MutexLock lock(&frame->mu);  // nothing else touches a finished frame
    const int64_t last = frame->first_iter - 1;
    for (const auto& [id, iter] : frame->dead_exits) {
      if (iter == last) dead_exits.push_back(id);
    }
  }
  bool parent_done = false;
  {
    absl::MutexLock lock(&parent->mu);
    for (int id : dead_exits) {
      const int n = ActivateNodes(layout_->item(id), /*dead=*/true, {}, parent, parent_iter, ready);
      if (!parent->is_root()) parent_iter->outstanding_ops += n;
    }
    --parent_iter->outstanding_frames;
    parent_iter->children.erase(frame->static_id);  // frees `frame`
    if (!parent->is_root()) parent_done = CleanupIterations(parent, ready);
  }
  if (parent_done) DeleteFrame(parent, ready);
}

}  // namespace internal
}  // namespace sluice
