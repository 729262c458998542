// PlacementSummary: what a placement costs per device (ops, memory, FLOPs)
// and which tensors cross devices, for the visualizer's legend and its
// Send/Recv edges.
//
//   ASSIGN_OR_RETURN(CostModel cost, CostModel::Build(graph));
//   ASSIGN_OR_RETURN(PlacementSummary s, SummarizePlacement(graph, device_of, specs, cost));
//   for (const DeviceSummary& d : s.devices) ... FormatBytes(d.memory_bytes()) ...
//   for (const Transfer& t : s.transfers) ... DescribeTransfer(t) ...  // "float [?,256] ~32 KiB"
//
// Memory of a device: the persistent bytes of its nodes (variables) plus the
// bytes of their outputs, counting a reference output (a variable's) only
// once, as its persistent bytes. FLOPs: the cost model's, per step.
//
// Transfers mirror the partitioner: one Send/Recv pair per (tensor,
// destination device), however many nodes on that device consume it.
// Data edges only; a control edge across devices carries no tensor.
//
// Thread-compatible value types; the summary points into the graph, which
// must outlive it.
#ifndef SLUICE_TOOLS_PLACEMENT_SUMMARY_H_
#define SLUICE_TOOLS_PLACEMENT_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "placement/cost_model.h"

namespace sluice {

struct DeviceSummary {
  std::string device;
  int op_count = 0;
  int64_t persistent_bytes = 0;
  int64_t output_bytes = 0;
  double flops = 0;
  int64_t memory_limit = 0;  // from the device list; 0 when unknown or unlimited
  int64_t memory_bytes() const { return persistent_bytes + output_bytes; }
};

// One Send/Recv pair: a tensor and the device it is sent to.
struct Transfer {
  const Node* src = nullptr;
  int src_output = 0;
  std::string src_device;
  std::string dst_device;
  std::vector<const Node*> consumers;  // on dst_device, ascending id
  DataType dtype = DT_INVALID;         // without _REF
  TensorShape shape;
  int64_t bytes = 0;  // per step; guessed for unknown dims (see CostModelOptions)
};

struct PlacementSummary {
  // The listed devices first, in list order (also those with no nodes), then
  // other devices by name, kUnplacedDevice last.
  std::vector<DeviceSummary> devices;
  // Ordered by source node id, output, then destination device.
  std::vector<Transfer> transfers;
  int64_t transfer_bytes() const;
};

// `device_of` is indexed by node id; `listed_devices` are the canonical
// names of the device list (parallel to `specs`, which give memory limits),
// both empty when there is none. Never fails for a consistent input;
// InvalidArgument when `listed_devices` and `specs` differ in length.
absl::StatusOr<PlacementSummary> SummarizePlacement(const Graph& graph,
                                                    absl::Span<const std::string> device_of,
                                                    absl::Span<const std::string> listed_devices,
                                                    absl::Span<const DeviceSpec> specs,
                                                    const CostModel& cost);

// "0 B", "512 B", "1.5 KiB", "32 MiB", "2.25 GiB" (three significant digits).
std::string FormatBytes(int64_t bytes);
// "0 FLOP", "640 FLOP", "12.3 kFLOP", "1.5 MFLOP", "3.2 GFLOP", "1.1 TFLOP".
std::string FormatFlops(double flops);
// "float [?,256] ~32 KiB" ('~': the size assumes a value for unknown dims),
// with " → 3 consumers" appended when more than one node receives it.
std::string DescribeTransfer(const Transfer& transfer);

}  // namespace sluice

#endif  // SLUICE_TOOLS_PLACEMENT_SUMMARY_H_
