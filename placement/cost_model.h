// Cost model for placement: what each node costs (FLOPs, bytes it outputs,
// bytes it keeps) from its inferred shapes, and what devices and links can do.
//
//   ASSIGN_OR_RETURN(std::vector<DeviceSpec> devs,
//                    ParseDeviceSpecs("CPU:0{mem=1GiB},CPU:1{mem=1GiB;gflops=20}"));
//   ASSIGN_OR_RETURN(CostModel cost, CostModel::Build(graph, {.unknown_dim = 64}));
//   double s = cost.ComputeSeconds(*node, devs[1]);
//
// Shapes come from the graph's shape inference; an unknown dimension (a batch
// left open in a Placeholder) counts as `unknown_dim`. FLOPs: 2*M*N*K for
// MatMul, 2*K*K*Cin*Cout per output pixel for Conv2D, one per output element
// (a few for transcendental ops) for element-wise ops and reductions, zero
// for shape-only ops (Reshape, Identity, Shape, Const ...). Persistent bytes:
// a variable's storage (optimizer slots are variables too).
//
// Thread-compatible value types; a CostModel is immutable once built.
#ifndef SLUICE_PLACEMENT_COST_MODEL_H_
#define SLUICE_PLACEMENT_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace sluice {

// What a device can do, for the placement algorithms and the visualizer.
struct DeviceSpec {
  std::string name;                     // full or partial device name, as parsed
  double flops_per_second = 20e9;       // sustained
  int64_t memory_bytes = 0;             // 0: unlimited
  double link_bytes_per_second = 5e9;   // to any other device
  double link_latency_seconds = 20e-6;  // per transfer
};

// A comma-separated list of device names (full "/job:w/replica:0/task:1/device:GPU:0",
// partial "/device:CPU:1", or short "CPU:1"), each optionally followed by
// {key=value;...} with keys mem (bytes, suffixes K/M/G/KiB/MiB/GiB), gflops, gbps
// (link GB/s) and latency_us. InvalidArgument naming the bad item and why.
absl::StatusOr<std::vector<DeviceSpec>> ParseDeviceSpecs(absl::string_view spec);

// The Assign that adopts `node`'s output `output` as a variable's storage
// (its only data consumer, reading it as the value, input 1), or null. Assign
// takes over a buffer nobody else holds (ops/state/state_kernels.cc), so such a
// value costs no memory beyond the variable's, provided it is computed on the
// variable's device: the auto placer keeps it there.
const Node* AdoptingAssign(const Node& node, int output);

struct NodeCost {
  double flops = 0;
  std::vector<int64_t> output_bytes;  // per output (ref outputs: the variable's size)
  int64_t persistent_bytes = 0;       // variables: their storage
  int64_t ref_output_bytes = 0;       // part of output_bytes that aliases a variable
                                      // (ref outputs; a value only an Assign reads)
  bool shapes_known = true;           // false when some size was guessed
  int64_t total_output_bytes() const;
  // What the node holds on its device during a step, counted conservatively
  // (no buffer is assumed freed before the step ends): its storage plus its
  // outputs, except ref outputs, which alias the variable's storage.
  int64_t memory_bytes() const {
    return persistent_bytes + total_output_bytes() - ref_output_bytes;
  }
};

struct CostModelOptions {
  int64_t unknown_dim = 32;  // size assumed for each unknown dimension
};

class CostModel {
 public:
  static absl::StatusOr<CostModel> Build(const Graph& graph, const CostModelOptions& options = {});

  // Cost of a node by id (Node::id()).
  const NodeCost& cost(int node_id) const { return costs_[node_id]; }
  const NodeCost& cost(const Node& node) const { return costs_[node.id()]; }
  // Seconds the node computes on `device`: flops / speed, at least 1 us for an
  // op that computes, 0 for one with no FLOPs (shape-only ops, variables).
  double ComputeSeconds(const Node& node, const DeviceSpec& device) const;
  // Seconds to move `bytes` from one device to another (0 on the same device).
  static double TransferSeconds(int64_t bytes, const DeviceSpec& from, const DeviceSpec& to);

 private:
  std::vector<NodeCost> costs_;  // indexed by node id
};

}  // namespace sluice

#endif  // SLUICE_PLACEMENT_COST_MODEL_H_
