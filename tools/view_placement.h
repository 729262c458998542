// Which device each node of a graph is drawn on, for the visualizer; places
// an unplaced graph first when the user gives a device list.
//
//   ASSIGN_OR_RETURN(std::vector<DeviceSpec> specs, ParseDeviceSpecs("CPU:0,CPU:1"));
//   ViewPlacementOptions opts;  opts.devices = specs;  opts.auto_place = true;
//   ASSIGN_OR_RETURN(std::vector<std::string> device_of, PlaceForView(&graph, opts));
//   // device_of[node->id()] is "/device:CPU:1", ...
//
// Rules:
//  - Without devices: a node is drawn on its assigned device, else its
//    requested device, else on kUnplacedDevice. The graph is not changed.
//  - With devices and auto_place: AutoPlace (placement/auto_placer.h) picks
//    a device for every node that requests none.
//  - With devices and no auto_place: the regular placer's rules without its
//    kernel check (kernels say nothing about a GPU or another task that this
//    machine may not have): a colocation group (placement/colocation.h)
//    whose members request devices goes to the first listed device
//    compatible with every request; every other group goes to the first
//    listed device.
//  In both cases each node's device is then reported as the canonical name
//  of the listed device it ended on (the first one compatible with what the
//  node asks for), so "CPU:1" and "/device:CPU:1" draw as one device.
//
// Errors: InvalidArgument naming the node, what it asks for and the listed
// devices when no listed device fits it; auto_place without devices; a
// device name in the list that does not parse; AutoPlace's own errors
// (ResourceExhausted when the model does not fit) with context.
//
// Thread-compatible; with devices, sets requested devices on the graph's nodes.
#ifndef SLUICE_TOOLS_VIEW_PLACEMENT_H_
#define SLUICE_TOOLS_VIEW_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "placement/cost_model.h"
#include "placement/device_name.h"

namespace sluice {

// The device label of nodes that have none and were not placed.
inline constexpr char kUnplacedDevice[] = "(unplaced)";

struct ViewPlacementOptions {
  std::vector<DeviceSpec> devices;  // empty: draw the graph as it is placed
  bool auto_place = false;          // AutoPlace instead of the default rule
  CostModelOptions cost;            // for AutoPlace
};

// Returns the device of every node, indexed by node id ("" for removed ids).
absl::StatusOr<std::vector<std::string>> PlaceForView(Graph* graph,
                                                      const ViewPlacementOptions& options);

// Parses a device list entry as a device name; short forms like "CPU:1" mean
// "/device:CPU:1". InvalidArgument naming the entry.
absl::StatusOr<DeviceName> ParseSpecDeviceName(absl::string_view name);

}  // namespace sluice

#endif  // SLUICE_TOOLS_VIEW_PLACEMENT_H_
