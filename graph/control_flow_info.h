// The static frames of a graph with TensorFlow 1.x control flow: which frame
// each node runs in. A frame is one while loop: its nodes run once per
// iteration. Enter nodes lead from a frame into a child frame (named by
// their `frame_name` attr), Exit nodes back to the parent; every other node
// runs in the frame of its inputs. Nodes without inputs run in the root
// frame (TensorFlow's builders give a constant inside a loop a control input
// from the loop, which puts it there).
//
//   ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
//   ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(graph, order));
//   const FrameInfo& f = info.frames[info.frame_of[node->id()]];
//
// Errors (InvalidArgument naming the node): inputs from two different
// frames, an Exit in the root frame, a NextIteration feeding another frame.
// Plain functions of their arguments: thread-compatible.
#ifndef SLUICE_GRAPH_CONTROL_FLOW_INFO_H_
#define SLUICE_GRAPH_CONTROL_FLOW_INFO_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"

namespace sluice {

struct FrameInfo {
  std::string name;             // the Enters' frame_name; "" for the root frame
  int parent = -1;              // the parent frame's index; -1 for the root
  int parallel_iterations = 1;  // from the first Enter into the frame
  int num_enters = 0;           // Enter nodes leading into the frame
};

struct ControlFlowInfo {
  std::vector<FrameInfo> frames;  // frames[0] is the root frame
  std::vector<int> frame_of;      // by node id: the frame the node runs in (-1: no node)
  std::vector<int> enter_child;   // by node id: the frame an Enter leads into (-1: not an Enter)
  bool has_control_flow = false;  // any Switch, Merge, Enter, ... at all
};

struct ControlFlowInfoOptions {
  // A node with inputs from two frames (or from such a node) gets frame -1
  // instead of failing the whole graph: for a graph in the middle of being
  // built (a gradient's nodes not yet rewired into their loop), whose
  // finished part is still to be read.
  bool allow_unresolved = false;
};

// `order` is the graph's nodes in TopologicalOrder.
absl::StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& graph,
                                                     absl::Span<Node* const> order,
                                                     const ControlFlowInfoOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_GRAPH_CONTROL_FLOW_INFO_H_
