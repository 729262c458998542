// TensorFlow's stacks: StackV2, StackPushV2, StackPopV2 and StackCloseV2, as
// the gradient of a while loop uses them (the forward loop pushes the values
// its gradient needs, the backward loop pops them in reverse).
//
//   Output h = ops::StackV2(s, DT_FLOAT);             // a resource handle
//   Output pushed = ops::StackPushV2(s, h, x);         // x, once pushed
//   Output top = ops::StackPopV2(s, h, DT_FLOAT);      // the last pushed
//   Node* closed = ops::StackCloseV2(s, h);
//
// Each run of a StackV2 makes a new stack in its device's ResourceMgr, in
// the step's container (as TensorFlow's per-step container keeps them), and
// outputs its handle, a DT_RESOURCE scalar; the stack lives until a
// StackCloseV2 of that handle or the end of the step, whichever is first
// (a graph need not close its stacks). Errors: popping an empty
// stack or a closed one is InvalidArgument / NotFound naming the stack;
// pushing past max_size (when >= 0) is InvalidArgument; a pushed value of
// another dtype than elem_type is InvalidArgument.
//
// Thread-safety: graph building is thread-compatible (like Scope); the
// kernels are thread-safe (one mutex per stack).
#ifndef SLUICE_OPS_CONTROL_FLOW_STACK_OPS_H_
#define SLUICE_OPS_CONTROL_FLOW_STACK_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterStackOps(OpRegistry* ops);
void RegisterStackKernels(KernelRegistry* kernels);
// The same for a device with its own memory (a GPU): handles and max_size
// in host memory; elements of `device_types` stay in device memory (a
// pushed tensor is kept, not copied: swap_memory is not honoured), int32
// elements in host memory.
void RegisterStackDeviceKernels(KernelRegistry* kernels, const std::string& device_type,
                                const std::vector<DataType>& device_types);

namespace ops {

struct StackAttrs {
  int max_size = -1;  // -1: unbounded
  std::string stack_name;
};
Output StackV2(const Scope& scope, DataType elem_type, const StackAttrs& attrs = {},
               std::source_location loc = std::source_location::current());
Output StackPushV2(const Scope& scope, const Input& handle, const Input& elem,
                   std::source_location loc = std::source_location::current());
Output StackPopV2(const Scope& scope, const Input& handle, DataType elem_type,
                  std::source_location loc = std::source_location::current());
Node* StackCloseV2(const Scope& scope, const Input& handle,
                   std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_STACK_OPS_H_
