#include "placement/auto_placer.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "placement/colocation.h"
#include "placement/device_name.h"
#include "placement/list_scheduler.h"

namespace sluice {
namespace {

using internal::FormatBytes;
using internal::kUnlimitedBytes;
using internal::Problem;
using internal::Schedule;

std::string FormatSeconds(double s) {
  char buf[64];
  if (s >= 1) {
    std::snprintf(buf, sizeof(buf), "%.3f s", s);
  } else if (s >= 1e-3) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f us", s * 1e6);
  }
  return buf;
}

absl::StatusOr<std::vector<DeviceName>> ParseSpecNames(const std::vector<DeviceSpec>& devices) {
  if (devices.empty()) return absl::InvalidArgumentError("auto placer: no devices given");
  std::vector<DeviceName> names;
  for (const DeviceSpec& d : devices) {
    absl::StatusOr<DeviceName> name = DeviceName::Parse(d.name);
    if (!name.ok()) return AddContext(name.status(), "auto placer: device spec");
    names.push_back(*std::move(name));
  }
  return names;
}

// The device a node asks for: its assigned device, else its requested one.
const std::string& DeviceRequest(const Node& node) {
  return node.assigned_device().empty() ? node.requested_device() : node.assigned_device();
}

std::string DeviceList(const std::vector<DeviceSpec>& devices) {
  std::vector<std::string> names;
  for (const DeviceSpec& d : devices) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

// Which devices a node may go on. InvalidArgument naming the node when its
// request is malformed or matches none.
absl::StatusOr<std::vector<bool>> AllowedDevices(const Node& node,
                                                 const std::vector<DeviceSpec>& devices,
                                                 const std::vector<DeviceName>& names) {
  std::vector<bool> allowed(devices.size(), true);
  const std::string& request = DeviceRequest(node);
  if (request.empty()) return allowed;
  absl::StatusOr<DeviceName> parsed = DeviceName::Parse(request);
  if (!parsed.ok()) return AddContext(parsed.status(), absl::StrCat("node ", node.DebugName()));
  bool any = false;
  for (size_t d = 0; d < devices.size(); ++d) {
    allowed[d] = parsed->IsCompatibleWith(names[d]);
    any = any || allowed[d];
  }
  if (!any) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", node.DebugName(), " requests device '", request, "', which matches none of the ",
        devices.size(), " devices (", DeviceList(devices), ")"));
  }
  return allowed;
}

// Chains of computing nodes become one placement unit, as in Baechi's
// operator fusion before placement: u and v join when v is u's only data
// consumer and u is v's only computing input (inputs with no FLOPs, such as
// variables and constants, do not count). Splitting such a chain between
// devices saves no time, since its nodes run one after the other, and every
// hop costs a transfer and a wait behind the other device's queue, which the
// list schedule does not see (measured: bench/placement's wide graph ran
// 1.4x slower split branch by branch than whole branches per device).
// Groups holding a node with a device request or a variable are left as
// they are, and a chain stops growing at `max_bytes` of memory (half the
// smallest device's), so that memory limits still leave room to split.
// First, a variable's initial value joins the variable's group, as TensorFlow
// colocates initializers: the cost model counts it as the variable's storage
// (AdoptingAssign), which holds only on the variable's device.
ColocationGroups MergeChains(const Graph& graph, const CostModel& cost,
                             const ColocationGroups& groups, int64_t max_bytes) {
  const int num_groups = static_cast<int>(groups.members.size());
  std::vector<int> parent(num_groups);
  for (int g = 0; g < num_groups; ++g) parent[g] = g;
  auto find = [&](int g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  };
  std::vector<bool> fixed(num_groups, false);
  std::vector<int64_t> bytes(num_groups, 0);
  for (const Node* node : graph.nodes()) {
    const int g = groups.group_of[node->id()];
    const NodeCost& c = cost.cost(*node);
    if (!DeviceRequest(*node).empty() || c.persistent_bytes > 0) fixed[g] = true;
    bytes[g] += c.memory_bytes();
  }
  for (const Node* value : graph.nodes()) {
    for (int i = 0; i < value->num_outputs(); ++i) {
      const Node* assign = AdoptingAssign(*value, i);
      if (assign == nullptr) continue;
      const int gu = find(groups.group_of[value->id()]), gv = find(groups.group_of[assign->id()]);
      if (gu == gv || fixed[gu]) continue;
      parent[gu] = gv;
      bytes[gv] += bytes[gu];
    }
  }
  for (const Node* v : graph.nodes()) {
    if (cost.cost(*v).flops <= 0) continue;
    const Node* only = nullptr;
    int computing = 0;
    for (const Edge* e : v->in_edges()) {
      if (e->IsControl() || cost.cost(*e->src).flops <= 0) continue;
      ++computing;
      only = e->src;
    }
    if (computing != 1) continue;
    int consumers = 0;
    for (const Edge* e : only->out_edges()) consumers += e->IsControl() ? 0 : 1;
    const int gu = find(groups.group_of[only->id()]), gv = find(groups.group_of[v->id()]);
    if (consumers != 1 || gu == gv || fixed[gu] || fixed[gv] || bytes[gu] + bytes[gv] > max_bytes) {
      continue;
    }
    parent[gu] = gv;
    bytes[gv] += bytes[gu];
  }
  ColocationGroups merged;
  merged.group_of.assign(groups.group_of.size(), -1);
  std::vector<int> index(num_groups, -1);
  for (size_t id = 0; id < groups.group_of.size(); ++id) {  // ascending ids
    if (groups.group_of[id] < 0) continue;
    const int root = find(groups.group_of[id]);
    if (index[root] < 0) {
      index[root] = static_cast<int>(merged.members.size());
      merged.members.emplace_back();
    }
    merged.group_of[id] = index[root];
    merged.members[index[root]].push_back(static_cast<int>(id));
  }
  return merged;
}

