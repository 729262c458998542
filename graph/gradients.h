// Reverse-mode automatic differentiation over a Graph.
//
//   ASSIGN_OR_RETURN(std::vector<Output> grads,
//                    AddGradients(scope, {loss}, {w1, b1, w2, b2}));
//
// Adds nodes computing d(sum of ys)/d(x) for each x, using each op's
// registered gradient function (OpDef::grad_fn). `grad_ys`, when given, seeds
// each y's gradient instead of ones. Only the nodes on a path from some x to
// some y are differentiated; an x no y depends on gets an invalid Output
// (callers decide whether that is an error). Gradients reaching one tensor
// from several consumers are summed with AddN (sparse ones: concatenated).
// The gradient nodes of a node that asked for a device ask for the same
// device (TensorFlow's
// colocate_gradients_with_ops), so a model-parallel backward pass runs where
// its forward pass did; the others take the scope's device.
//
// Function calls between the ys and the xs (graph/function_inline.h) are
// inlined first, so the gradient flows through their bodies (TensorFlow's
// tf.gradients through a function); each call node stays, as the IdentityN
// of its results, so Outputs of it stay valid. A call of a function the
// library gives a gradient function (GradientDef) is not inlined: its
// gradient is a call of that function with the call's inputs and one
// gradient per output (zeros where none flows), as in TensorFlow.
// Functional If, Case and While nodes on the path are lowered first
// (OpDef::lower_fn), so their gradient is that of the conds and while loops
// they become.
//
// Errors: FailedPrecondition naming the op of a node on the path that has no
// gradient function (and is not declared non-differentiable); errors of the
// gradient functions, with the node's name.
//
// Thread-compatible: it adds nodes to the scope's graph, so no other thread
// may build in that graph meanwhile. The new nodes belong to the graph.
#ifndef SLUICE_GRAPH_GRADIENTS_H_
#define SLUICE_GRAPH_GRADIENTS_H_

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/indexed_slices.h"
#include "graph/scope.h"

namespace sluice {

absl::StatusOr<std::vector<Output>> AddGradients(const Scope& scope,
                                                 absl::Span<const Output> ys,
                                                 absl::Span<const Output> xs,
                                                 absl::Span<const Output> grad_ys = {});

// AddGradients that keeps sparse gradients sparse (graph/indexed_slices.h):
// an x read by gathers gets IndexedSlices of the rows they touched. The
// optimizers (ops/training/optimizers.h) apply such a gradient to those rows
// only. AddGradients is this with every sparse result made dense.
absl::StatusOr<std::vector<Gradient>> AddGradientsWithSlices(const Scope& scope,
                                                             absl::Span<const Output> ys,
                                                             absl::Span<const Output> xs,
                                                             absl::Span<const Output> grad_ys = {});

// AddGradients over the part of the graph that does not pass through
// `boundary` nodes (a while loop's body without its Merges and Switches: the
// while-loop gradient differentiates the body with it).
absl::StatusOr<std::vector<Output>> AddGradientsWithin(
    const Scope& scope, absl::Span<const Output> ys, absl::Span<const Output> xs,
    absl::Span<const Output> grad_ys, const absl::flat_hash_set<const Node*>& boundary);

}  // namespace sluice

#endif  // SLUICE_GRAPH_GRADIENTS_H_
