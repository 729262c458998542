// GraphView: a graph seen as boxes, so that a graph of thousands of nodes
// draws as a picture of a few dozen. Each name scope is collapsed into one
// box unless the user opens it.
//
//   GraphViewOptions opts;  opts.expand = {"layer1"};
//   ASSIGN_OR_RETURN(GraphView view, BuildGraphView(graph, device_of, opts));
//   for (const ViewBox& box : view.boxes) ...      // box.label_name, box.node_ids
//   const ViewBox& b = view.boxes[view.box_of[node->id()]];
//
// The rule: a node's box is the shortest prefix of its name, in '/'-separated
// parts, that is not an opened scope. Opening "a/b" opens "a" too. So with
// nothing opened, "a/b/c" and "a/d" share the box "a" and "x" is a box of
// its own; with "a" opened, "a/b/c" is in box "a/b", "a/d" is its own box.
// A node named like a scope joins that scope's box (a variable "W" and its
// "W/read", "W/Assign"). Boxes never span devices: a scope whose nodes sit
// on two devices is one box on each. Nodes whose op is in `singular_ops`
// (the Send/Recv of a partitioned graph by default) are always boxes of
// their own.
//
// Edges: data and control edges between two different boxes merge into one
// ViewEdge per (source box, destination box, kind). Data edges between boxes
// on different devices are left out: the renderer draws them as Send/Recv
// transfers (placement_summary.h).
//
// Errors: InvalidArgument when an opened scope is not a scope of the graph,
// naming it and a few scopes that are. Thread-compatible value types.
#ifndef SLUICE_TOOLS_GRAPH_VIEW_H_
#define SLUICE_TOOLS_GRAPH_VIEW_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"

namespace sluice {

struct ViewBox {
  std::string name;           // the scope ("layer1") or, for a lone node, its full name
  std::string device;         // every member sits here
  std::vector<int> node_ids;  // ascending
  bool collapsed = false;     // true: stands for a scope; false: one node shown as itself
  int scope_size = 0;         // nodes of the scope on all devices (== node_ids.size() unless split)
  // The most frequent ops among the members, most frequent first (ties by name).
  std::vector<std::pair<std::string, int>> op_counts;
};

struct ViewEdge {
  int src_box = 0;
  int dst_box = 0;
  bool control = false;
  int count = 0;  // graph edges merged into this one
};

struct GraphView {
  std::vector<ViewBox> boxes;  // ordered by their smallest member id
  std::vector<int> box_of;     // by node id; -1 for removed ids
  std::vector<ViewEdge> edges;
};

struct GraphViewOptions {
  std::vector<std::string> expand;  // scopes to open
  std::vector<std::string> singular_ops = {"_Send", "_Recv", "_HostSend", "_HostRecv"};
};

// `device_of` is indexed by node id (tools/view_placement.h).
absl::StatusOr<GraphView> BuildGraphView(const Graph& graph,
                                         absl::Span<const std::string> device_of,
                                         const GraphViewOptions& options);

}  // namespace sluice

#endif  // SLUICE_TOOLS_GRAPH_VIEW_H_