PlacementReport MakeReport(const Graph& graph, const CostModel& cost,
                           const std::vector<DeviceSpec>& devices, const Schedule& schedule) {
  PlacementReport r;
  const size_t num_devices = devices.size();
  for (const DeviceSpec& d : devices) r.devices.push_back(d.name);
  r.memory_bytes.assign(num_devices, 0);
  r.busy_seconds.assign(num_devices, 0);
  r.node_counts.assign(num_devices, 0);
  absl::flat_hash_set<std::tuple<int, int, int>> sent;
  for (const Node* node : graph.nodes()) {
    const int d = schedule.device[node->id()];
    r.memory_bytes[d] += cost.cost(*node).memory_bytes();
    r.busy_seconds[d] += cost.ComputeSeconds(*node, devices[d]);
    r.node_counts[d] += 1;
    for (const Edge* e : node->out_edges()) {
      const int dst = schedule.device[e->dst->id()];
      if (e->IsControl() || dst == d) continue;
      if (sent.insert({node->id(), e->src_output, dst}).second) {
        r.transfer_bytes += cost.cost(*node).output_bytes[e->src_output];
      }
    }
  }
  r.predicted_step_seconds = schedule.makespan;
  return r;
}

// Simulates a fixed placement: device_of[node id] for every live node.
absl::StatusOr<PlacementReport> Simulate(const Graph& graph, const CostModel& cost,
                                         const std::vector<DeviceSpec>& devices,
                                         const std::vector<int>& device_of) {
  Problem p;
  p.graph = &graph;
  p.cost = &cost;
  p.devices = &devices;
  p.group_of.assign(graph.num_node_ids(), -1);
  for (const Node* node : graph.nodes()) {
    const int g = static_cast<int>(p.group_device.size());
    p.group_of[node->id()] = g;
    p.first_node.push_back(node->id());
    p.group_size.push_back(1);
    p.group_bytes.push_back(0);
    p.group_device.push_back(device_of[node->id()]);
    p.allowed.emplace_back();
  }
  p.capacity.assign(devices.size(), kUnlimitedBytes);
  ASSIGN_OR_RETURN(Schedule schedule, internal::ScheduleList(&p));
  return MakeReport(graph, cost, devices, schedule);
}

// `request` with its unset parts taken from `device` (a spec's name).
std::string CompleteRequest(const std::string& request, const DeviceName& device) {
  absl::StatusOr<DeviceName> parsed = DeviceName::Parse(request);
  if (request.empty() || !parsed.ok()) return device.ToString();
  DeviceName out = *parsed;
  if (!out.job) out.job = device.job;
  if (!out.replica) out.replica = device.replica;
  if (!out.task) out.task = device.task;
  if (!out.type) out.type = device.type;
  if (!out.id) out.id = device.id;
  return out.ToString();
}

}  // namespace

std::string PlacementReport::ToString() const {
  std::string out;
  for (size_t d = 0; d < devices.size(); ++d) {
    absl::StrAppend(&out, devices[d], ": ", node_counts[d], " nodes, memory ",
                    FormatBytes(memory_bytes[d]), ", busy ", FormatSeconds(busy_seconds[d]), "\n");
  }
  absl::StrAppend(&out, "predicted step ", FormatSeconds(predicted_step_seconds), ", ",
                  FormatBytes(transfer_bytes), " across devices per step\n");
  return out;
}

