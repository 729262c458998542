// The auto placer's scheduler (placement/auto_placer.h): earliest-start-time
// list scheduling with memory limits over a graph's colocation groups. It
// simulates one step on the devices, placing each node where it can start
// (and finish) first among the devices with room left for its group.
//
//   internal::Problem p;  // groups, their bytes and allowed devices, capacities
//   ASSIGN_OR_RETURN(internal::Schedule s, internal::ScheduleList(&p));
//   // s.device[node id], s.finish[node id], s.makespan
//
// A plain function of its problem: thread-compatible.
#ifndef SLUICE_PLACEMENT_LIST_SCHEDULER_H_
#define SLUICE_PLACEMENT_LIST_SCHEDULER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placement/cost_model.h"

namespace sluice {
namespace internal {

// A device's capacity when it has no memory limit.
inline constexpr int64_t kUnlimitedBytes = std::numeric_limits<int64_t>::max();

// What the list scheduler works on: nodes in colocation groups, each group
// either committed to a device already or free among its allowed devices.
struct Problem {
  const Graph* graph = nullptr;
  const CostModel* cost = nullptr;
  const std::vector<DeviceSpec>* devices = nullptr;
  std::vector<int> group_of;                 // per node id; -1 for removed ids
  std::vector<int> first_node;               // per group: its smallest node id
  std::vector<int> group_size;               // per group: member count
  std::vector<int64_t> group_bytes;          // per group: memory it needs
  std::vector<int> group_device;             // per group: committed device or -1
  std::vector<std::vector<bool>> allowed;    // per group, per device
  std::vector<int64_t> capacity;             // per device; kUnlimitedBytes when 0
  // Zero-FLOP nodes of free groups fed only by their own group (variables,
  // their read Identity, constants, placeholders) wait to follow their first
  // consumer instead of claiming a device at time 0.
  bool allow_floating = false;
};

// Where each node goes and when it finishes.
struct Schedule {
  std::vector<int> device;      // per node id
  std::vector<double> finish;   // per node id
  double makespan = 0;
};


// Places every node of `p`'s graph, committing free groups to devices
// (p->group_device); ResourceExhausted naming the group and the devices'
// room when a group fits on no device it may use.
absl::StatusOr<Schedule> ScheduleList(Problem* p);

// "1.50 MiB": bytes for messages.
std::string FormatBytes(int64_t bytes);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_PLACEMENT_LIST_SCHEDULER_H_
