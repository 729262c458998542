// TensorFlow 1.x control-flow ops: Switch, Merge, Enter, Exit, NextIteration,
// LoopCond, ControlTrigger and their Ref forms, with their CPU kernels and
// typed wrappers. The kernels only forward values; what makes them control
// flow is the executor (runtime/executor.h): the output a Switch does not
// take is dead, a dead input makes a node dead (Merge waits for a live one),
// Enter starts a frame that runs once per loop iteration, NextIteration
// hands a value to the next iteration and Exit hands it back.
//
//   ops::SwitchOutputs sw = ops::Switch(s, x, pred);         // x to one side
//   Output y = ops::Merge(s, {ops::Neg(s, sw.output_false),
//                             ops::Square(s, sw.output_true)}).output;
//
// Most code builds these through ops/control_flow/control_flow_builders.h (Cond,
// WhileLoop), which lays them out as TensorFlow does.
//
// Thread-safety: graph building is thread-compatible (like Scope); kernels
// are thread-safe.
#ifndef SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_OPS_H_
#define SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterControlFlowOps(OpRegistry* ops);
void RegisterControlFlowKernels(KernelRegistry* kernels);
// The same kernels for a device with its own memory (a GPU), as TensorFlow
// places loops there: values of `device_types` stay in device memory; the
// predicate, Merge's value_index, LoopCond and values of int32 (loop
// counters), string and resource (handles) stay in host memory. So a loop
// whose counters are computed by host kernels copies nothing per iteration.
void RegisterControlFlowDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                      const std::vector<DataType>& device_types);

namespace ops {

// Switch (RefSwitch for a ref `data`): `data` comes out of output_true when
// the scalar `pred` is true, else out of output_false; the other is dead.
struct SwitchOutputs {
  Output output_false;
  Output output_true;
};
SwitchOutputs Switch(const Scope& scope, const Input& data, const Input& pred,
                     std::source_location loc = std::source_location::current());

// Merge (RefMerge for ref inputs): the first live input, and its index.
struct MergeOutputs {
  Output output;
  Output value_index;  // int32 scalar
};
MergeOutputs Merge(const Scope& scope, absl::Span<const Output> inputs,
                   std::source_location loc = std::source_location::current());

struct EnterAttrs {
  bool is_constant = false;  // a loop invariant: every iteration sees it
  int64_t parallel_iterations = 10;
};
// Enter (RefEnter): `data` into the frame `frame_name`.
Output Enter(const Scope& scope, const Input& data, absl::string_view frame_name,
             const EnterAttrs& attrs = {}, std::source_location loc = std::source_location::current());
// Exit (RefExit): `data` out of its frame, to the parent frame.
Output Exit(const Scope& scope, const Input& data, std::source_location loc = std::source_location::current());
// NextIteration (RefNextIteration): `data` to the next iteration.
Output NextIteration(const Scope& scope, const Input& data,
                     std::source_location loc = std::source_location::current());
// LoopCond: the boolean scalar that decides whether a loop goes on.
Output LoopCond(const Scope& scope, const Input& pred, std::source_location loc = std::source_location::current());
// ControlTrigger: a no-op that runs even when its control inputs are dead.
Node* ControlTrigger(const Scope& scope, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_OPS_H_
