// Collective ops: all-reduce, broadcast and all-gather over a group of
// devices, in one process or many (runtime/collective). TensorFlow's op
// names and attrs, plus `group_devices`, the members' full device names in
// rank order (TensorFlow resolves membership at run time through a group
// leader; naming the members in the graph needs no extra round trip and lets
// errors name the peer).
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ops::CollectiveSpec spec{.group_key = 1, .instance_key = 1,
//                            .group_devices = {cpu0, cpu1}};
//   Output g0 = ops::AllReduce(s.WithDevice(cpu0), grad0, ReduceOp::kMean, spec);
//   Output g1 = ops::AllReduce(s.WithDevice(cpu1), grad1, ReduceOp::kMean, spec);
//
// Ops (attrs T in {float, double, int32, int64}, group_size, group_key,
// instance_key, group_devices: list(string), communication_hint: string =
// "auto" ("ring", "nccl"), timeout_seconds: float = 0 (0: 60 s)):
//   CollectiveReduce(input: T) -> data: T
//       [merge_op: "Add", final_op: "Id" | "Div", subdiv_offsets: list(int)]
//       every member's data is the sum (Div: the mean) of all inputs.
//   CollectiveBcastSend(input: T) -> data: T   [shape]   the source member
//   CollectiveBcastRecv() -> data: T           [shape, source_rank: int = 0]
//       the others; source_rank is the sender's index in group_devices.
//   CollectiveGather(input: T) -> data: T      [shape]   inputs concatenated
//       along dim 0 in rank order.
// Each member runs on its own device and finds its rank by its device's name
// in group_devices (a name without "/job:" is completed with the device's
// task). Kernels are asynchronous (they hold no thread while peers are
// awaited) and exist for CPU and GPU.
//
// Gradients: CollectiveReduce's gradient is the same all-reduce of the
// incoming gradient (instance_key + kGradientInstanceOffset), so a model
// that all-reduces activations differentiates through it; broadcast and
// gather have none.
//
// Errors: InvalidArgument at build time for an empty group or a group_size
// that disagrees; at run time a device that is not in group_devices
// (naming both), the executor's errors (runtime/collective/collective_executor.h)
// and FailedPrecondition when the caller gave the executor no
// CollectiveExecutor. Thread-safety: building is thread-compatible; kernels
// are thread-safe.
#ifndef SLUICE_OPS_COLLECTIVE_COLLECTIVE_OPS_H_
#define SLUICE_OPS_COLLECTIVE_COLLECTIVE_OPS_H_

#include <cstdint>
#include "base/source_location.h"
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/collective/collective.h"
#include "runtime/kernel_registry.h"

namespace sluice {

inline constexpr int64_t kGradientInstanceOffset = 1 << 20;

absl::Status RegisterCollectiveOps(OpRegistry* ops);
absl::Status RegisterCollectiveGradients(OpRegistry* ops);
void RegisterCollectiveKernels(KernelRegistry* kernels);  // CPU and GPU
// The same kernels, for `types` on a device type of its own (a test's fake
// device: every argument in the device's memory).
void RegisterCollectiveKernelsOn(KernelRegistry* kernels, const std::string& device_type,
                                 const std::vector<DataType>& types);

namespace ops {

struct CollectiveSpec {
  int64_t group_key = 0;
  int64_t instance_key = 0;
  std::vector<std::string> group_devices;  // rank order
  std::string communication_hint = "auto";
  float timeout_seconds = 0;
  // Broadcast: the sender's index in group_devices (BroadcastRecv's
  // source_rank attr; the receivers must know whom the ring starts from).
  int source_rank = 0;
};

Output AllReduce(const Scope& scope, Input x, ReduceOp op, const CollectiveSpec& spec,
                 std::source_location loc = std::source_location::current());
// On the source member.
Output BroadcastSend(const Scope& scope, Input x, const CollectiveSpec& spec,
                     std::source_location loc = std::source_location::current());
// On every other member: the source's value of `dtype` and `shape`.
Output BroadcastRecv(const Scope& scope, DataType dtype, const TensorShape& shape,
                     const CollectiveSpec& spec,
                     std::source_location loc = std::source_location::current());
Output AllGather(const Scope& scope, Input x, const CollectiveSpec& spec,
                 std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_COLLECTIVE_COLLECTIVE_OPS_H_
