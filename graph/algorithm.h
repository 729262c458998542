// Graph algorithms: topological order and cycle detection.
//
//   ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
//
// Thread-compatible.
#ifndef SLUICE_GRAPH_ALGORITHM_H_
#define SLUICE_GRAPH_ALGORITHM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

// Every live node, each after all its inputs (data and control). Edges out of
// NextIteration nodes close while loops (TensorFlow's back edges) and are
// not followed. Ties keep id order. InvalidArgument naming the nodes of one
// cycle when there is another cycle: "graph has a cycle: a -> b -> c -> a".
absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph);

// The nodes `roots` need, transitively through in-edges (roots included).
std::vector<bool> ReachableBackward(const Graph& graph, absl::Span<Node* const> roots);

}  // namespace sluice

#endif  // SLUICE_GRAPH_ALGORITHM_H_
