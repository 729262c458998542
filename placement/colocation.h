// Colocation groups: the nodes that must share one device.
//
//   ColocationGroups groups = ComputeColocationGroups(graph);
//   for (const auto& members : groups.members) ...   // each a set of node ids
//
// Joined: nodes naming each other in "_class" loc:@ attrs (Scope::ColocateWith);
// a node taking a reference input and the node producing it (a variable with
// every op that assigns or applies to it); an Identity reading a variable's
// reference output (the variable's "read" node); a node taking a resource
// handle and the node producing it (a VarHandleOp with its reads and
// updates, a TensorArray with its ops: a resource is found only in its own
// device's resource manager).
//
// Thread-compatible; reads the graph only.
#ifndef SLUICE_PLACEMENT_COLOCATION_H_
#define SLUICE_PLACEMENT_COLOCATION_H_

#include <vector>

#include "graph/graph.h"

namespace sluice {

struct ColocationGroups {
  // group_of[node id]: index into `members`; -1 for ids of removed nodes.
  std::vector<int> group_of;
  // Node ids of each group, in ascending id order; groups ordered by their
  // smallest member id.
  std::vector<std::vector<int>> members;
};

ColocationGroups ComputeColocationGroups(const Graph& graph);

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_COLOCATION_H_