absl::StatusOr<PlacementReport> AutoPlace(Graph* graph, const AutoPlacerOptions& options) {
  const std::vector<DeviceSpec>& devices = options.devices;
  ASSIGN_OR_RETURN(std::vector<DeviceName> names, ParseSpecNames(devices));
  ASSIGN_OR_RETURN(CostModel cost, CostModel::Build(*graph, options.cost));
  const int num_devices = static_cast<int>(devices.size());

  Problem p;
  p.graph = graph;
  p.cost = &cost;
  p.devices = &devices;
  p.allow_floating = true;
  int64_t max_chain_bytes = kUnlimitedBytes;
  for (const DeviceSpec& d : devices) {
    if (d.memory_bytes > 0) max_chain_bytes = std::min(max_chain_bytes, d.memory_bytes / 2);
  }
  ColocationGroups groups =
      MergeChains(*graph, cost, ComputeColocationGroups(*graph), max_chain_bytes);
  p.group_of = groups.group_of;
  const int num_groups = static_cast<int>(groups.members.size());
  p.first_node.assign(num_groups, -1);
  p.group_size.assign(num_groups, 0);
  p.group_bytes.assign(num_groups, 0);
  p.group_device.assign(num_groups, -1);
  p.allowed.assign(num_groups, std::vector<bool>(num_devices, true));
  int64_t total_bytes = 0;
  for (int g = 0; g < num_groups; ++g) {
    const Node* pinned_by = nullptr;
    for (int id : groups.members[g]) {
      const Node* node = graph->node(id);
      if (p.first_node[g] < 0) p.first_node[g] = id;
      ++p.group_size[g];
      p.group_bytes[g] += cost.cost(id).memory_bytes();
      if (DeviceRequest(*node).empty()) continue;
      ASSIGN_OR_RETURN(std::vector<bool> allowed, AllowedDevices(*node, devices, names));
      bool any = false;
      for (int d = 0; d < num_devices; ++d) {
        p.allowed[g][d] = p.allowed[g][d] && allowed[d];
        any = any || p.allowed[g][d];
      }
      if (!any) {
        return absl::InvalidArgumentError(absl::StrCat(
            "auto placer: node ", node->DebugName(), " requests device '", DeviceRequest(*node),
            "' but must be colocated with node ", pinned_by->DebugName(), ", which requests '",
            DeviceRequest(*pinned_by), "'"));
      }
      if (pinned_by == nullptr) pinned_by = node;
    }
    total_bytes += p.group_bytes[g];
  }
  p.capacity.assign(num_devices, kUnlimitedBytes);
  int64_t total_capacity = 0;
  bool unlimited = false;
  for (int d = 0; d < num_devices; ++d) {
    if (devices[d].memory_bytes > 0) {
      p.capacity[d] = devices[d].memory_bytes;
      total_capacity += devices[d].memory_bytes;
    } else {
      unlimited = true;
    }
  }
  if (!unlimited && total_bytes > total_capacity) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "auto placer: the model needs ", total_bytes, " bytes (", FormatBytes(total_bytes),
        ") but the ", num_devices, " devices hold only ", total_capacity, " bytes (",
        FormatBytes(total_capacity), ")"));
  }
  // Groups pinned to one device claim their memory before anything else.
  for (int g = 0; g < num_groups; ++g) {
    int only = -1, count = 0;
    for (int d = 0; d < num_devices; ++d) {
      if (p.allowed[g][d]) ++count, only = d;
    }
    if (count != 1 || p.first_node[g] < 0) continue;
    p.group_device[g] = only;
    if (p.capacity[only] == kUnlimitedBytes) continue;
    if (p.group_bytes[g] > p.capacity[only]) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "auto placer: node ", graph->node(p.first_node[g])->DebugName(),
          " is pinned to ", devices[only].name, " with its colocation group, which needs ",
          p.group_bytes[g], " bytes (", FormatBytes(p.group_bytes[g]), ") but only ",
          p.capacity[only], " bytes (", FormatBytes(p.capacity[only]),
          ") are left there for pinned nodes"));
    }
    p.capacity[only] -= p.group_bytes[g];
  }

  ASSIGN_OR_RETURN(Schedule schedule, internal::ScheduleList(&p));
  ASSIGN_OR_RETURN(PlacementReport report, Simulate(*graph, cost, devices, schedule.device));
  for (Node* node : graph->nodes()) {
    const int d = schedule.device[node->id()];
    node->set_requested_device(CompleteRequest(node->requested_device(), names[d]));
  }
  return report;
}

absl::StatusOr<PlacementReport> PredictPlacement(const Graph& graph,
                                                 const std::vector<DeviceSpec>& devices,
                                                 const CostModelOptions& cost_options) {
  ASSIGN_OR_RETURN(std::vector<DeviceName> names, ParseSpecNames(devices));
  ASSIGN_OR_RETURN(CostModel cost, CostModel::Build(graph, cost_options));
  std::vector<int> device_of(graph.num_node_ids(), -1);
  for (const Node* node : graph.nodes()) {
    ASSIGN_OR_RETURN(std::vector<bool> allowed, AllowedDevices(*node, devices, names));
    device_of[node->id()] =
        static_cast<int>(std::find(allowed.begin(), allowed.end(), true) - allowed.begin());
  }
  return Simulate(graph, cost, devices, device_of);
}

}  // namespace sluice
