// Automatic model-parallel placement: a critical-path list scheduler with
// memory constraints (in the family of Baechi's m-ETF/m-SCT) that assigns each
// colocation group to one of the given devices so that the predicted step
// time is small and no device's predicted memory exceeds its limit.
//
//   ASSIGN_OR_RETURN(std::vector<DeviceSpec> devs, ParseDeviceSpecs("CPU:0{mem=64M},CPU:1{mem=64M}"));
//   ASSIGN_OR_RETURN(PlacementReport r, AutoPlace(&graph, {.devices = devs}));
//   std::cout << r.ToString();   // per-device memory, busy time, predicted step
//   // every node's requested device is now one of devs[i].name
//
// Nodes that already request a device keep it (their group is pinned);
// colocation groups (placement/colocation.h) move as one. Errors:
// ResourceExhausted when the model does not fit all devices together (naming
// the bytes needed and available) or a pinned group exceeds its device;
// InvalidArgument for no devices or a pinned request no device matches.
//
// PredictPlacement simulates any placement (e.g. round-robin or manual) with
// the same model, so placements can be compared.
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
