// TensorFlow's SymbolicGradient: the gradient of a function (or of an op)
// as a node, what TensorFlow 1's tf.gradients writes for a call of a
// function.Defun without a Python gradient.
//
//   SymbolicGradient(input: Tin) -> output: Tout     attrs Tin, Tout: list(type), f: func
//
// The inputs are f's N arguments followed by one gradient per result of f
// (dL/dy); the N outputs are dL/dx, one per argument, shaped as it. `f`
// names a library function or an op (with its attrs).
//
// No kernel: the node is lowered (OpDef::lower_fn, as sessions and
// AddGradients lower nodes before placement) into a call of f on Identity
// copies of its arguments, inlined, and the gradient AddGradients builds
// for that call with the given dL/dy (a GradientDef the library gives f is
// used, as in TensorFlow); an argument no result depends on gets zeros. The
// node stays as the IdentityN of the gradients. So the forward pass runs
// again, as TensorFlow's SymbolicGradient kernel runs it.
//
//   std::vector<Output> dx = ops::SymbolicGradient(s, {x, w, dy}, f, {DT_FLOAT, DT_FLOAT});
//
// Errors (lowering, naming the node): InvalidArgument when f's results
// are not as many as the gradients given, or Tout is not as long as f's
// arguments; FailedPrecondition for an op on the path without a gradient.
#ifndef SLUICE_OPS_FUNCTIONAL_SYMBOLIC_GRADIENT_H_
#define SLUICE_OPS_FUNCTIONAL_SYMBOLIC_GRADIENT_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"

namespace sluice {

// The op and its lowering.
absl::Status RegisterSymbolicGradientOp(OpRegistry* ops);

namespace ops {

// `inputs`: f's arguments, then one gradient per result of f; `tout`: the
// arguments' types.
std::vector<Output> SymbolicGradient(const Scope& scope, absl::Span<const Output> inputs,
                                     const NameAttrList& f, const std::vector<DataType>& tout,
                                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_FUNCTIONAL_SYMBOLIC_GRADIENT_H_
