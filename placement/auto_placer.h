// Automatic model-parallel placement: a critical-path list scheduler with
// memory constraints (in the family of Baechi's m-ETF/m-SCT) that assigns each
// colocation group to one of the given devices so that the predicted step
// time is small and no device's predicted memory exceeds its limit.
//
//   ASSIGN_OR_RETURN(std::vector<DeviceSpec> devs,
//                    ParseDeviceSpecs("CPU:0{mem=64M},CPU:1{mem=64M}"));
//   ASSIGN_OR_RETURN(PlacementReport r, AutoPlace(&graph, {.devices = devs}));
//   std::cout << r.ToString();   // per-device memory, busy time, predicted step
//   // every node's requested device is now one of devs[i].name
//
// The algorithm: nodes are list-scheduled in data-flow order; each step takes
// the ready node and device where it can start earliest (ties: the longer
// path to the end of the graph, its "static level"), and the node goes to the
// device where it would finish earliest. A colocation group
// (placement/colocation.h) is committed, and its memory reserved, when its
// first member is placed; its other members follow it, so there are no
// cycles between groups to untangle. Variables, constants and placeholders
// (zero-FLOP nodes fed only by their own group) do not claim a device at the
// start: they go with their first consumer when it has room for them. A device
// that cannot hold a group's memory is skipped. Before scheduling, chains of
// computing nodes (v the only consumer of u, u the only computing input of v)
// join into one unit, as Baechi fuses operators, unless a member holds a
// variable or asks for a device, or the unit would exceed half the smallest
// device memory: a chain split between devices only adds hops (measured on
// bench/placement's wide graph). Cost: O((V + E) D log V).
//
// Memory, as Baechi counts it: each node's persistent bytes (variables) plus
// its outputs, none freed before the step ends; ref outputs alias their
// variable and count once (NodeCost::memory_bytes). Transfers are modelled
// without link contention, so a variable read can be sent ahead of its use.
//
// Nodes that already ask for a device (assigned, else requested) keep it: the
// request limits their group to the devices it is compatible with, and a
// group limited to one device claims its memory first. AutoPlace fills the
// unset parts of each node's request from the chosen DeviceSpec's name.
// Errors, before anything in the graph changes: ResourceExhausted when the
// model does not fit all devices together (naming the bytes needed and
// available), when a pinned group exceeds its device, or when the schedule
// finds no device with room for a group (naming its first node and bytes);
// InvalidArgument for no devices, a request no device matches, or colocated
// nodes whose requests conflict.
//
// PredictPlacement simulates any placement (e.g. round-robin or manual) with
// the same model, so placements can be compared; AutoPlace's report is the
// prediction for the placement it chose.
//
// Thread-compatible; AutoPlace sets requested devices on the graph's nodes.
#ifndef SLUICE_PLACEMENT_AUTO_PLACER_H_
#define SLUICE_PLACEMENT_AUTO_PLACER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placement/cost_model.h"

namespace sluice {

struct AutoPlacerOptions {
  std::vector<DeviceSpec> devices;
  CostModelOptions cost;
};

struct PlacementReport {
  std::vector<std::string> devices;       // DeviceSpec names, in order
  std::vector<int64_t> memory_bytes;      // predicted per device
  std::vector<double> busy_seconds;       // predicted compute per device
  std::vector<int> node_counts;           // nodes per device
  int64_t transfer_bytes = 0;             // predicted bytes crossing devices per step
  double predicted_step_seconds = 0;      // simulated makespan
  std::string ToString() const;           // one line per device, then the step
};

absl::StatusOr<PlacementReport> AutoPlace(Graph* graph, const AutoPlacerOptions& options);

// Simulates the graph as placed: each node's assigned device, else its
// requested device, matched against `devices` (first match); a node matching
// none is an InvalidArgument naming it.
absl::StatusOr<PlacementReport> PredictPlacement(const Graph& graph,
                                                 const std::vector<DeviceSpec>& devices,
                                                 const CostModelOptions& cost = {});

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_AUTO_PLACER_H_
