// Function calls as ops (TensorFlow's names and attrs): PartitionedCall and
// StatefulPartitionedCall (inputs `args: Tin`, outputs `output: Tout`,
// attrs f: func, config, config_proto, executor_type), and IdentityN (the
// node an inlined call leaves behind: graph/function_inline.h), with their
// CPU kernels, IdentityN's gradient and graph-building wrappers.
//
//   ASSIGN_OR_RETURN(NameAttrList f, DefineFunction(s, "scale", ...));  // graph/function_builder.h
//   std::vector<Output> y = ops::PartitionedCall(s, {x}, f, {DT_FLOAT});
//   std::vector<Output> z = ops::CallFunction(s, f, {x});   // a node of op "scale"
//
// A session inlines every call before placement, so these kernels run only
// where nothing inlined the call (a graph handed to an Executor as is). The
// kernel instantiates `f` at construction through the executor's
// FunctionRuntime (runtime/function_runtime.h) and runs it on the node's
// device without holding a thread.
//
// Errors: FailedPrecondition when the executor has no FunctionRuntime;
// instantiation errors (naming the function and its node); InvalidArgument
// when Tin/Tout differ from the function's types. Thread-safety: kernels
// are thread-safe; wrappers are thread-compatible (like Scope).
#ifndef SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_OPS_H_
#define SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_OPS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterFunctionalOps(OpRegistry* ops);
absl::Status RegisterFunctionalGradients(OpRegistry* ops);
void RegisterFunctionalKernels(KernelRegistry* kernels);

namespace ops {

struct PartitionedCallAttrs {
  bool stateful = false;  // StatefulPartitionedCall
  std::string config_proto;
  std::string executor_type;
};
// One Output per type of `tout` (invalid ones on error, recorded in the scope).
std::vector<Output> PartitionedCall(const Scope& scope, absl::Span<const Output> args,
                                    const NameAttrList& f, const std::vector<DataType>& tout,
                                    const PartitionedCallAttrs& attrs = {},
                                    std::source_location loc = std::source_location::current());
// A node whose op is the library function `f.name()`, with f's attrs.
std::vector<Output> CallFunction(const Scope& scope, const NameAttrList& f,
                                 absl::Span<const Output> args,
                                 std::source_location loc = std::source_location::current());
std::vector<Output> IdentityN(const Scope& scope, absl::Span<const Output> inputs,
                              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_OPS_H_
