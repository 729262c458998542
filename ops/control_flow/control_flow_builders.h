// tf.cond and tf.while_loop for C++ graphs: Cond and WhileLoop emit the
// nodes TensorFlow 1.x emits (Switch / Merge; Enter / Merge / LoopCond /
// Switch / Identity / NextIteration / Exit in a frame named
// "<name>/while_context"), so a graph built here and one TensorFlow wrote
// run alike, and GraphDefs written by either read back into the other.
//
//   // y = x > 0 ? x * x : -x
//   ASSIGN_OR_RETURN(std::vector<Output> y, ops::Cond(s, ops::Greater(s, x, 0.0f),
//       [&](const Scope& b) { return std::vector<Output>{ops::Square(b, x)}; },
//       [&](const Scope& b) { return std::vector<Output>{ops::Neg(b, x)}; }));
//
//   // i = 0; acc = 1; while (i < 10) { acc *= 2; ++i; }
//   ASSIGN_OR_RETURN(std::vector<Output> out, ops::WhileLoop(s, {i0, acc0},
//       [](const Scope& c, absl::Span<const Output> v) { return ops::Less(c, v[0], 10); },
//       [](const Scope& b, absl::Span<const Output> v) {
//         return std::vector<Output>{ops::Add(b, v[0], 1), ops::Mul(b, v[1], 2.0f)};
//       }));
//
// Branch and loop functions must build with the scope they are given: it
// carries the control dependency that puts constants into the branch or the
// loop (TensorFlow's pivot). They may use any tensor built before: it is
// passed in through a Switch (Cond) or a loop-invariant Enter (WhileLoop),
// as TensorFlow's contexts do. Loops and conds nest.
//
// Errors: the scope's first error, or InvalidArgument for branches or a
// body returning the wrong number of tensors. Thread-compatible (like Scope).
#ifndef SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_BUILDERS_H_
#define SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_BUILDERS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/scope.h"

namespace sluice {
namespace ops {

using BranchFn = std::function<std::vector<Output>(const Scope& scope)>;

// The outputs of `then_fn` when the scalar `pred` is true, else those of
// `else_fn` (same count and types). Only the branch taken runs.
absl::StatusOr<std::vector<Output>> Cond(
    const Scope& scope, const Output& pred, const BranchFn& then_fn, const BranchFn& else_fn,
    std::source_location loc = std::source_location::current());

using LoopCondFn = std::function<Output(const Scope& scope, absl::Span<const Output> vars)>;
using LoopBodyFn =
    std::function<std::vector<Output>(const Scope& scope, absl::Span<const Output> vars)>;

struct WhileLoopAttrs {
  std::string name = "while";       // made unique: while, while_1, ...
  int64_t parallel_iterations = 10;  // iterations that may run at once
  // Nodes the body builds that are not part of the loop (the while-loop
  // gradient's stack pushes into the forward loop): left as they are
  // instead of having their outer inputs passed in.
  std::function<bool(const Node&)> not_in_loop;
};

// Runs `body` while `cond` holds, starting from `loop_vars`; returns the
// final values. Each variable keeps its dtype (and should keep its shape).
absl::StatusOr<std::vector<Output>> WhileLoop(
    const Scope& scope, absl::Span<const Output> loop_vars, const LoopCondFn& cond,
    const LoopBodyFn& body, const WhileLoopAttrs& attrs = {},
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_BUILDERS_H_
