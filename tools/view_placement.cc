// Device of each node for the visualizer. See view_placement.h.
#include "tools/view_placement.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "placement/auto_placer.h"
#include "placement/colocation.h"

namespace sluice {
namespace {

// What a node asks for: its assigned device, else its requested one.
const std::string& DeviceOf(const Node& node) {
  return node.assigned_device().empty() ? node.requested_device() : node.assigned_device();
}

// The listed devices, parsed, for matching requests against.
struct ListedDevice {
  DeviceName name;
  std::string canonical;  // name.ToString()
};

std::string ListNames(const std::vector<ListedDevice>& listed) {
  std::vector<std::string> names;
  for (const ListedDevice& d : listed) names.push_back(d.canonical);
  return absl::StrJoin(names, ", ");
}

// Index of the first listed device compatible with every request in
// `requests` (parsed); -1 when none is.
int FirstCompatible(const std::vector<ListedDevice>& listed,
                    const std::vector<DeviceName>& requests) {
  for (size_t i = 0; i < listed.size(); ++i) {
    bool fits = true;
    for (const DeviceName& r : requests) fits = fits && r.IsCompatibleWith(listed[i].name);
    if (fits) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<DeviceName> ParseRequest(const Node& node) {
  absl::StatusOr<DeviceName> name = DeviceName::Parse(DeviceOf(node));
  if (!name.ok()) return AddContext(name.status(), absl::StrCat("node ", node.DebugName()));
  return name;
}

absl::Status NoListedDeviceFits(const Node& node, const std::vector<ListedDevice>& listed) {
  return absl::InvalidArgumentError(absl::StrCat("node ", node.DebugName(), " asks for device '",
                                                 DeviceOf(node), "', which none of the listed ",
                                                 "devices (", ListNames(listed), ") matches"));
}

// The default rule: requested groups on the first compatible listed device,
// the rest on the first listed device.
absl::Status PlaceByDefaultRule(Graph* graph, const std::vector<ListedDevice>& listed) {
  ColocationGroups groups = ComputeColocationGroups(*graph);
  for (const std::vector<int>& members : groups.members) {
    std::vector<DeviceName> requests;
    const Node* asking = nullptr;
    for (int id : members) {
      const Node& n = *graph->node(id);
      if (DeviceOf(n).empty()) continue;
      ASSIGN_OR_RETURN(DeviceName r, ParseRequest(n));
      requests.push_back(std::move(r));
      if (asking == nullptr) asking = &n;
    }
    int device = FirstCompatible(listed, requests);
    if (device < 0) {
      if (requests.size() > 1 && FirstCompatible(listed, {requests[0]}) >= 0) {
        std::vector<std::string> asks;
        for (int id : members) {
          const Node& n = *graph->node(id);
          if (!DeviceOf(n).empty()) asks.push_back(absl::StrCat(n.name(), " -> ", DeviceOf(n)));
        }
        return absl::InvalidArgumentError(
            absl::StrCat("nodes that must share a device ask for devices no listed device (",
                         ListNames(listed), ") satisfies together: ", absl::StrJoin(asks, ", ")));
      }
      return NoListedDeviceFits(*asking, listed);
    }
    for (int id : members) graph->node(id)->set_requested_device(listed[device].canonical);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceName> ParseSpecDeviceName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("device list has an empty entry");
  std::string full = absl::StartsWith(name, "/") ? std::string(name) : absl::StrCat("/", name);
  absl::StatusOr<DeviceName> parsed = DeviceName::Parse(full);
  if (!parsed.ok()) {
    return AddContext(parsed.status(), absl::StrCat("device list entry '", name, "'"));
  }
  return parsed;
}

absl::StatusOr<std::vector<std::string>> PlaceForView(Graph* graph,
                                                      const ViewPlacementOptions& options) {
  std::vector<std::string> device_of(graph->num_node_ids());
  if (options.devices.empty()) {
    if (options.auto_place) {
      return absl::InvalidArgumentError("automatic placement needs a device list to place on");
    }
    for (const Node* n : graph->nodes()) {
      device_of[n->id()] = DeviceOf(*n).empty() ? kUnplacedDevice : DeviceOf(*n);
    }
    return device_of;
  }

  std::vector<ListedDevice> listed;
  for (const DeviceSpec& spec : options.devices) {
    ASSIGN_OR_RETURN(DeviceName name, ParseSpecDeviceName(spec.name));
    listed.push_back({name, name.ToString()});
  }
  if (options.auto_place) {
    AutoPlacerOptions auto_options;
    auto_options.devices = options.devices;
    for (size_t i = 0; i < listed.size(); ++i) auto_options.devices[i].name = listed[i].canonical;
    auto_options.cost = options.cost;
    absl::StatusOr<PlacementReport> report = AutoPlace(graph, auto_options);
    if (!report.ok()) return AddContext(report.status(), "automatic placement");
  } else {
    RETURN_IF_ERROR(PlaceByDefaultRule(graph, listed));
  }

  for (const Node* n : graph->nodes()) {
    ASSIGN_OR_RETURN(DeviceName r, ParseRequest(*n));
    int device = FirstCompatible(listed, {r});
    if (device < 0) return NoListedDeviceFits(*n, listed);
    device_of[n->id()] = listed[device].canonical;
  }
  return device_of;
}

}  // namespace sluice
