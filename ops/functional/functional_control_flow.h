// TensorFlow's functional control flow, what TF2's tf.cond, tf.switch_case
// and tf.while_loop write into a graph: If and StatelessIf, Case and
// StatelessCase, While and StatelessWhile (TensorFlow's names, inputs and
// attrs), and their lowering (OpDef::lower_fn) into TensorFlow 1.x control
// flow, as TensorFlow's LowerFunctionalOpsPass does:
//   If(cond, input; then_branch, else_branch): a tf.cond (ops::Cond) on
//     `cond` whose true branch calls then_branch and false branch calls
//     else_branch on the inputs (each through a Switch), a Merge per
//     output. Only the branch taken runs.
//   Case(branch_index, input; branches): conds nested on branch_index == 0,
//     1, ..., N-2; an index outside [0, N) takes the last branch, as in
//     TensorFlow.
//   While(input; cond, body): a tf.while_loop (ops::WhileLoop: Enter,
//     Merge, LoopCond, Switch, Exit, NextIteration in a frame of its own)
//     whose condition calls `cond` and whose body calls `body`.
// The inliner lowers these nodes and inlines the calls lowering leaves
// (sessions do it before placement; AddGradients on the path it
// differentiates), so the loop runs in the executor's frames, is placed as
// a TensorFlow 1.x loop is (on a GPU its predicate in host memory), is
// differentiated as a tf.while_loop, and a step holding it can be recorded
// whole. The node itself becomes the IdentityN of its results (a NoOp when
// there are none) that also waits for the branch taken or the whole loop,
// so that a control dependency on it still means "it ran"; the node's
// control inputs gate its inputs; a While's condition and body finish what
// they do besides their results (writes, control outputs) before the
// iteration ends. A condition must be a scalar: a bool, or a number that
// counts as true when it is not zero (TensorFlow's rule that a non-scalar
// counts as true when it is not empty is not supported: the Switch fails at
// run time, naming the node).
//
//   ASSIGN_OR_RETURN(NameAttrList cond, DefineFunction(s, "less_than_10", ...));
//   std::vector<Output> out = ops::While(s, {i, acc}, cond, body);
//
// The ops have no kernels: a graph run without inlining (an Executor built
// by hand) fails naming the node. Errors of lowering name the node:
// InvalidArgument for a While without inputs or a condition of a type that
// has no truth value (string, resource, variant); those of inlining
// (graph/function_inline.h), such as a branch whose types differ from the
// node's. A failed lowering leaves the node without its inputs: the graph is
// then only good for reporting the error. Thread-compatible, like Scope.
#ifndef SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_CONTROL_FLOW_H_
#define SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_CONTROL_FLOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"

namespace sluice {

// The six ops with their shape functions (output_shapes when given; a
// While's inputs' shapes otherwise) and lowerings.
absl::Status RegisterFunctionalControlFlowOps(OpRegistry* ops);

namespace ops {

// StatelessIf, StatelessCase and StatelessWhile when set: TensorFlow's
// promise that the functions have no side effects (both forms run alike).
struct FunctionalAttrs {
  bool stateless = false;
  int64_t parallel_iterations = 10;  // While only
};

std::vector<Output> If(const Scope& scope, const Output& cond, absl::Span<const Output> inputs,
                       const NameAttrList& then_branch, const NameAttrList& else_branch,
                       const std::vector<DataType>& tout, const FunctionalAttrs& attrs = {},
                       std::source_location loc = std::source_location::current());

std::vector<Output> Case(const Scope& scope, const Output& branch_index,
                         absl::Span<const Output> inputs,
                         const std::vector<NameAttrList>& branches,
                         const std::vector<DataType>& tout, const FunctionalAttrs& attrs = {},
                         std::source_location loc = std::source_location::current());

// `cond` takes the loop variables and returns a scalar; `body` takes them
// and returns their next values (same types).
std::vector<Output> While(const Scope& scope, absl::Span<const Output> inputs,
                          const NameAttrList& cond, const NameAttrList& body,
                          const FunctionalAttrs& attrs = {},
                          std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_FUNCTIONAL_FUNCTIONAL_CONTROL_FLOW_H_
