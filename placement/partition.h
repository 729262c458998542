// Partition: splits a placed graph into one GraphDef per device, inserting a
// _Send/_Recv pair (runtime/sendrecv_ops.h) where a data edge crosses
// devices, and a small Const -> _Send ... _Recv chain where a control edge
// does.
//
//   PlaceGraph(&graph, devices, kernels, {});       // every node assigned
//   ASSIGN_OR_RETURN(auto parts, Partition(graph));  // device name -> GraphDef
//   for (const auto& [device, def] : parts) ... ImportGraphDef(def, &g, {.allow_internal_ops = true})
//
// One pair per (tensor, destination device), however many consumers the
// tensor has there; its tensor_name is unique in the graph, so with the step
// id the rendezvous key is unique per step. A variable read on another
// device after updates of that variable (ordered by any path) gets a pair of
// its own whose _Send runs after those updates, so it sees them as a reader
// on the variable's device would. Each NodeDef's device field holds
// its partition's device. The control chain needs the registry to hold
// Const (the built-in ops do).
//
// Errors: FailedPrecondition naming a node that has no device.
// Thread-compatible; reads the graph only.
#ifndef SLUICE_PLACEMENT_PARTITION_H_
#define SLUICE_PLACEMENT_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace sluice {

struct PartitionOptions {
  // Where a node goes; default: its assigned device. (A distributed master
  // could group by task instead.)
  std::function<std::string(const Node&)> node_to_loc;
  // The incarnation recorded for a sending device (a restarted process has a
  // new one, so stale keys never match); default 1.
  std::function<uint64_t(const std::string& device)> get_incarnation;
};

absl::StatusOr<std::map<std::string, GraphDef>> Partition(const Graph& graph,
                                                          const PartitionOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_PARTITION_H_
