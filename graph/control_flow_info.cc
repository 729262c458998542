#include "graph/control_flow_info.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

std::string FrameName(const ControlFlowInfo& info, int frame) {
  return frame == 0 ? std::string("the root frame")
                    : absl::StrCat("frame '", info.frames[frame].name, "'");
}

}  // namespace

absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph,
                                                     absl::Span<Node* const> order,
                                                     const ControlFlowInfoOptions& options) {
  ControlFlowInfo info;
  info.frames.push_back(FrameInfo{});
  info.frame_of.assign(graph.num_node_ids(), -1);
  info.enter_child.assign(graph.num_node_ids(), -1);
  // Child frames by (parent frame, name): one loop nested in two others is
  // two frames.
  std::map<std::pair<int, std::string>, int> children;

  for (Node* n : order) {
    if (n->control_flow() != ControlFlowRole::kNone) info.has_control_flow = true;
    int frame = -1;
    bool unresolved = false;
    const Node* first_src = nullptr;
    for (const Edge* e : n->in_edges()) {
      const Node* src = e->src;
      if (src->IsNextIteration()) continue;  // a back edge: checked below
      const int src_frame = info.frame_of[src->id()];
      if (src_frame < 0) {  // only when allow_unresolved
        unresolved = true;
        break;
      }
      int candidate = src_frame;
      if (src->control_flow() == ControlFlowRole::kEnter) {
        candidate = info.enter_child[src->id()];
      } else if (src->control_flow() == ControlFlowRole::kExit) {
        candidate = info.frames[src_frame].parent;
      }
      if (frame < 0) {
        frame = candidate;
        first_src = src;
      } else if (frame != candidate) {
        if (options.allow_unresolved) {
          unresolved = true;
          break;
        }
        return absl::InvalidArgumentError(absl::StrCat(
            "node ", n->DebugName(), " has inputs from two frames: ", first_src->name(),
            " (", FrameName(info, frame), ") and ", src->name(), " (",
            FrameName(info, candidate), ")"));
      }
    }
    if (unresolved) continue;  // frame_of stays -1
    if (frame < 0) frame = 0;
    info.frame_of[n->id()] = frame;

    switch (n->control_flow()) {
      case ControlFlowRole::kEnter: {
        ASSIGN_OR_RETURN(std::string name, n->GetAttr<std::string>("frame_name"));
        auto [it, inserted] = children.emplace(std::make_pair(frame, name),
                                               static_cast<int>(info.frames.size()));
        if (inserted) {
          FrameInfo child;
          child.name = name;
          child.parent = frame;
          absl::StatusOr<int64_t> p = n->GetAttr<int64_t>("parallel_iterations");
          child.parallel_iterations = p.ok() && *p > 0 ? static_cast<int>(*p) : 10;
          info.frames.push_back(std::move(child));
        }
        info.enter_child[n->id()] = it->second;
        ++info.frames[it->second].num_enters;
        break;
      }
      case ControlFlowRole::kExit:
        if (frame == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "node ", n->DebugName(), " is an Exit outside every while loop (no Enter before it)"));
        }
        break;
      default:
        break;
    }
  }

  // A NextIteration hands its value to the next iteration of its own frame.
  for (Node* n : order) {
    if (!n->IsNextIteration() || info.frame_of[n->id()] < 0) continue;
    for (const Edge* e : n->out_edges()) {
      if (info.frame_of[e->dst->id()] < 0) continue;
      if (info.frame_of[e->dst->id()] != info.frame_of[n->id()]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node ", n->DebugName(), " (", FrameName(info, info.frame_of[n->id()]),
            ") feeds ", e->dst->name(), " in ", FrameName(info, info.frame_of[e->dst->id()])));
      }
    }
  }
  return info;
}

}  // namespace sluice
