// Control flow for executor tests (testonly), against a private registry:
// Enter, Exit, NextIteration, Switch, Merge and LoopCond with TensorFlow's
// names, attrs and ControlFlowRoles, Less and Identity, and kernels that
// forward as the real ones do (those live in ops/, a layer above runtime/),
// plus BuildTestLoop, which wires a while loop the way TensorFlow 1.x does.
//
//   OpRegistry ops;  KernelRegistry kernels;
//   RETURN_IF_ERROR(RegisterTestControlFlowOps(&ops));
//   RegisterTestControlFlowKernels(&kernels);
//   // while (x < limit) x = Inc(x)
//   ASSIGN_OR_RETURN(std::vector<Output> out, BuildTestLoop(
//       s, {x}, {limit},
//       [](const Scope& c, absl::Span<const Output> v) { return Less(c, v[0], v[1]); },
//       [](const Scope& b, absl::Span<const Output> v) {
//         return std::vector<Output>{b.Op("Inc").Input(v[0]).Finalize1()};
//       }));
//
// Thread-compatible (like Scope); the kernels are thread-safe.
#ifndef SLUICE_RUNTIME_EXECUTOR_TESTUTIL_H_
#define SLUICE_RUNTIME_EXECUTOR_TESTUTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Registers the ops above (no Ref forms); Less is float only.
absl::Status RegisterTestControlFlowOps(OpRegistry* ops);
void RegisterTestControlFlowKernels(KernelRegistry* kernels);

// Less(a, b): a bool scalar.
Output Less(const Scope& s, const Output& a, const Output& b);

struct TestLoopOptions {
  std::string frame = "loop";
  int64_t parallel_iterations = 10;
};

using TestLoopCondFn = std::function<Output(const Scope& s, absl::Span<const Output> vars)>;
using TestLoopBodyFn =
    std::function<std::vector<Output>(const Scope& s, absl::Span<const Output> vars)>;

// `vars` enter through Enter, `invariants` through constant Enters; `cond`
// and `body` see the loop variables followed by the invariants (Merge
// outputs and entered invariants for `cond`; Switch's true outputs through
// Identity and the same invariants for `body`). Returns the Exits' outputs
// (one per variable). Errors: the scope's first error, or InvalidArgument
// when the body returns the wrong number of values.
absl::StatusOr<std::vector<Output>> BuildTestLoop(const Scope& s, absl::Span<const Output> vars,
                                                  absl::Span<const Output> invariants,
                                                  const TestLoopCondFn& cond,
                                                  const TestLoopBodyFn& body,
                                                  const TestLoopOptions& options = {});

}  // namespace sluice

#endif  // SLUICE_RUNTIME_EXECUTOR_TESTUTIL_H_
